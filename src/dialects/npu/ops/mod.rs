//! The instructions of the `npu` dialect, one file per group: the kernel, synchronization, data movement, and
//! compute (so far `npu.memset` and the vector unit's elementwise ops), with `onchip` the operands compute
//! instructions share.

pub mod clauses;
pub mod dma_op;
pub mod kernel;
pub mod memset;
pub mod onchip;
pub mod sync;
pub mod vector;

use crate::ir::Registry;

/// Registers every `npu` op.
pub fn register(registry: &mut Registry) {
    for info in
        [kernel::KERNEL, sync::SEMAPHORE, sync::BARRIER, dma_op::DMA, memset::MEMSET, vector::UNARY, vector::BINARY]
    {
        registry.register_op(info);
    }
}
