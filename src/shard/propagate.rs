//! Sharding propagation (as GSPMD's and Shardy's): from the ops that have plans, every op without one takes the
//! plan that agrees with a planned neighbour along the index maps, so that a few annotated ops (usually the
//! inputs) shard a whole graph without a search.
//!
//! A producer's plan gives the spec of the tensor it writes (each tensor dimension split over the axes of the
//! index dimensions that move it); a consumer then splits, for each split tensor dimension, the one index
//! dimension of its own that moves it (forward). A consumer's plan gives the spec it needs of each input, and the
//! producer splits the index dimension that writes each split dimension (backward). Partial axes do not
//! propagate: a combine happens before the value is read. An op takes the union of what all its planned neighbours
//! imply (each axis to the first dimension offered it), or failing that the first single offer it may take (the
//! validity rules of [`super::strategies`]). Ops are visited from a worklist; a plan only ever gains axes, so each
//! op changes at most once per mesh axis and the work is linear in the ops and edges.

use super::problem::{Op, Problem};
use super::spec::{AxisSet, Plan, TensorSpec};
use super::strategies::{spec_through, valid};
use crate::machine::Machine;
use crate::zspace::Ipf;
use std::collections::VecDeque;

/// Gives each op of `problem` whose `plans` entry is `None` (and that may be split and writes a value) a plan
/// propagated from its neighbours; returns how many it gave. Entries already set are never changed.
pub fn propagate(problem: &Problem, machine: &Machine, plans: &mut [Option<Plan>]) -> usize {
    let ops = problem.ops();
    let fixed: Vec<bool> = plans.iter().map(Option::is_some).collect();
    let mut work = Worklist { queue: VecDeque::new(), queued: vec![false; ops.len()] };
    for k in (0..ops.len()).filter(|&k| fixed[k]) {
        work.extend(neighbours(problem, k));
    }
    while let Some(n) = work.pop() {
        let op = &ops[n];
        if fixed[n] || !op.shardable || op.output.is_none() {
            continue;
        }
        let current = plans[n].clone().unwrap_or_else(|| Plan::replicated(op.index.len()));
        let offers = offers(problem, plans, n);
        let merged = merge(&current, &offers);
        let first = plans[n].is_none().then(|| offers.iter().find(|p| valid(op, p, machine)).cloned()).flatten();
        let plan = match valid(op, &merged, machine) {
            true => merged,
            false => match first {
                Some(p) => p,
                None => continue,
            },
        };
        if plan == current {
            continue;
        }
        plans[n] = Some(plan);
        work.extend(neighbours(problem, n));
    }
    (0..ops.len()).filter(|&k| !fixed[k] && plans[k].is_some()).count()
}

/// Ops waiting for a visit, each queued at most once at a time (so an op many neighbours update is visited once
/// for all of them, not once per neighbour).
struct Worklist {
    queue: VecDeque<usize>,
    queued: Vec<bool>,
}

impl Worklist {
    fn extend(&mut self, ops: Vec<usize>) {
        for k in ops {
            if !std::mem::replace(&mut self.queued[k], true) {
                self.queue.push_back(k);
            }
        }
    }

    fn pop(&mut self) -> Option<usize> {
        let k = self.queue.pop_front()?;
        self.queued[k] = false;
        Some(k)
    }
}

/// The ops that read what op `k` writes, then those that write what it reads, in order.
fn neighbours(problem: &Problem, k: usize) -> Vec<usize> {
    let op = &problem.ops()[k];
    let consumers = op.output.iter().flat_map(|(t, _)| problem.consumers(*t).iter().map(|c| c.0 .0 as usize));
    let producers = op.inputs.iter().filter_map(|(t, _)| problem.producer(*t).map(|p| p.0 as usize));
    consumers.chain(producers).collect()
}

/// The plans op `n`'s planned neighbours imply for it: from each producer, reading its output as it is written;
/// from each consumer, writing what it needs.
fn offers(problem: &Problem, plans: &[Option<Plan>], n: usize) -> Vec<Plan> {
    let ops = problem.ops();
    let op = &ops[n];
    let mut out = Vec::new();
    for (t, ipf) in &op.inputs {
        let Some(p) = problem.producer(*t).map(|p| p.0 as usize) else { continue };
        let (Some(plan), Some((_, written))) = (&plans[p], &ops[p].output) else { continue };
        out.extend(spec_through(written, plan).and_then(|spec| plan_for(op, ipf, &spec)));
    }
    let Some((t, written)) = &op.output else { return out };
    for &(c, slot) in problem.consumers(*t) {
        let c = c.0 as usize;
        let Some(plan) = &plans[c] else { continue };
        out.extend(spec_through(&ops[c].inputs[slot].1, plan).and_then(|spec| plan_for(op, written, &spec)));
    }
    out
}

/// `current` with the offers' axes added, in order: each axis goes to the first dimension offered it, unless the
/// plan already uses it.
fn merge(current: &Plan, offers: &[Plan]) -> Plan {
    let mut plan = current.clone();
    for offer in offers {
        for (i, &axes) in offer.0.iter().enumerate() {
            let free = axes.minus(plan.used());
            plan.0[i] = plan.0[i].union(free);
        }
    }
    plan
}

/// The plan of `op` that gives (or reads) `spec` through `ipf`: each split tensor dimension split along the one
/// index dimension that moves it (`None` when that would split nothing).
fn plan_for(op: &Op, ipf: &Ipf, spec: &TensorSpec) -> Option<Plan> {
    let mut plan = Plan::replicated(op.index.len());
    for (j, &axes) in spec.dims.iter().enumerate() {
        if axes.is_empty() {
            continue;
        }
        let movers: Vec<usize> = (0..op.index.len()).filter(|&i| ipf.map().coef(j, i) != 0).collect();
        if let [i] = movers.as_slice() {
            plan.0[*i] = plan.0[*i].union(axes);
        }
    }
    (plan.used() != AxisSet::EMPTY).then_some(plan)
}
