//! The instructions of the `npu` dialect, one file per group: the kernel, synchronization, data movement, and
//! compute (`npu.memset`, the register-file loads, casts and transposes that stream elements, `npu.matmul`, the
//! vector unit's elementwise ops and the reductions), with `onchip` the operands compute instructions share.

pub mod clauses;
pub mod dma_op;
pub mod instruction;
pub mod kernel;
pub mod matmul;
pub mod memset;
pub mod onchip;
pub mod reduce;
pub mod stream;
pub mod sync;
pub mod vector;

use crate::ir::Registry;

/// Registers every `npu` op.
pub fn register(registry: &mut Registry) {
    let infos = [
        kernel::KERNEL,
        sync::SEMAPHORE,
        sync::BARRIER,
        dma_op::DMA,
        memset::MEMSET,
        stream::LOAD_TRF,
        stream::LOAD_VRF,
        stream::CAST,
        stream::TRANSPOSE,
        matmul::MATMUL,
        vector::UNARY,
        vector::BINARY,
        reduce::WITHIN,
        reduce::ACROSS,
    ];
    for info in infos {
        registry.register_op(info);
    }
}
