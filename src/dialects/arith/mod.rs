//! The `arith` dialect (a subset of MLIR's): `arith.constant` and integer and float arithmetic, with folding and
//! canonicalization patterns. Its generic form is MLIR's, so files round-trip through `mlir-opt`.

mod binary;
mod constant;
mod patterns;

pub use binary::AddIOp;
pub use constant::ConstantOp;

use crate::ir::builder::OpState;
use crate::ir::registry::ItemError;
use crate::ir::{Attr, AttrId, Context, DialectInfo, Interners, Loc, Registry, TypeId, TypeKind};

/// Registers the `arith` dialect.
pub fn register(registry: &mut Registry) {
    registry.register_dialect(DialectInfo {
        name: "arith",
        summary: "constants and integer and floating-point arithmetic",
        parse_type: None,
        parse_attr: Some(parse_attr),
        materialize_constant: Some(materialize_constant),
    });
    registry.register_op(constant::INFO);
    for info in binary::ALL {
        registry.register_op(info);
    }
}

/// `#arith.overflow<...>` and `#arith.fastmath<...>` (flags mlir-opt prints as properties) are kept as written.
fn parse_attr(ctx: &mut Context, name: &str, body: Option<&str>) -> Result<AttrId, ItemError> {
    match name {
        "arith.overflow" | "arith.fastmath" => {
            let name = ctx.sym(name);
            Ok(ctx.attr(Attr::Opaque { name, body: body.map(Into::into) }))
        }
        _ => Err(format!("unknown attribute `{}` in dialect `arith`", name.trim_start_matches("arith.")).into()),
    }
}

/// Folded values become `arith.constant` ops.
fn materialize_constant(ctx: &mut Interners, value: AttrId, ty: TypeId, loc: Loc) -> Option<OpState> {
    if !matches!(ctx.type_kind(ty), TypeKind::Int(_) | TypeKind::Index | TypeKind::Float(_)) {
        return None;
    }
    Some(OpState::new(ctx, "arith.constant", loc).results(&[ty]).prop(ctx, "value", value))
}
