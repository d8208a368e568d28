//! The dialects: each registers its ops, types and attributes into a [`Registry`]. A dialect imports only the
//! IR core, never another dialect.

pub mod arith;
pub mod builtin;
pub mod func;
pub mod layout;
pub mod npu;
pub mod pair;
pub mod teg;

use crate::ir::Registry;
use std::sync::Arc;

/// Registers every dialect, in a fixed order.
pub fn register_all(registry: &mut Registry) {
    builtin::register(registry);
    func::register(registry);
    arith::register(registry);
    layout::register(registry);
    teg::register(registry);
    npu::register(registry);
    pair::register(registry);
}

/// A frozen registry with every dialect.
pub fn all() -> Arc<Registry> {
    let mut registry = Registry::new();
    register_all(&mut registry);
    Arc::new(registry)
}
