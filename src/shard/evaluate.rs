//! The cost vector of an assignment (one strategy per op): time (compute, halos and reshards, run one after
//! another on every device, as an SPMD program does), peak memory per device from the live ranges of the
//! tensors, and the bytes moved.
//!
//! Memory: a tensor is live on a device from the op that writes it to the last op that reads it (from the start
//! to the end for a persistent one), holding its largest shard ([`TensorSpec::shard_bytes`]); a consumer that
//! needs another spec than its producer gives also holds the resharded copy while it runs. The peak is the
//! largest sum over the program's steps. Every device holds the same shapes (an uneven split is counted at its
//! largest shard), so the peak is per device.

use super::problem::Problem;
use super::spec::TensorSpec;
use super::strategies::Strategies;
use super::tables::Tables;
use crate::machine::Machine;

/// What an assignment costs.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Costs {
    /// Estimated wall-clock time: `compute + communication`.
    pub time: f64,
    /// Compute time of the largest shards.
    pub compute: f64,
    /// Time of halo exchanges and reshards.
    pub communication: f64,
    /// Peak bytes held by one device.
    pub peak_memory: u64,
    /// Bytes moved between devices, all devices together.
    pub moved: f64,
}

impl Costs {
    /// Whether `self` is at least as good as `other` in every component and better in one (time, peak memory,
    /// bytes moved).
    pub fn dominates(&self, other: &Costs) -> bool {
        let (a, b) = (self.vector(), other.vector());
        a.iter().zip(&b).all(|(x, y)| x <= y) && a.iter().zip(&b).any(|(x, y)| x < y)
    }

    /// `[time, peak memory, bytes moved]`.
    pub fn vector(&self) -> [f64; 3] {
        [self.time, self.peak_memory as f64, self.moved]
    }
}

/// The costs of `choice` (a strategy index per op).
pub fn evaluate(
    problem: &Problem,
    strategies: &Strategies,
    tables: &Tables,
    machine: &Machine,
    choice: &[usize],
) -> Costs {
    let compute: f64 = choice.iter().enumerate().map(|(k, &s)| strategies.0[k][s].compute).sum();
    let own: f64 = choice.iter().enumerate().map(|(k, &s)| strategies.0[k][s].communication).sum();
    let edges = tables.edge_time(choice);
    let time = tables.time(choice);
    let peak_memory = memory_profile(problem, strategies, machine, choice).into_iter().max().unwrap_or(0);
    Costs { time, compute, communication: own + edges, peak_memory, moved: tables.moved(choice) }
}

/// The bytes one device holds at each step (op position) of the program under `choice`.
pub fn memory_profile(problem: &Problem, strategies: &Strategies, machine: &Machine, choice: &[usize]) -> Vec<u64> {
    let steps = problem.ops().len();
    let mut delta = vec![0i128; steps + 1];
    let mut add = |from: usize, to: usize, bytes: u64| {
        delta[from] += bytes as i128;
        delta[to + 1] -= bytes as i128;
    };
    for (k, op) in problem.ops().iter().enumerate() {
        let Some((t, _)) = &op.output else { continue };
        let tensor = problem.tensor(*t);
        let spec = strategies.0[k][choice[k]].output.as_ref().expect("an op with an output has its spec");
        let last = problem.consumers(*t).iter().map(|c| c.0 .0 as usize).max().unwrap_or(k);
        let (from, to) = if tensor.persistent { (0, steps - 1) } else { (k, last) };
        add(from, to, spec.shard_bytes(&tensor.shape, tensor.elem_bytes, machine.mesh()));
        for &(c, slot) in problem.consumers(*t) {
            let c = c.0 as usize;
            let want: &TensorSpec = &strategies.0[c][choice[c]].inputs[slot];
            if want != spec {
                add(c, c, want.shard_bytes(&tensor.shape, tensor.elem_bytes, machine.mesh()));
            }
        }
    }
    let mut live = 0i128;
    delta[..steps]
        .iter()
        .map(|d| {
            live += d;
            live.clamp(0, u64::MAX as i128) as u64
        })
        .collect()
}
