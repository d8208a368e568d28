//! The sharding search core: a library below the IR (it imports only `zspace` and `machine`), so the search can
//! later run on many processes and be tested without parsing anything.
//!
//! A [`Problem`] is a graph of ops, each an index space with an IPF per tensor it reads and writes, the index
//! dimensions it reduces and a cost per index point; tensors have shapes and element sizes. A [`Plan`] splits an
//! op's index dimensions over mesh axes; from it follow the [`TensorSpec`]s of what the op writes (sharded dims,
//! partial axes) and needs of its inputs ([`strategies`]). Where a producer's spec differs from what a consumer
//! needs, the [`reshard`] between them is a list of collectives, costed with the machine's α–β links. [`evaluate`]
//! prices a whole assignment (time, peak memory per device, bytes moved); [`search`] finds good assignments
//! (greedy seed, local descent, seeded perturbations, a Pareto archive, a time budget); [`exact`] finds the
//! optimum of small problems, to measure the search against. [`mlp`] builds the benchmark's MLP training step.
//!
//! Every size limit is a named constant here; exceeding one is a [`ShardError`], never a panic or a hang.

pub mod evaluate;
pub mod exact;
pub mod mlp;
pub mod pareto;
pub mod problem;
pub mod propagate;
pub mod report;
pub mod reshard;
pub mod search;
pub mod spec;
pub mod strategies;
pub mod tables;
pub mod transfers;

pub use evaluate::{evaluate, Costs};
pub use pareto::Frontier;
pub use problem::{Op, OpIndex, Problem, Tensor, TensorId};
pub use propagate::propagate;
pub use reshard::{reshard, Transfer};
pub use search::{search, Objective, SearchOptions, SearchResult};
pub use spec::{AxisSet, Plan, TensorSpec};
pub use strategies::{Strategies, Strategy};

use std::fmt;

/// Most mesh axes a problem may have (an [`AxisSet`] is a 16-bit mask).
pub const MAX_MESH_AXES: usize = 16;
/// Most plans enumerated for one op (an op with `d` index dimensions on a mesh of `a` axes has up to
/// `(d + 1)^a`); past it the op's plans are limited to those splitting at most one dimension per axis in order.
pub const MAX_PLANS_PER_OP: usize = 4096;
/// Most entries of all pairwise cost tables together (one per producer plan × consumer plan per edge).
pub const MAX_TABLE_ENTRIES: usize = 1 << 26;

/// Why a problem cannot be built or solved, with the numbers, and the op at fault when there is one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShardError {
    /// What is wrong.
    pub message: String,
    /// The position of the op at fault in the problem's op list.
    pub op: Option<usize>,
}

impl fmt::Display for ShardError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ShardError {}

/// A [`ShardError`] from a message.
pub(crate) fn err<T>(message: impl Into<String>) -> Result<T, ShardError> {
    Err(ShardError { message: message.into(), op: None })
}
