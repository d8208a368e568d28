//! The instructions of the `npu` dialect, one file per group: the kernel, synchronization, data movement, and
//! compute (so far `npu.memset`).

pub mod clauses;
pub mod dma_op;
pub mod kernel;
pub mod memset;
pub mod sync;

use crate::ir::Registry;

/// Registers every `npu` op.
pub fn register(registry: &mut Registry) {
    for info in [kernel::KERNEL, sync::SEMAPHORE, sync::BARRIER, dma_op::DMA, memset::MEMSET] {
        registry.register_op(info);
    }
}
