//! `arith.constant`: a scalar or dense constant. Pretty form `arith.constant 42 : i32`.

use crate::ir::asm::{AsmItem, CustomParser, ParsedOp};
use crate::ir::print::OpPrinter;
use crate::ir::verify::op_error;
use crate::ir::{Arity, Attr, AttrKind, AttrSpec, Context, Diagnostic, OpId, OpInfo, OpTrait, Syntax};
use std::fmt;

/// The registration of `arith.constant`.
pub const INFO: OpInfo = OpInfo {
    results: Arity::Exact(1),
    traits: &[OpTrait::Pure, OpTrait::ConstantLike],
    attrs: &[AttrSpec { name: "value", kind: AttrKind::Any, optional: false, default: None }],
    verify: Some(verify),
    syntax: Syntax::Custom { parse, print },
    ..OpInfo::new("arith.constant", "an integer, float or dense constant")
};

crate::define_op! {
    /// A typed `arith.constant`.
    pub struct ConstantOp = "arith.constant";
    operands {}
    results { result: 0 }
    props { value: "value" }
}

fn value_type(ctx: &Context, op: OpId) -> Option<crate::ir::TypeId> {
    match ctx.attr_data(ctx.op_attr(op, "value")?) {
        Attr::Int { ty, .. } | Attr::Float { ty, .. } | Attr::Dense { ty, .. } => Some(*ty),
        _ => None,
    }
}

fn verify(ctx: &Context, op: OpId) -> Result<(), Diagnostic> {
    let result = ctx.body.value_type(ctx.body.result(op, 0));
    match value_type(ctx, op) {
        Some(t) if t == result => Ok(()),
        Some(_) => Err(op_error(ctx, op, "value type does not match result type")),
        None => Err(op_error(ctx, op, "value must be an integer, float or dense elements attribute")),
    }
}

fn parse<'s>(p: &mut CustomParser<'_, 's>) -> Result<ParsedOp<'s>, Diagnostic> {
    let mut op = ParsedOp::default();
    p.attr_dict(&mut op);
    if !matches!(p.peek(), Some(AsmItem::Attr(..) | AsmItem::Punct("-", _))) {
        return Err(p.expected("constant value"));
    }
    let value = p.typed_attr()?;
    let ty = match p.ctx().attr_data(value) {
        Attr::Int { ty, .. } | Attr::Float { ty, .. } | Attr::Dense { ty, .. } => *ty,
        _ => return Err(Diagnostic::error(p.op_loc, "expected a typed constant value")),
    };
    p.expect_end()?;
    let key = p.ctx().sym("value");
    op.props.push((key, value));
    op.result_types.push(ty);
    Ok(op)
}

fn print(p: &mut OpPrinter<'_, '_>, op: OpId) -> fmt::Result {
    let ctx = p.ctx();
    let value = ctx.op_attr(op, "value").ok_or(fmt::Error)?;
    if value_type(ctx, op) != Some(ctx.body.value_type(ctx.body.result(op, 0))) {
        return Err(fmt::Error);
    }
    p.attr_dict(op, &["value"])?;
    p.write(" ");
    p.attr(value)
}
