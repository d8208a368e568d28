//! The `layout` dialect: where the elements of a logical tensor sit in a linear buffer, as attributes in four
//! published notations (CuTe layouts, Furiosa mapping expressions, XLA tiled layouts, CK tensor descriptors), the
//! `!layout.layout` type and the ops of the algebra. The notations' data, their one exact meaning and the algebra
//! are the [`crate::layout`] library; this dialect holds their attribute syntax, attributes, type and ops.

pub mod algebra_ops;
pub mod attr;
pub mod constant;
pub mod layout_type;
pub mod lexer;
pub mod syntax;
pub mod tensor_ops;

use crate::interfaces::layout::LayoutInterface;
use crate::ir::builder::OpState;
use crate::ir::dialect_data::DialectData;
use crate::ir::registry::ItemError;
use crate::ir::{Attr, AttrId, Context, DialectInfo, Interners, Loc, Registry, TypeId};
use attr::LayoutAttr;
use std::sync::Arc;

/// Registers the `layout` dialect.
pub fn register(registry: &mut Registry) {
    registry.register_dialect(DialectInfo {
        name: "layout",
        summary: "tensor layouts in buffers: CuTe, Furiosa, XLA and CK notations with one algebra",
        parse_type: Some(parse_type),
        parse_attr: Some(parse_attr),
        materialize_constant: Some(materialize_constant),
    });
    registry.attach_payload_interface::<LayoutAttr, dyn LayoutInterface>(&attr::LayoutAttrInterface);
    registry.register_op(constant::INFO);
    for info in algebra_ops::ALL {
        registry.register_op(info);
    }
    registry.register_op(algebra_ops::CONVERT);
    for info in [tensor_ops::ATTACH, tensor_ops::VIEW, tensor_ops::COPY] {
        registry.register_op(info);
    }
}

fn parse_type(ctx: &mut Context, name: &str, body: Option<&str>) -> Result<TypeId, ItemError> {
    match (name, body) {
        ("layout.layout", None) => Ok(layout_type::layout_type(ctx)),
        ("layout.layout", Some(_)) => Err(ItemError::new("!layout.layout takes no parameters")),
        _ => Err(ItemError::new(format!("unknown type '{name}' in dialect 'layout'"))),
    }
}

/// Folded layouts become `layout.constant` ops.
fn materialize_constant(ctx: &mut Interners, value: AttrId, ty: TypeId, loc: Loc) -> Option<OpState> {
    constant::layout_of(ctx, value)?;
    if !layout_type::is_layout_type(ctx, ty) {
        return None;
    }
    Some(OpState::new(ctx, "layout.constant", loc).results(&[ty]).prop(ctx, "value", value))
}

fn parse_attr(ctx: &mut Context, name: &str, body: Option<&str>) -> Result<AttrId, ItemError> {
    let body = body.ok_or_else(|| ItemError::new(format!("#{name} needs a body in angle brackets")))?;
    let value = match name {
        "layout.cute" => LayoutAttr::Cute(syntax::parse_cute(body)?),
        "layout.furiosa" => LayoutAttr::Furiosa(syntax::parse_furiosa(body)?),
        "layout.ck" => LayoutAttr::Ck(syntax::parse_ck(body)?),
        "layout.xla" => LayoutAttr::Xla(syntax::parse_xla(body)?),
        _ => return Err(ItemError::new(format!("unknown attribute '{name}' in dialect 'layout'"))),
    };
    value.validate().map_err(|e| ItemError::new(e.0))?;
    Ok(ctx.attr(Attr::Dialect(DialectData(Arc::new(value)))))
}
