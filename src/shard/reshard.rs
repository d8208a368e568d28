//! Resharding: the collectives that turn a tensor of one spec into another, one mesh axis at a time, with their
//! α–β time and the bytes they move.
//!
//! In order: each partial axis is combined, by a reduce-scatter when the destination splits a dimension along
//! that axis (the device keeps only its part of the sum) and by an all-reduce otherwise; then each axis that
//! splits a dimension in the source but not in the destination is moved by an all-to-all when the destination
//! splits another dimension along it, and gathered by an all-gather otherwise (slowest link first, while the
//! tensor is still split along the others). Axes the destination adds are local slices and cost nothing, so
//! replicated → sharded moves no byte. A collective along axis `a` runs in each group of devices that differ only
//! along `a`, on the part of the tensor the group holds: the tensor's bytes divided by the parts of the other
//! axes that split it (so Alpa's closed forms, such as `AR(128·128·4 / m_1, 0)`, come out of the formulas).

use super::problem::Tensor;
use super::spec::{AxisSet, TensorSpec};
use crate::machine::{Collective, Machine};

/// One collective of a reshard.
#[derive(Clone, Debug, PartialEq)]
pub struct Transfer {
    /// What it is.
    pub collective: Collective,
    /// The mesh axis it runs along.
    pub axis: usize,
    /// The bytes of the tensor part one group holds (the `B` of the α–β formula).
    pub group_bytes: f64,
    /// Its α–β time.
    pub time: f64,
    /// The bytes it moves, all devices together (what each device receives, summed).
    pub moved: f64,
}

/// The collectives turning `tensor` from spec `from` into spec `to` on `machine`'s mesh, in order.
pub fn reshard(tensor: &Tensor, from: &TensorSpec, to: &TensorSpec, machine: &Machine) -> Vec<Transfer> {
    let mut out = Vec::new();
    if from == to {
        return out;
    }
    let mut cur = from.clone();
    let bytes = tensor.bytes() as f64;
    for a in from.partial.minus(to.partial).axes() {
        let target = (0..cur.dims.len()).find(|&j| to.dims[j].has(a) && !cur.sharded().has(a));
        let collective = if target.is_some() { Collective::ReduceScatter } else { Collective::AllReduce };
        out.push(transfer(collective, a, group_bytes(bytes, &cur, a, machine), machine));
        cur.partial = cur.partial.minus(AxisSet::one(a));
        if let Some(j) = target {
            cur.dims[j] = cur.dims[j].union(AxisSet::one(a));
        }
    }
    let mut leaving: Vec<(usize, usize)> = Vec::new();
    for j in 0..cur.dims.len() {
        leaving.extend(cur.dims[j].minus(to.dims[j]).axes().map(|a| (j, a)));
    }
    let beta = |a: usize| machine.links()[a].beta();
    leaving.sort_by(|x, y| beta(y.1).total_cmp(&beta(x.1)).then(x.1.cmp(&y.1)));
    for (j, a) in leaving {
        let b = group_bytes(bytes, &cur, a, machine);
        cur.dims[j] = cur.dims[j].minus(AxisSet::one(a));
        match (0..cur.dims.len()).find(|&k| k != j && to.dims[k].has(a) && !cur.dims[k].has(a)) {
            Some(k) => {
                out.push(transfer(Collective::AllToAll, a, b, machine));
                cur.dims[k] = cur.dims[k].union(AxisSet::one(a));
            }
            None => out.push(transfer(Collective::AllGather, a, b, machine)),
        }
    }
    out
}

/// The total time of a reshard's collectives.
pub fn time(transfers: &[Transfer]) -> f64 {
    transfers.iter().map(|t| t.time).sum()
}

/// The total bytes a reshard moves.
pub fn moved(transfers: &[Transfer]) -> f64 {
    transfers.iter().map(|t| t.moved).sum()
}

/// The bytes of the part of the tensor one group along `axis` holds: divided by the parts of every other axis
/// that splits it.
fn group_bytes(bytes: f64, spec: &TensorSpec, axis: usize, machine: &Machine) -> f64 {
    bytes / spec.sharded().minus(AxisSet::one(axis)).parts(machine.mesh()) as f64
}

fn transfer(collective: Collective, axis: usize, group_bytes: f64, machine: &Machine) -> Transfer {
    let n = machine.mesh().axes()[axis].size;
    let time = collective.cost(group_bytes, n, &machine.links()[axis]);
    let per_device = match collective {
        // What one device receives: Alpa's all-to-all factor carries a 1.5 penalty that moves no byte.
        Collective::AllToAll => collective.bandwidth_factor(n) / 1.5,
        _ => collective.bandwidth_factor(n),
    };
    let moved = per_device * group_bytes * machine.mesh().num_devices() as f64;
    Transfer { collective, axis, group_bytes, time, moved }
}
