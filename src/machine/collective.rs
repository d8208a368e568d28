//! The α–β cost of the collectives sharding inserts, along one or more mesh axes.
//!
//! Along one axis of `n` devices with latency `α` and inverse bandwidth `β`, for a tensor of `B` bytes (the whole
//! tensor, not one shard), the costs are Alpa's (alpa-projects/alpa
//! `playground/auto_sharding_solver/cluster_env.py`; Alpa, OSDI'22, §4):
//!
//! | collective | cost |
//! |---|---|
//! | all-gather | `α + β · (n − 1)/n · B` |
//! | reduce-scatter | `α + β · (n − 1)/n · B` |
//! | all-reduce | `α + β · 2(n − 1)/n · B` |
//! | all-to-all | `α + β · (n − 1)/n² · B · 1.5` (1.5: Alpa's penalty for irregular traffic) |
//!
//! Alpa has no point-to-point or broadcast cost; ours are the usual α–β figures: send/recv of `B` bytes is
//! `α + β · B` (one link, as the NPU chip-to-chip DMA of `npu-machine` §10), and broadcast is a scatter followed
//! by an all-gather, `α + β · 2(n − 1)/n · B` (the long-message algorithm of Thakur, Rabenseifner and Gropp,
//! "Optimization of collective communication operations in MPICH", 2005), with one `α` as Alpa charges.
//!
//! Two choices of ours: a group of one device moves nothing and costs 0 (Alpa still charges `α`); a collective
//! over several axes runs as one ring over all their devices (`n` the product of the sizes), each step as slow
//! as the slowest link involved (the largest `α` and the largest `β`).

use super::link::Link;

/// A collective operation over a group of devices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Collective {
    /// Every device ends with the sum of every device's tensor.
    AllReduce,
    /// Every device ends with the concatenation of every device's shard.
    AllGather,
    /// Every device ends with its shard of the sum.
    ReduceScatter,
    /// Every device sends a distinct shard to every other device.
    AllToAll,
    /// One device sends the tensor to one other device.
    SendRecv,
    /// One device sends the tensor to every other device.
    Broadcast,
}

impl Collective {
    /// Every collective, for tables and tests.
    pub const ALL: [Collective; 6] = [
        Collective::AllReduce,
        Collective::AllGather,
        Collective::ReduceScatter,
        Collective::AllToAll,
        Collective::SendRecv,
        Collective::Broadcast,
    ];

    /// The name MLIR's `mesh`/`shard` dialects and the sharding literature use (`all-reduce`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Collective::AllReduce => "all-reduce",
            Collective::AllGather => "all-gather",
            Collective::ReduceScatter => "reduce-scatter",
            Collective::AllToAll => "all-to-all",
            Collective::SendRecv => "send-recv",
            Collective::Broadcast => "broadcast",
        }
    }

    /// How many times `B` crosses the slowest link: the factor of `β · B` for a group of `n` devices.
    pub fn bandwidth_factor(self, n: usize) -> f64 {
        if n <= 1 {
            return 0.0;
        }
        let n = n as f64;
        match self {
            Collective::AllGather | Collective::ReduceScatter => (n - 1.0) / n,
            Collective::AllReduce | Collective::Broadcast => 2.0 * (n - 1.0) / n,
            Collective::AllToAll => (n - 1.0) / (n * n) * 1.5,
            Collective::SendRecv => 1.0,
        }
    }

    /// The cost for a tensor of `bytes` bytes over a group of `n` devices joined by `link`:
    /// `α + β · factor(n) · B`, and 0 for a group of one.
    pub fn cost(self, bytes: f64, n: usize, link: &Link) -> f64 {
        if n <= 1 {
            return 0.0;
        }
        link.alpha() + link.beta() * self.bandwidth_factor(n) * bytes
    }

    /// Alpa's tie-breaking epsilon, added after truncating a cost to an integer: 0.1 for all-gather, 0.01 for
    /// all-reduce, 0.001 for the others.
    pub fn alpa_epsilon(self) -> f64 {
        match self {
            Collective::AllGather => 0.1,
            Collective::AllReduce => 0.01,
            _ => 0.001,
        }
    }

    /// A cost as Alpa's solver sees it: truncated to an integer plus [`Collective::alpa_epsilon`]. Only needed
    /// to compare objective values with Alpa's to the last unit.
    pub fn alpa_rounded(self, cost: f64) -> f64 {
        cost.trunc() + self.alpa_epsilon()
    }
}

impl std::fmt::Display for Collective {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
