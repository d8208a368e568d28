//! The `layout` dialect: where the elements of a logical tensor sit in a linear buffer, read in four published
//! notations (CuTe layouts, Furiosa mapping expressions, XLA tiled layouts, CK tensor descriptors), given one
//! exact meaning ([`repr::Layout`]) and one algebra.

pub mod attr;
pub mod canonical;
pub mod ck;
pub mod cute;
pub mod cute_algebra;
pub mod furiosa;
pub mod furiosa_lower;
pub mod lexer;
pub mod repr;
pub mod syntax;
pub mod table;
pub mod xla;

use crate::ir::dialect_data::DialectData;
use crate::ir::registry::ItemError;
use crate::ir::{Attr, AttrId, Context, DialectInfo, Registry};
use attr::LayoutAttr;
use std::sync::Arc;

/// Registers the `layout` dialect.
pub fn register(registry: &mut Registry) {
    registry.register_dialect(DialectInfo {
        name: "layout",
        summary: "tensor layouts in buffers: CuTe, Furiosa, XLA and CK notations with one algebra",
        parse_type: None,
        parse_attr: Some(parse_attr),
        materialize_constant: None,
    });
}

fn parse_attr(ctx: &mut Context, name: &str, body: Option<&str>) -> Result<AttrId, ItemError> {
    let body = body.ok_or_else(|| ItemError::new(format!("#{name} needs a body in angle brackets")))?;
    let value = match name {
        "layout.cute" => {
            let c = syntax::parse_cute(body).map_err(|e| ItemError { message: e.message, offset: e.offset })?;
            c.validate().map_err(|e| ItemError::new(e.0))?;
            LayoutAttr::Cute(c)
        }
        "layout.furiosa" => {
            let x = syntax::parse_furiosa(body).map_err(|e| ItemError { message: e.message, offset: e.offset })?;
            x.validate().and_then(|_| furiosa_lower::to_repr(&x)).map_err(|e| ItemError::new(e.0))?;
            LayoutAttr::Furiosa(x)
        }
        "layout.ck" => {
            let x = syntax::parse_ck(body).map_err(|e| ItemError { message: e.message, offset: e.offset })?;
            x.validate().map_err(|e| ItemError::new(e.0))?;
            LayoutAttr::Ck(x)
        }
        "layout.xla" => {
            let x = syntax::parse_xla(body).map_err(|e| ItemError { message: e.message, offset: e.offset })?;
            x.validate().map_err(|e| ItemError::new(e.0))?;
            LayoutAttr::Xla(x)
        }
        _ => return Err(ItemError::new(format!("unknown attribute '{name}' in dialect 'layout'"))),
    };
    Ok(ctx.attr(Attr::Dialect(DialectData(Arc::new(value)))))
}
