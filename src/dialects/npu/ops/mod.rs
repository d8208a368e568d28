//! The instructions of the `npu` dialect, one file per group: the kernel, synchronization, and (next) data
//! movement and compute.

pub mod clauses;
pub mod dma_op;
pub mod kernel;
pub mod sync;

use crate::ir::Registry;

/// Registers every `npu` op.
pub fn register(registry: &mut Registry) {
    for info in [kernel::KERNEL, sync::SEMAPHORE, sync::BARRIER, dma_op::DMA] {
        registry.register_op(info);
    }
}
