//! The `builtin` dialect: `builtin.module`, the top-level container of every program.

mod module;

use crate::ir::{DialectInfo, Registry};

/// Registers the `builtin` dialect.
pub fn register(registry: &mut Registry) {
    registry.register_dialect(DialectInfo {
        name: "builtin",
        summary: "the top-level module container",
        parse_type: None,
        parse_attr: None,
        materialize_constant: None,
    });
    registry.register_op(module::INFO);
}
