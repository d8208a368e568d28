//! `layout.constant`: a layout value from a layout attribute of any notation. Pretty form
//! `%l = layout.constant #layout.cute<(4,2):(2,1)>`; the folded results of the algebra ops become these.

use super::attr::LayoutAttr;
use super::layout_type::{is_layout_type, layout_type};
use crate::ir::asm::{CustomParser, ParsedOp};
use crate::ir::print::OpPrinter;
use crate::ir::verify::op_error;
use crate::ir::{
    Arity, Attr, AttrId, AttrKind, AttrSpec, Context, Diagnostic, Interners, OpId, OpInfo, OpTrait, Syntax,
};
use std::fmt;

/// The registration of `layout.constant`.
pub const INFO: OpInfo = OpInfo {
    results: Arity::Exact(1),
    traits: &[OpTrait::Pure, OpTrait::ConstantLike],
    attrs: &[AttrSpec { name: "value", kind: AttrKind::Any, optional: false, default: None }],
    verify: Some(verify),
    syntax: Syntax::Custom { parse, print },
    ..OpInfo::new("layout.constant", "a layout value given by a layout attribute")
};

/// The layout an attribute holds, if it is a layout attribute.
pub fn layout_of(ctx: &Interners, attr: AttrId) -> Option<&LayoutAttr> {
    match ctx.attr_data(attr) {
        Attr::Dialect(d) => d.downcast::<LayoutAttr>(),
        _ => None,
    }
}

fn verify(ctx: &Context, op: OpId) -> Result<(), Diagnostic> {
    let value = ctx.op_attr(op, "value").and_then(|a| layout_of(ctx, a));
    if value.is_none() {
        return Err(op_error(ctx, op, "value must be a layout attribute (#layout.cute, #layout.xla, ...)"));
    }
    if !is_layout_type(ctx, ctx.body.value_type(ctx.body.result(op, 0))) {
        return Err(op_error(ctx, op, "result must be !layout.layout"));
    }
    Ok(())
}

fn parse<'s>(p: &mut CustomParser<'_, 's>) -> Result<ParsedOp<'s>, Diagnostic> {
    let mut op = ParsedOp::default();
    p.attr_dict(&mut op);
    let value = p.typed_attr()?;
    p.expect_end()?;
    let key = p.ctx().sym("value");
    op.props.push((key, value));
    let ty = layout_type(p.ctx());
    op.result_types.push(ty);
    Ok(op)
}

fn print(p: &mut OpPrinter<'_, '_>, op: OpId) -> fmt::Result {
    let ctx = p.ctx();
    let value = ctx.op_attr(op, "value").ok_or(fmt::Error)?;
    if layout_of(ctx, value).is_none() || !is_layout_type(ctx, ctx.body.value_type(ctx.body.result(op, 0))) {
        return Err(fmt::Error);
    }
    p.attr_dict(op, &["value"])?;
    p.write(" ");
    p.attr(value)
}
