//! The problem as a pairwise cost graph: per op and strategy, the time and bytes of the op itself (compute and
//! halos); per edge (a tensor from its producer to one consumer's input, or an updated tensor back to the one it
//! aliases), a table of the reshard's time and bytes for every pair of strategies. The search and the exact
//! solver read only these tables; [`super::evaluate`] adds peak memory.

use super::problem::{Problem, TensorId};
use super::reshard::{self, reshard};
use super::strategies::Strategies;
use super::{err, ShardError, MAX_TABLE_ENTRIES};
use crate::machine::Machine;

/// One edge: a tensor from the op `from` to the op `to`.
#[derive(Clone, Debug)]
pub struct Edge {
    /// The producer.
    pub from: usize,
    /// The consumer (for an alias, the producer of the original tensor).
    pub to: usize,
    /// The tensor moved.
    pub tensor: TensorId,
    /// The consumer's input slot (`None` for an alias).
    pub slot: Option<usize>,
    /// Reshard time, row-major: `[from strategy × to's strategy count + to strategy]`.
    pub time: Vec<f64>,
    /// Reshard bytes moved, in the same order.
    pub moved: Vec<f64>,
}

impl Edge {
    /// The entry for a pair of strategies.
    pub fn at(&self, table: &[f64], from: usize, to: usize, to_count: usize) -> f64 {
        table[from * to_count + to]
    }
}

/// Every op's own costs and every edge's table.
#[derive(Clone, Debug)]
pub struct Tables {
    /// Per op and strategy: compute plus its own communication (halos, combining partial results).
    pub node_time: Vec<Vec<f64>>,
    /// Per op and strategy: the bytes its own communication moves.
    pub node_moved: Vec<Vec<f64>>,
    /// The edges.
    pub edges: Vec<Edge>,
    /// Per op, the edges touching it.
    pub incident: Vec<Vec<usize>>,
    /// Per op, its strategy count.
    pub counts: Vec<usize>,
}

impl Tables {
    /// The tables of `problem`; errors past [`MAX_TABLE_ENTRIES`] entries.
    pub fn build(problem: &Problem, strategies: &Strategies, machine: &Machine) -> Result<Tables, ShardError> {
        let counts: Vec<usize> = strategies.0.iter().map(Vec::len).collect();
        let node_time = strategies.0.iter().map(|s| s.iter().map(|s| s.compute + s.communication).collect()).collect();
        let node_moved = strategies.0.iter().map(|s| s.iter().map(|s| s.moved).collect()).collect();
        let mut pairs: Vec<(usize, usize, TensorId, Option<usize>)> = Vec::new();
        for (k, op) in problem.ops().iter().enumerate() {
            for (slot, (t, _)) in op.inputs.iter().enumerate() {
                let from = problem.producer(*t).expect("a checked problem has a producer per input");
                pairs.push((from.0 as usize, k, *t, Some(slot)));
            }
        }
        for &(updated, original) in problem.aliases() {
            if let (Some(u), Some(o)) = (problem.producer(updated), problem.producer(original)) {
                pairs.push((u.0 as usize, o.0 as usize, updated, None));
            }
        }
        let entries = pairs.iter().try_fold(0usize, |n, p| n.checked_add(counts[p.0].checked_mul(counts[p.1])?));
        if entries.is_none_or(|n| n > MAX_TABLE_ENTRIES) {
            return err(format!("the cost tables would exceed {MAX_TABLE_ENTRIES} entries (MAX_TABLE_ENTRIES)"));
        }
        let mut edges = Vec::with_capacity(pairs.len());
        let mut incident = vec![Vec::new(); counts.len()];
        for (from, to, tensor, slot) in pairs {
            let t = problem.tensor(tensor);
            let mut time = Vec::with_capacity(counts[from] * counts[to]);
            let mut moved = Vec::with_capacity(time.capacity());
            for a in &strategies.0[from] {
                let have = a.output.as_ref().expect("a producer writes its tensor");
                for b in &strategies.0[to] {
                    let want = match slot {
                        Some(s) => &b.inputs[s],
                        None => b.output.as_ref().expect("an aliased tensor has a producer"),
                    };
                    let transfers = reshard(t, have, want, machine);
                    time.push(reshard::time(&transfers));
                    moved.push(reshard::moved(&transfers));
                }
            }
            incident[from].push(edges.len());
            if to != from {
                incident[to].push(edges.len());
            }
            edges.push(Edge { from, to, tensor, slot, time, moved });
        }
        Ok(Tables { node_time, node_moved, edges, incident, counts })
    }

    /// Total time of an assignment (one strategy index per op): ops, then reshards.
    pub fn time(&self, choice: &[usize]) -> f64 {
        let nodes: f64 = choice.iter().enumerate().map(|(k, &s)| self.node_time[k][s]).sum();
        nodes + self.edge_time(choice)
    }

    /// The time of an assignment's reshards alone.
    pub fn edge_time(&self, choice: &[usize]) -> f64 {
        self.edges.iter().map(|e| e.at(&e.time, choice[e.from], choice[e.to], self.counts[e.to])).sum()
    }

    /// Total bytes moved by an assignment.
    pub fn moved(&self, choice: &[usize]) -> f64 {
        let nodes: f64 = choice.iter().enumerate().map(|(k, &s)| self.node_moved[k][s]).sum();
        nodes + self.edges.iter().map(|e| e.at(&e.moved, choice[e.from], choice[e.to], self.counts[e.to])).sum::<f64>()
    }

    /// The time op `k` contributes with strategy `s`, its neighbours fixed by `choice`: its own and its edges'.
    pub fn local_time(&self, k: usize, s: usize, choice: &[usize]) -> f64 {
        let mut total = self.node_time[k][s];
        for &e in &self.incident[k] {
            let e = &self.edges[e];
            let from = if e.from == k { s } else { choice[e.from] };
            let to = if e.to == k { s } else { choice[e.to] };
            total += e.at(&e.time, from, to, self.counts[e.to]);
        }
        total
    }
}
