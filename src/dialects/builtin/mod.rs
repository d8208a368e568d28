//! The `builtin` dialect: `builtin.module`, the top-level container of every program, and
//! `builtin.unrealized_conversion_cast`, the placeholder dialect conversion inserts between types.

mod module;
mod unrealized_cast;

pub use unrealized_cast::UnrealizedCastOp;

use crate::ir::{DialectInfo, Registry};

/// Registers the `builtin` dialect.
pub fn register(registry: &mut Registry) {
    registry.register_dialect(DialectInfo {
        name: "builtin",
        summary: "the top-level module container and conversion casts",
        parse_type: None,
        parse_attr: None,
        materialize_constant: None,
    });
    registry.register_op(module::INFO);
    registry.register_op(unrealized_cast::INFO);
}
