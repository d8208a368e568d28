//! The plans an op may take, and what each implies: the spec of the tensor it writes, the specs it needs of the
//! tensors it reads, its compute time on one device, the halo exchange its windows need, and its output's bytes
//! per device. An op's plans are every way to give each mesh axis to at most one index dimension (Alpa's
//! strategies, read off the IPFs instead of written per op), less those that would make no sense: a dimension
//! split into more parts than its extent, an axis landing on two dimensions of one tensor, or a dimension that
//! moves no output and is not reduced (every shard would compute the same thing).

use super::problem::{Op, Problem};
use super::reshard::{self, reshard, Transfer};
use super::spec::{AxisSet, Plan, TensorSpec};
use super::{err, ShardError, MAX_PLANS_PER_OP};
use crate::machine::Machine;
use crate::zspace::{Ipf, ZRange};

/// One plan of an op and what follows from it.
#[derive(Clone, Debug, PartialEq)]
pub struct Strategy {
    /// The split of the index space.
    pub plan: Plan,
    /// The spec of the tensor written (none for a sink).
    pub output: Option<TensorSpec>,
    /// The spec needed of each input.
    pub inputs: Vec<TensorSpec>,
    /// Compute time of the largest shard.
    pub compute: f64,
    /// How the partial results of split reductions are combined (all-reduce, or reduce-scatter onto an output
    /// dimension), before anyone reads the output.
    pub finish: Vec<Transfer>,
    /// Time of the halo exchanges its windowed inputs need and of `finish`.
    pub communication: f64,
    /// Bytes moved by those (all devices together).
    pub moved: f64,
}

/// Every op's strategies, in op order.
#[derive(Clone, Debug)]
pub struct Strategies(pub Vec<Vec<Strategy>>);

impl Strategies {
    /// The strategies of every op of `problem` on `machine`'s mesh. Errors on a mesh of more than
    /// [`super::MAX_MESH_AXES`] axes or a pinned plan that is not valid for its op.
    pub fn of(problem: &Problem, machine: &Machine) -> Result<Strategies, ShardError> {
        let axes = machine.mesh().axes().len();
        if axes > super::MAX_MESH_AXES {
            return err(format!("a mesh of {axes} axes; at most {} are supported", super::MAX_MESH_AXES));
        }
        let mut all = Vec::with_capacity(problem.ops().len());
        for op in problem.ops() {
            let plans = match (&op.pinned, op.shardable) {
                (Some(plan), _) => vec![plan.clone()],
                (None, false) => vec![Plan::replicated(op.index.len())],
                (None, true) => candidate_plans(op, machine),
            };
            let mut out: Vec<Strategy> = plans.into_iter().flat_map(|p| strategies(problem, op, p, machine)).collect();
            // A heavy op splits over the whole mesh when any valid plan does; otherwise (dimensions too few or too
            // small) it may take any plan.
            let live = machine.mesh().axes().iter().enumerate().filter(|(_, a)| a.size > 1);
            let whole = live.fold(AxisSet::EMPTY, |s, (a, _)| s.union(AxisSet::one(a)));
            if op.split_all && op.pinned.is_none() && out.iter().any(|s| s.plan.used() == whole) {
                out.retain(|s| s.plan.used() == whole);
            }
            if out.is_empty() {
                let message = match &op.pinned {
                    Some(plan) => format!(
                        "pinned to plan {}, which it cannot take (a dimension split into more parts than its extent, \
                         or one axis splitting two dimensions of a tensor)",
                        plan.display(&op.index, machine.mesh())
                    ),
                    None => "it has no valid plan".into(),
                };
                return Err(ShardError { message, op: Some(all.len()) });
            }
            out.sort_by_key(|s| split_count(&s.plan));
            all.push(out);
        }
        Ok(Strategies(all))
    }

    /// The strategies of op `k`.
    pub fn of_op(&self, k: usize) -> &[Strategy] {
        &self.0[k]
    }
}

fn split_count(plan: &Plan) -> u32 {
    plan.used().0.count_ones()
}

/// Every assignment of each mesh axis to one index dimension or none, over the dimensions that may be split (the
/// largest ones when there are too many for [`MAX_PLANS_PER_OP`]).
fn candidate_plans(op: &Op, machine: &Machine) -> Vec<Plan> {
    let axes = machine.mesh().axes().len();
    // An axis of one device splits nothing: plans using it would repeat others.
    let live: Vec<usize> = (0..axes).filter(|&a| machine.mesh().axes()[a].size > 1).collect();
    let mut dims: Vec<usize> = (0..op.index.len()).filter(|&i| splittable(op, i)).collect();
    dims.sort_by_key(|&i| std::cmp::Reverse(op.index[i].1));
    while !dims.is_empty() && (dims.len() + 1).checked_pow(live.len() as u32).is_none_or(|n| n > MAX_PLANS_PER_OP) {
        dims.pop();
    }
    dims.sort_unstable();
    let choices = dims.len() + 1;
    let total = choices.pow(live.len() as u32);
    let plans = (0..total).map(|mut code| {
        let mut plan = Plan::replicated(op.index.len());
        for &a in &live {
            let pick = code % choices;
            code /= choices;
            if pick > 0 {
                let d = dims[pick - 1];
                plan.0[d] = plan.0[d].union(AxisSet::one(a));
            }
        }
        plan
    });
    plans.collect()
}

/// Whether index dimension `i` moves the output or is reduced (splitting any other one duplicates work); for an
/// op without an output (a sink), whether it moves an input (the value is observed where it lies).
fn splittable(op: &Op, i: usize) -> bool {
    match &op.output {
        Some((_, ipf)) => op.reduced.contains(&i) || moves(ipf, i),
        None => op.inputs.iter().any(|(_, ipf)| moves(ipf, i)),
    }
}

fn moves(ipf: &Ipf, i: usize) -> bool {
    (0..ipf.map().outputs()).any(|j| ipf.map().coef(j, i) != 0)
}

/// The strategies of `plan` for `op` (none if the plan is not valid for it): one per way of combining the
/// partial results of its split reductions.
fn strategies(problem: &Problem, op: &Op, plan: Plan, machine: &Machine) -> Vec<Strategy> {
    let mesh = machine.mesh();
    if !fits(op, &plan, machine) {
        return Vec::new();
    }
    let Some(inputs) = op.inputs.iter().map(|(_, ipf)| spec_through(ipf, &plan)).collect::<Option<Vec<_>>>() else {
        return Vec::new();
    };
    let shard: f64 = op.index.iter().zip(&plan.0).map(|(d, s)| d.1.div_ceil(s.parts(mesh).max(1)) as f64).product();
    let (halo, halo_bytes) = halos(problem, op, &plan, machine);
    let base = Strategy {
        compute: op.work_per_point * shard,
        plan: plan.clone(),
        output: None,
        inputs,
        finish: Vec::new(),
        communication: halo,
        moved: halo_bytes,
    };
    let Some((t, ipf)) = &op.output else { return vec![base] };
    let Some(mut partial) = spec_through(ipf, &plan) else { return Vec::new() };
    partial.partial = op.reduced.iter().fold(AxisSet::EMPTY, |s, &i| s.union(plan.0[i]));
    let tensor = problem.tensor(*t);
    finished(&partial, &tensor.shape, mesh)
        .into_iter()
        .map(|spec| {
            let finish = reshard(tensor, &partial, &spec, machine);
            let (time, moved) = (reshard::time(&finish), reshard::moved(&finish));
            Strategy {
                communication: base.communication + time,
                moved: base.moved + moved,
                output: Some(spec),
                finish,
                ..base.clone()
            }
        })
        .collect()
}

/// Whether `plan` fits `op`: one axis set per index dimension, none split into more parts than its extent, no axis
/// on two dimensions.
fn fits(op: &Op, plan: &Plan, machine: &Machine) -> bool {
    let mesh = machine.mesh();
    if plan.rank() != op.index.len() || plan.0.iter().zip(&op.index).any(|(s, d)| s.parts(mesh) > d.1.max(1)) {
        return false;
    }
    let mut seen = AxisSet::EMPTY;
    for s in &plan.0 {
        if seen.meets(*s) {
            return false;
        }
        seen = seen.union(*s);
    }
    true
}

/// Whether `op` may take `plan` as a candidate of its own: it fits, splits only dimensions worth splitting (that
/// move the output or are reduced), and no axis splits two dimensions of a tensor it reads or writes.
pub(super) fn valid(op: &Op, plan: &Plan, machine: &Machine) -> bool {
    let worth = plan.0.iter().enumerate().all(|(i, s)| s.is_empty() || splittable(op, i));
    let tensors = op.inputs.iter().chain(op.output.iter()).all(|(_, ipf)| spec_through(ipf, plan).is_some());
    fits(op, plan, machine) && worth && tensors
}

/// Every spec a partial spec may be combined into: each partial axis either all-reduced (the tensor ends
/// replicated along it) or reduce-scattered onto one tensor dimension it still fits.
fn finished(partial: &TensorSpec, shape: &[u64], mesh: &crate::machine::Mesh) -> Vec<TensorSpec> {
    let mut out = vec![TensorSpec { partial: AxisSet::EMPTY, ..partial.clone() }];
    for a in partial.partial.axes() {
        let mut next = Vec::new();
        for spec in out {
            for (j, &extent) in shape.iter().enumerate() {
                let dim = spec.dims[j].union(AxisSet::one(a));
                if dim.parts(mesh) <= extent.max(1) {
                    let mut scattered = spec.clone();
                    scattered.dims[j] = dim;
                    next.push(scattered);
                }
            }
            next.push(spec);
        }
        out = next;
    }
    out
}

/// The spec of the tensor an IPF reads or writes under `plan`: each tensor dimension is split over the axes of
/// the index dimensions that move it; `None` if one axis would split two tensor dimensions.
pub(super) fn spec_through(ipf: &Ipf, plan: &Plan) -> Option<TensorSpec> {
    let mut spec = TensorSpec::replicated(ipf.map().outputs());
    let mut seen = AxisSet::EMPTY;
    for (j, dim) in spec.dims.iter_mut().enumerate() {
        for (i, s) in plan.0.iter().enumerate() {
            if ipf.map().coef(j, i) != 0 {
                *dim = dim.union(*s);
            }
        }
        if seen.meets(*dim) {
            return None;
        }
        seen = seen.union(*dim);
    }
    Some(spec)
}

/// The halo exchange of `plan`: for each input and each split index dimension, the cells neighbouring shards
/// both read (the overlap of the boxes two adjacent shards project to), sent once per neighbour pair along each
/// axis of the split. Returns `(time, bytes)`.
fn halos(problem: &Problem, op: &Op, plan: &Plan, machine: &Machine) -> (f64, f64) {
    let mesh = machine.mesh();
    let whole = ZRange::of_shape(&op.extents());
    let (mut time, mut bytes) = (0.0, 0.0);
    for (i, s) in plan.0.iter().enumerate() {
        let parts = s.parts(mesh);
        if parts < 2 {
            continue;
        }
        let Ok(pieces) = whole.split(i, parts) else { continue };
        for (t, ipf) in op.inputs.iter().filter(|(_, ipf)| moves(ipf, i)) {
            let (Ok(a), Ok(b)) = (ipf.project(&pieces[0]), ipf.project(&pieces[1])) else { continue };
            let Some(common) = a.intersect(&b).filter(|r| !r.is_empty()) else { continue };
            let b_halo = common.size() as f64 * problem.tensor(*t).elem_bytes as f64;
            for axis in s.axes() {
                let name = &mesh.axes()[axis].name;
                time += machine.send_recv_cost(b_halo, name).unwrap_or(0.0);
            }
            bytes += b_halo * (parts - 1) as f64 * (mesh.num_devices() as f64 / parts as f64);
        }
    }
    (time, bytes)
}
