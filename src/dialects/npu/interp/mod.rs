//! The NPU interpreter: decodes an `npu.kernel` once into steps, times them with the machine's cycle costs
//! (`schedule`: queues, semaphores, barriers, deadlocks and races), then carries out their data movement on byte
//! memories (`memory`) in the order they started. A race-free program gives the same bytes in any order that keeps
//! happens-before, and the schedule has already refused every other program.
//!
//! The kernel's buffers are its arguments, named `arg0`, `arg1`, ... in order: each is bound to an array of its
//! length and element type, or left unbound (nothing written yet: reading it is an error). Every buffer is
//! returned at the end. This version runs `npu.semaphore`, `npu.barrier`, `npu.dma`, `npu.memset` and the vector
//! ops; other instructions are an error at the instruction.

pub mod memory;
pub mod schedule;
pub mod trace;

use super::access::AccessPattern;
use super::dma::{Dma, Memory};
use super::ops::clauses::{queue_index, sync_of};
use super::ops::dma_op::decode;
use super::ops::memset::{self, Memset};
use super::ops::onchip::{Operand, Space};
use super::ops::vector::{self, Vector};
use super::types::{as_buf, elem_name};
use crate::array::Array;
use crate::ir::{Context, OpId, ValueId};
use crate::machine::NpuConfig;
use indexmap::IndexMap;
use memory::{dtype_of, from_bytes, to_bytes, Bytes};
use schedule::{schedule, Footprint, Schedule, ScheduleError, Step};
use std::collections::HashMap;

/// Most bytes the interpreter holds for a kernel's HBM buffers; past it, an error before anything runs.
pub const MAX_HBM_BYTES: u64 = 1 << 32;

/// Most packets of one operand the race detector follows one by one; an operand of more is taken as the whole range
/// it spans (two such operands that interleave without touching are then reported as a race).
pub const MAX_FOOTPRINT_PACKETS: u64 = 256;

/// Why a kernel could not run: a message, at an instruction when one is at fault, and the other instruction of a
/// race.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InterpError {
    /// The instruction at fault.
    pub op: Option<OpId>,
    /// What went wrong.
    pub message: String,
    /// The instruction it races with.
    pub other: Option<OpId>,
}

impl InterpError {
    fn at(op: Option<OpId>, message: String) -> InterpError {
        InterpError { op, message, other: None }
    }

    /// The diagnostic: an error at the instruction (a note at the one it races with), or none without a place.
    pub fn diagnostic(&self, ctx: &Context) -> Option<crate::ir::Diagnostic> {
        let d = crate::ir::Diagnostic::error(ctx.body.op(self.op?).loc, self.message.clone());
        Some(match self.other {
            Some(other) => d.with_note(ctx.body.op(other).loc, "the instruction it races with"),
            None => d,
        })
    }
}

/// What a run gives: the buffers at the end, and the schedule with each queue's name.
#[derive(Clone, Debug)]
pub struct Run {
    /// `arg0`, `arg1`, ...: each buffer's contents at the end.
    pub buffers: IndexMap<String, Array>,
    /// When each instruction ran, queue by queue.
    pub schedule: Schedule,
    /// The name of each queue of the schedule.
    pub queues: Vec<String>,
    /// Per step of the schedule: the instruction (`npu.dma at file.tap:3:3`) and its queue (none for a barrier).
    pub steps: Vec<(String, Option<usize>)>,
}

/// What one decoded instruction does to memory.
enum Action {
    Nothing,
    Copy(Dma),
    Fill(Memset),
    Vector(Vector),
}

/// The on-chip memories by space and slice, each allocated when first touched.
type OnChip = HashMap<(Space, u64, u64), Bytes>;

/// Runs `kernel` with `inputs` bound by argument name on the machine `cfg`.
pub fn run_kernel(
    ctx: &Context,
    kernel: OpId,
    inputs: &IndexMap<String, Array>,
    cfg: &NpuConfig,
) -> Result<Run, InterpError> {
    let at = |op: OpId| move |message: String| InterpError::at(Some(op), message);
    let region = ctx.body.regions(kernel)[0];
    let entry = *ctx.body.region(region).blocks.first().ok_or(InterpError::at(Some(kernel), "no body".into()))?;
    let args: Vec<ValueId> = ctx.body.block(entry).args.clone();
    let mut hbm = bind(ctx, kernel, &args, inputs)?;
    let (steps, actions, ops, semaphores) = decode_program(ctx, entry, cfg)?;
    let queues = cfg.dma_engines as usize + 2;
    let timing = schedule(&steps, queues, semaphores).map_err(|e| schedule_error(e, &ops))?;
    let mut order: Vec<usize> = (0..steps.len()).collect();
    order.sort_by_key(|&k| (timing.start[k], k));
    let mut chip: OnChip = HashMap::new();
    for k in order {
        match &actions[k] {
            Action::Copy(dma) => copy(dma, &mut hbm, &mut chip, cfg).map_err(at(ops[k]))?,
            Action::Fill(m) => fill(m, &mut chip, cfg),
            Action::Vector(v) => vector(v, &mut chip, cfg).map_err(at(ops[k]))?,
            Action::Nothing => {}
        }
    }
    let mut buffers = IndexMap::new();
    for (i, (&arg, bytes)) in args.iter().zip(&hbm).enumerate() {
        let t = as_buf(ctx, ctx.body.value_type(arg)).expect("verified");
        let dtype = dtype_of(t.elem).expect("checked when bound");
        buffers.insert(format!("arg{i}"), from_bytes(dtype, bytes.raw()).expect("a whole number of elements"));
    }
    let mut names: Vec<String> = (0..cfg.dma_engines).map(|e| format!("dma{e}")).collect();
    names.extend(["main".to_string(), "sub".to_string()]);
    let labels = ops.iter().zip(&steps).map(|(&op, step)| {
        let label = format!("{} at {}", ctx.op_name(op), ctx.loc_text(ctx.body.op(op).loc));
        (label, (!step.barrier).then_some(step.queue))
    });
    Ok(Run { buffers, schedule: timing, queues: names, steps: labels.collect() })
}

/// The HBM buffers, from the inputs bound to them (checked against their types) or empty.
fn bind(
    ctx: &Context,
    kernel: OpId,
    args: &[ValueId],
    inputs: &IndexMap<String, Array>,
) -> Result<Vec<Bytes>, InterpError> {
    let err = |message: String| InterpError::at(Some(kernel), message);
    let mut total = 0u64;
    let mut out = Vec::with_capacity(args.len());
    for (i, &arg) in args.iter().enumerate() {
        let t = as_buf(ctx, ctx.body.value_type(arg)).ok_or_else(|| err(format!("argument #{i} is not a buffer")))?;
        let dtype = dtype_of(t.elem)
            .ok_or_else(|| err(format!("arg{i}: {} buffers cannot be bound yet", elem_name(t.elem))))?;
        total = total.saturating_add(t.bytes());
        if total > MAX_HBM_BYTES {
            return Err(err(format!("the buffers take more than MAX_HBM_BYTES ({MAX_HBM_BYTES}) bytes")));
        }
        let name = format!("arg{i}");
        out.push(match inputs.get(&name) {
            None => Bytes::empty(t.bytes() as usize),
            Some(a) if a.dtype() == dtype && a.len() as u64 == t.len => {
                Bytes::full(to_bytes(a).expect("a bindable type"))
            }
            Some(a) => {
                return Err(err(format!(
                    "{name} is {} x {} but its input holds {} x {}",
                    t.len,
                    elem_name(t.elem),
                    a.len(),
                    a.dtype()
                )))
            }
        });
    }
    if let Some(name) = inputs.keys().find(|n| !(0..args.len()).any(|i| **n == format!("arg{i}"))) {
        return Err(err(format!(
            "the kernel has no argument '{name}' (it has arg0 ... arg{})",
            args.len().saturating_sub(1)
        )));
    }
    Ok(out)
}

type Program = (Vec<Step>, Vec<Action>, Vec<OpId>, usize);

/// Each instruction as a step of the schedule and an action on memory, with the number of semaphores.
fn decode_program(ctx: &Context, entry: crate::ir::BlockId, cfg: &NpuConfig) -> Result<Program, InterpError> {
    let mut sems: HashMap<ValueId, usize> = HashMap::new();
    let (mut steps, mut actions, mut ops) = (Vec::new(), Vec::new(), Vec::new());
    for op in ctx.body.block_ops(entry) {
        let err = |message: String| InterpError::at(Some(op), message);
        let (step, action) = match ctx.op_name(op) {
            "npu.semaphore" => {
                let v = ctx.body.results(op).next().expect("one result");
                let n = sems.len();
                sems.insert(v, n);
                continue;
            }
            "npu.barrier" => (Step { barrier: true, ..Step::default() }, Action::Nothing),
            "npu.dma" => {
                let (dma, _) = decode(ctx, op, cfg).map_err(err)?;
                let buffers =
                    [dma.src.memory, dma.dst.memory].iter().filter(|m| matches!(m, Memory::Hbm { .. })).count();
                let mut step = synced(ctx, op, buffers, &sems, cfg).map_err(err)?;
                step.cycles = dma.cycles(cfg);
                step.reads = footprint(&dma.src.memory, &dma.src.pattern);
                step.writes = footprint(&dma.dst.memory, &dma.dst.pattern);
                (step, Action::Copy(dma))
            }
            "npu.memset" => {
                let m = memset::decode(ctx, op).map_err(err)?;
                let mut step = synced(ctx, op, 0, &sems, cfg).map_err(err)?;
                step.cycles = m.cycles(cfg);
                let slice = |s: u64| pieces(on_chip_id(m.dst.space, m.slices.cluster, s), &m.dst.pattern);
                step.writes = (m.slices.first..m.slices.end).flat_map(slice).collect();
                (step, Action::Fill(m))
            }
            "npu.vec.unary" | "npu.vec.binary" => {
                let v = vector::decode(ctx, op).map_err(err)?;
                let mut step = synced(ctx, op, 0, &sems, cfg).map_err(err)?;
                step.cycles = v.cycles(cfg);
                let on_slices = |o: &Operand| -> Vec<Footprint> {
                    let s = v.slices;
                    (s.first..s.end).flat_map(|k| pieces(on_chip_id(o.space, s.cluster, k), &o.pattern)).collect()
                };
                step.reads = v.reads().into_iter().flat_map(on_slices).collect();
                step.writes = on_slices(&v.dst);
                (step, Action::Vector(v))
            }
            other => return Err(err(format!("the interpreter cannot run '{other}' yet"))),
        };
        steps.push(step);
        actions.push(action);
        ops.push(op);
    }
    Ok((steps, actions, ops, sems.len()))
}

/// A step of `op` on its queue with its semaphores (after `buffers` buffer operands); cycles and footprints to fill.
fn synced(
    ctx: &Context,
    op: OpId,
    buffers: usize,
    sems: &HashMap<ValueId, usize>,
    cfg: &NpuConfig,
) -> Result<Step, String> {
    let sync = sync_of(ctx, op, buffers)?;
    let queue = queue_index(&sync.queue, cfg.dma_engines).ok_or_else(|| format!("no queue '{}'", sync.queue))?;
    let sem = |(v, value): &(ValueId, u64)| sems.get(v).map(|&s| (s, *value));
    let waits = sync.waits.iter().map(sem).collect::<Option<Vec<_>>>();
    let signals = sync.signals.iter().map(sem).collect::<Option<Vec<_>>>();
    let (Some(waits), Some(signals)) = (waits, signals) else {
        return Err("a semaphore operand is not an npu.semaphore of this kernel".into());
    };
    Ok(Step { queue, waits, signals, ..Step::default() })
}

/// The number the schedule knows a slice's memory by (HBM buffers are numbered by argument, below 2^32).
fn on_chip_id(space: Space, cluster: u64, slice: u64) -> u64 {
    let space = match space {
        Space::Dm => 1u64,
        Space::Acc => 2,
    };
    (space << 32) + (cluster << 16) + slice
}

/// The bytes a side touches.
fn footprint(memory: &Memory, pattern: &AccessPattern) -> Vec<Footprint> {
    let memory = match *memory {
        Memory::Hbm { region, .. } => region as u64,
        Memory::Dm { cluster, slice } => on_chip_id(Space::Dm, cluster, slice),
    };
    pieces(memory, pattern)
}

/// The bytes `pattern` touches in `memory`: packet by packet (runs of adjacent packets merged) when there are at
/// most [`MAX_FOOTPRINT_PACKETS`], so that patterns that interleave without touching are not a race; otherwise the
/// one range they span.
fn pieces(memory: u64, pattern: &AccessPattern) -> Vec<Footprint> {
    let Some((low, high)) = pattern.range() else { return Vec::new() };
    if pattern.packets().is_none_or(|n| n > MAX_FOOTPRINT_PACKETS) {
        return vec![Footprint { memory, low, high }];
    }
    let mut starts: Vec<i128> = pattern.offsets().map(|o| pattern.base as i128 + o).collect();
    starts.sort_unstable();
    let mut out: Vec<Footprint> = Vec::new();
    for start in starts {
        let end = start + pattern.packet as i128;
        match out.last_mut() {
            Some(last) if start <= last.high => last.high = last.high.max(end),
            _ => out.push(Footprint { memory, low: start, high: end }),
        }
    }
    out
}

/// Carries out `m`: the value in every packet of every slice of its range.
fn fill(m: &Memset, chip: &mut OnChip, cfg: &NpuConfig) {
    let element = m.element();
    let pattern = &m.dst.pattern;
    let packet: Vec<u8> = element.iter().copied().cycle().take(pattern.packet as usize).collect();
    for slice in m.slices.first..m.slices.end {
        let bytes = on_chip(chip, m.dst.space, m.slices.cluster, slice, cfg);
        for offset in pattern.offsets() {
            bytes.write((pattern.base as i128 + offset) as usize, &packet); // In bounds: verified.
        }
    }
}

/// Carries out `v` on each of its slices: gathers the operands' elements, applies the function, scatters the
/// results.
fn vector(v: &Vector, chip: &mut OnChip, cfg: &NpuConfig) -> Result<(), String> {
    for slice in v.slices.first..v.slices.end {
        let mut inputs = Vec::new();
        for o in v.reads() {
            let bytes = on_chip(chip, o.space, v.slices.cluster, slice, cfg);
            let mut gathered = Vec::with_capacity(o.pattern.bytes().unwrap_or(0) as usize);
            for offset in o.pattern.offsets() {
                let at = (o.pattern.base as i128 + offset) as usize; // In bounds: verified.
                let packet = bytes.read(at, o.pattern.packet as usize);
                gathered.extend_from_slice(
                    packet.map_err(|b| {
                        format!("reads byte {b} of {} slice {slice}, which nothing wrote", o.space.name())
                    })?,
                );
            }
            inputs.push(gathered.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect());
        }
        let results: Vec<u8> = v.apply(&inputs)?.iter().flat_map(|w| w.to_le_bytes()).collect();
        let bytes = on_chip(chip, v.dst.space, v.slices.cluster, slice, cfg);
        let packet = v.dst.pattern.packet as usize;
        for (offset, chunk) in v.dst.pattern.offsets().zip(results.chunks_exact(packet.max(1))) {
            bytes.write((v.dst.pattern.base as i128 + offset) as usize, chunk);
        }
    }
    Ok(())
}

/// A slice's memory of `space`, allocated when first touched.
fn on_chip<'m>(chip: &'m mut OnChip, space: Space, cluster: u64, slice: u64, cfg: &NpuConfig) -> &'m mut Bytes {
    chip.entry((space, cluster, slice)).or_insert_with(|| Bytes::empty(space.capacity(cfg) as usize))
}

fn schedule_error(e: ScheduleError, ops: &[OpId]) -> InterpError {
    match e {
        ScheduleError::Deadlock(blocked) => {
            let waits: Vec<String> = blocked
                .iter()
                .map(|(_, s, need, have)| format!("semaphore #{s} at {have}, waiting for {need}"))
                .collect();
            let message = format!("deadlock: no queue can go on ({})", waits.join("; "));
            InterpError::at(blocked.first().map(|b| ops[b.0]), message)
        }
        ScheduleError::Race(a, b, _) => InterpError {
            op: Some(ops[b]),
            message: "races with an instruction on another queue: both touch the same bytes, one writes, and no \
                      semaphore or barrier orders them"
                .into(),
            other: Some(ops[a]),
        },
        ScheduleError::NotIncreasing(k, s, from, to) => InterpError::at(
            Some(ops[k]),
            format!("sets semaphore #{s} from {from} to {to}: a timeline semaphore only increases"),
        ),
        ScheduleError::Malformed(k) => {
            InterpError::at(ops.get(k).copied(), "names a queue or semaphore the machine does not have".into())
        }
    }
}

/// Carries out `dma`: each packet of the source to its place in the destination.
fn copy(dma: &Dma, hbm: &mut [Bytes], dm: &mut OnChip, cfg: &NpuConfig) -> Result<(), String> {
    let packet = dma.src.pattern.packet as usize;
    let mut buffer = vec![0u8; packet];
    for (s, d) in dma.src.pattern.offsets().zip(dma.dst.pattern.offsets()) {
        let from = (dma.src.pattern.base as i128 + s) as usize; // In bounds: the verifier checked both sides.
        let to = (dma.dst.pattern.base as i128 + d) as usize;
        let src = memory(&dma.src.memory, hbm, dm, cfg);
        buffer.copy_from_slice(src.read(from, packet).map_err(|at| format!("reads byte {at}, which nothing wrote"))?);
        memory(&dma.dst.memory, hbm, dm, cfg).write(to, &buffer);
    }
    Ok(())
}

fn memory<'m>(memory: &Memory, hbm: &'m mut [Bytes], chip: &'m mut OnChip, cfg: &NpuConfig) -> &'m mut Bytes {
    match *memory {
        Memory::Hbm { region, .. } => &mut hbm[region as usize],
        Memory::Dm { cluster, slice } => on_chip(chip, Space::Dm, cluster, slice, cfg),
    }
}
