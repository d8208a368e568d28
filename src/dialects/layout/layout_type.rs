//! `!layout.layout`: the type of SSA values that hold a layout (what the algebra ops take and give).

use crate::ir::dialect_data::{DialectData, DialectValue};
use crate::ir::{Context, Interners, TypeId, TypeKind};
use std::sync::Arc;

/// The payload of `!layout.layout`.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct LayoutType;

impl DialectValue for LayoutType {
    fn name(&self) -> &str {
        "layout.layout"
    }

    fn print_body(&self) -> Option<String> {
        None
    }
}

/// The interned `!layout.layout` type.
pub fn layout_type(ctx: &mut Context) -> TypeId {
    ctx.ty(TypeKind::Dialect(DialectData(Arc::new(LayoutType))))
}

/// Whether `ty` is `!layout.layout`.
pub fn is_layout_type(ctx: &Interners, ty: TypeId) -> bool {
    matches!(ctx.type_kind(ty), TypeKind::Dialect(d) if d.downcast::<LayoutType>().is_some())
}
