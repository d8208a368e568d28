//! Interfaces: contracts between an op (or an attribute) and the passes that ask about it, in their own layer
//! between the IR core and the dialects, as MLIR's `mlir/Interfaces`. A dialect implements an interface for its
//! ops and attaches the implementation to the registry when it registers
//! (`Registry::attach_op_interface`); any module may attach one to another dialect's op (an external model).
//! Passes query them (`ctx.op_interface::<dyn MemoryEffects>(op)`) without importing the dialect.
//!
//! - [`memory_effects`]: what an op reads, writes, allocates and frees; `dce`, `cse` and `canonicalize` decide
//!   what may be erased or merged from it.
//! - [`sharding`]: an op's index space, one index projection per operand and result, and its reductions; what
//!   sharding rewrites and the cost model read.
//! - [`layout`]: on layout attributes: the layout's core form, and from it element count, offsets and access
//!   patterns.

pub mod layout;
pub mod memory_effects;
pub mod sharding;
