//! What each device of the mesh does in a graph `teg-shard` split, read off the IR: the ops it runs, their compute
//! time, its peak memory from the live ranges of the values it holds, the bytes it receives and sends (the
//! `teg.reshard` transfer tables), and when it finishes: the critical path with transfers.
//!
//! Timing: every device runs its ops in program order. An op starts on a device when the device is free and its
//! operands are ready (a value is ready when the last of its holders has made it); a reshard's result is ready on
//! a receiving device once it has received its moves one after another, each taking the α–β time of the slowest
//! link among the mesh axes along which sender and receiver differ.
//!
//! Memory: a value occupies its holders from the op that makes it to its last reader (to the end for a value a
//! sink observes, from the start for a source). Views of values on every device (slices of sources, ops without
//! a plan) share their operand's cells and take nothing; a source cut by its plan takes only its pieces.

use super::ops::{decode, Io, OpKind};
use super::shard_plan::SHARD_ATTR;
use super::shard_problem::time_per_point;
use super::tensor_type::as_tensor;
use super::transfers::{devices_or_all, table_of, DEVICES_ATTR};
use crate::interfaces::sharding::index_maps_of;
use crate::ir::{Context, Diagnostic, OpId, ValueId};
use crate::machine::Machine;
use crate::shard::transfers::Move;
use std::collections::HashMap;

/// Most (device, value) pairs whose live ranges one graph's memory estimate may weigh; past it, an error.
pub const MAX_DEVICE_EVENTS: u64 = 1 << 26;

/// One device's share of a split graph.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DeviceCosts {
    /// Ops it runs (shards, and ops without devices that compute something, which run everywhere).
    pub ops: u64,
    /// Their compute time.
    pub compute: f64,
    /// The most bytes it holds at once.
    pub peak_memory: u64,
    /// Bytes it receives in reshards.
    pub received: u64,
    /// Bytes it sends.
    pub sent: u64,
    /// When it finishes its last op.
    pub finish: f64,
}

/// What the devices of a split graph do, and the bytes that cross each mesh axis's links.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SplitCosts {
    /// Per device (row-major rank).
    pub devices: Vec<DeviceCosts>,
    /// Per mesh axis, the bytes of the moves whose sender and receiver differ along it (a move across two axes
    /// counts on both).
    pub per_axis: Vec<u64>,
}

/// A value's bytes, its holders and its live range (op positions).
struct Held {
    bytes: u64,
    devices: Vec<usize>,
    from: usize,
    to: usize,
}

/// The costs of every device of `machine`'s mesh for the split graph `graph`; an error at the op at fault.
pub fn device_costs(ctx: &Context, graph: OpId, machine: &Machine) -> Result<SplitCosts, Diagnostic> {
    let ops: Vec<OpId> = super::graph_ops(ctx, graph).collect();
    let n = machine.mesh().num_devices();
    let mut out = vec![DeviceCosts::default(); n];
    let mut per_axis = vec![0u64; machine.mesh().axes().len()];
    let mut ready: HashMap<ValueId, f64> = HashMap::new();
    let mut held: HashMap<ValueId, Held> = HashMap::new();
    let end = ops.len().saturating_sub(1);
    for (step, &op) in ops.iter().enumerate() {
        let at = |m: String| Diagnostic::error(ctx.body.op(op).loc, format!("teg-cost: {m}"));
        let Ok(kind) = decode(ctx, op) else { continue };
        let observed = matches!(kind, OpKind::Io(Io::Sink { .. }));
        for v in ctx.body.operands(op) {
            if let Some(h) = held.get_mut(&v) {
                h.to = h.to.max(if observed { end } else { step });
            }
        }
        let start = ctx.body.operands(op).map(|v| ready.get(&v).copied().unwrap_or(0.0)).fold(0.0, f64::max);
        let finish = match table_of(ctx, op, machine.mesh()) {
            Some(table) => receive(&table.map_err(at)?.moves, start, machine, &mut out, &mut per_axis),
            None => compute(ctx, op, &kind, start, machine, &mut out).map_err(at)?,
        };
        let Some(result) = ctx.body.results(op).next() else { continue };
        ready.insert(result, finish);
        if let Some(h) = holding(ctx, op, &kind, result, machine).map_err(at)? {
            held.insert(result, Held { from: if h.from == 0 { 0 } else { step }, to: step, ..h });
        }
    }
    peaks(held.into_values(), &mut out).map_err(|m| Diagnostic::error(ctx.body.op(graph).loc, m))?;
    Ok(SplitCosts { devices: out, per_axis })
}

/// Runs `op` on its devices from `start`; returns when the last of them finishes (`start` for an op that takes
/// no time and runs nowhere in particular: views, inputs and outputs without devices).
fn compute(
    ctx: &Context,
    op: OpId,
    kind: &OpKind,
    start: f64,
    m: &Machine,
    out: &mut [DeviceCosts],
) -> Result<f64, String> {
    let per_point = time_per_point(ctx, op, kind, m)?;
    let marked = ctx.op_attr(op, DEVICES_ATTR).is_some();
    if !marked && (per_point == 0.0 || matches!(kind, OpKind::Io(_))) {
        return Ok(start);
    }
    let points = index_maps_of(ctx, op).map_or(0.0, |maps| maps.index.iter().map(|d| d.1 as f64).product());
    let work = points * per_point;
    let mut last = start;
    for d in devices_or_all(ctx, Some(op), m.mesh())? {
        let begin = out[d].finish.max(start);
        out[d].finish = begin + work;
        out[d].compute += work;
        out[d].ops += 1;
        last = last.max(out[d].finish);
    }
    Ok(last)
}

/// Delivers `moves` from `start`, each receiver taking its moves one after another; returns when the last lands.
fn receive(moves: &[Move], start: f64, m: &Machine, out: &mut [DeviceCosts], per_axis: &mut [u64]) -> f64 {
    let mut last = start;
    for mv in moves {
        for axis in differing(m, mv.from, mv.to) {
            per_axis[axis] = per_axis[axis].saturating_add(mv.bytes);
        }
        let time = link_time(m, mv.from, mv.to, mv.bytes as f64);
        let begin = out[mv.to].finish.max(start);
        out[mv.to].finish = begin + time;
        out[mv.to].received = out[mv.to].received.saturating_add(mv.bytes);
        out[mv.from].sent = out[mv.from].sent.saturating_add(mv.bytes);
        last = last.max(out[mv.to].finish);
    }
    last
}

/// The α–β time of `bytes` from `from` to `to`: the slowest link among the axes along which they differ.
fn link_time(m: &Machine, from: usize, to: usize, bytes: f64) -> f64 {
    differing(m, from, to).into_iter().map(|axis| m.links()[axis].transfer(bytes)).fold(0.0, f64::max)
}

/// The mesh axes along which two ranks differ.
fn differing(m: &Machine, from: usize, to: usize) -> Vec<usize> {
    let (Ok(a), Ok(b)) = (m.mesh().coords(from), m.mesh().coords(to)) else { return Vec::new() };
    a.iter().zip(&b).enumerate().filter(|(_, (x, y))| x != y).map(|(axis, _)| axis).collect()
}

/// The bytes `result` of `op` occupies and on which devices (`None` when it takes none of its own). `from` is 0
/// for a source (live from the start) and 1 otherwise (the caller sets the step).
fn holding(ctx: &Context, op: OpId, kind: &OpKind, result: ValueId, m: &Machine) -> Result<Option<Held>, String> {
    let Some(t) = as_tensor(ctx, ctx.body.value_type(result)) else { return Ok(None) };
    let marked = ctx.op_attr(op, DEVICES_ATTR).is_some();
    let source = matches!(kind, OpKind::Io(Io::Source { .. }));
    // A source cut into pieces (every reader a piece marked with its devices) is held as those pieces.
    let cut = source
        && ctx.op_attr(op, SHARD_ATTR).is_some()
        && ctx.body.has_uses(result)
        && ctx.body.uses(result).all(|(user, _)| ctx.op_attr(user, DEVICES_ATTR).is_some());
    if cut || (matches!(kind, OpKind::View(_)) && !marked) {
        return Ok(None);
    }
    let bytes = t.size().saturating_mul(t.dtype.size() as u64);
    let devices = devices_or_all(ctx, Some(op), m.mesh())?;
    Ok(Some(Held { bytes, devices, from: usize::from(!source), to: 0 }))
}

/// Each device's peak from the live ranges; an error past [`MAX_DEVICE_EVENTS`].
fn peaks(held: impl Iterator<Item = Held>, out: &mut [DeviceCosts]) -> Result<(), String> {
    let mut events: Vec<Vec<(usize, i128)>> = vec![Vec::new(); out.len()];
    let mut count = 0u64;
    for h in held {
        count += h.devices.len() as u64;
        if count > MAX_DEVICE_EVENTS {
            return Err(format!("teg-cost: more than MAX_DEVICE_EVENTS ({MAX_DEVICE_EVENTS}) (device, value) pairs"));
        }
        for &d in &h.devices {
            events[d].push((h.from, h.bytes as i128));
            events[d].push((h.to + 1, -(h.bytes as i128)));
        }
    }
    for (d, mut list) in events.into_iter().enumerate() {
        list.sort_unstable_by_key(|&(step, delta)| (step, delta));
        let mut live = 0i128;
        for (_, delta) in list {
            live += delta;
            out[d].peak_memory = out[d].peak_memory.max(live.clamp(0, u64::MAX as i128) as u64);
        }
    }
    Ok(())
}
