//! The `npu` dialect: programs for `tap-npu v0`, the abstract NPU of `npu-machine.md` (FuriosaAI RNGD shapes and
//! numbers where public), run by the interpreter bundled with the crate. This first part holds its types (HBM
//! buffers, timeline semaphores), its one addressing primitive (the access pattern) and what a DMA command means
//! (its rules and cycle cost); the instructions, their verifier and the interpreter build on them
//! (docs/dialect-npu.md says what exists).

pub mod access;
pub mod build;
pub mod dma;
pub mod effects;
pub mod interp;
pub mod machine_attr;
pub mod ops;
pub mod simplify_sync;
pub mod types;

use crate::ir::registry::ItemError;
use crate::ir::{Context, DialectInfo, Registry, TypeId};

/// Registers the `npu` dialect.
pub fn register(registry: &mut Registry) {
    registry.register_dialect(DialectInfo {
        name: "npu",
        summary: "instructions for tap-npu v0, the abstract NPU the bundled interpreter runs",
        parse_type: Some(parse_type),
        parse_attr: None,
        materialize_constant: None,
    });
    ops::register(registry);
    effects::register(registry);
}

fn parse_type(ctx: &mut Context, name: &str, body: Option<&str>) -> Result<TypeId, ItemError> {
    match (name, body) {
        ("npu.buf", Some(body)) => Ok(types::buf_type(ctx, types::BufType::parse(body)?)),
        ("npu.buf", None) => {
            Err(ItemError::new("!npu.buf needs its space, length and element type: !npu.buf<hbm, 64 x f32>"))
        }
        ("npu.sem", None) => Ok(types::sem_type(ctx)),
        ("npu.sem", Some(_)) => Err(ItemError::new("!npu.sem takes no parameters")),
        _ => Err(ItemError::new(format!("unknown type '{name}' in dialect 'npu'"))),
    }
}
