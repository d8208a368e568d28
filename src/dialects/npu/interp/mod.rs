//! The NPU interpreter: decodes an `npu.kernel` once into steps, times them with the machine's cycle costs
//! (`schedule`: queues, semaphores, barriers, deadlocks and races), then carries out their data movement on byte
//! memories (`memory`) in the order they started. A race-free program gives the same bytes in any order that keeps
//! happens-before, and the schedule has already refused every other program.
//!
//! The kernel's buffers are its arguments, named `arg0`, `arg1`, ... in order: each is bound to an array of its
//! length and element type, or left unbound (nothing written yet: reading it is an error). Every buffer is
//! returned at the end. It runs every instruction of the dialect.

pub mod execute;
pub mod memory;
pub mod schedule;
pub mod state;
pub mod trace;

use super::dma::Memory;
use super::effects::effects;
use super::machine_attr::machine_of;
use super::ops::clauses::{queue_index, sync_of};
use super::ops::instruction::{check_work, Instruction, Site};
use super::types::{as_buf, elem_name};
use crate::array::Array;
use crate::interfaces::memory_effects::{EffectKind, Extent};
use crate::ir::{Context, OpId, ValueId};
use crate::machine::NpuConfig;
use execute::run_in_order;
use indexmap::IndexMap;
use memory::{dtype_of, from_bytes, to_bytes, Bytes};
use schedule::{schedule, Footprint, Schedule, ScheduleError, Step};
use state::Memories;
use std::collections::{BTreeMap, HashMap, HashSet};

/// Most bytes the interpreter holds for a kernel's HBM buffers; past it, an error before anything runs.
pub const MAX_HBM_BYTES: u64 = 1 << 32;

/// Most bytes the interpreter holds for the on-chip memories a kernel touches (each slice's DM, accumulator, TRF and
/// VRF that some instruction names, at the machine's sizes, each counted as at least [`MIN_SITE_BYTES`]); past it,
/// an error before anything runs.
pub const MAX_ONCHIP_BYTES: u64 = 1 << 32;

/// What one on-chip memory counts against [`MAX_ONCHIP_BYTES`] at the least: its bookkeeping (maps, footprints).
pub const MIN_SITE_BYTES: u64 = 1 << 16;

/// Most entries of the race detector's vector clocks: steps × queues used (past it, an error before anything runs).
pub const MAX_CLOCK_ENTRIES: u64 = 1 << 26;

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
    /// The machine it ran on.
    pub machine: NpuConfig,
    /// Bytes DMAs moved, per pair of memory tiers (`hbm -> dm`, ...) and per link between chips
    /// (`link chip0 -> chip1`).
    pub moved: BTreeMap<String, u64>,
}

/// Runs `kernel` with `inputs` bound by argument name, on the machine it is written for (`npu.machine`).
pub fn run_kernel(ctx: &Context, kernel: OpId, inputs: &IndexMap<String, Array>) -> Result<Run, InterpError> {
    let cfg = &machine_of(ctx, kernel).map_err(|m| InterpError::at(Some(kernel), m))?;
    let at = |op: OpId| move |message: String| InterpError::at(Some(op), message);
    let region = ctx.body.regions(kernel)[0];
    let entry = *ctx.body.region(region).blocks.first().ok_or(InterpError::at(Some(kernel), "no body".into()))?;
    let args: Vec<ValueId> = ctx.body.block(entry).args.clone();
    let mut mem = Memories::new(bind(ctx, kernel, &args, inputs)?, cfg);
    let (steps, actions, ops, semaphores) = decode_program(ctx, entry, cfg)?;
    let per_chip = cfg.dma_engines as usize + 2;
    let timing = schedule_used(steps.clone(), per_chip * cfg.chips as usize, semaphores)
        .map_err(|e| schedule_error(e, &ops))?
        .map_err(|m| InterpError::at(Some(kernel), m))?;
    let mut order: Vec<usize> = (0..steps.len()).collect();
    order.sort_by_key(|&k| (timing.start[k], k));
    run_in_order(&order, &actions, &mut mem, cfg).map_err(|(k, m)| at(ops[k])(m))?;
    let mut buffers = IndexMap::new();
    for (i, (&arg, bytes)) in args.iter().zip(&mem.hbm).enumerate() {
        let t = as_buf(ctx, ctx.body.value_type(arg)).expect("verified");
        let dtype = dtype_of(t.elem).expect("checked when bound");
        buffers.insert(format!("arg{i}"), from_bytes(dtype, bytes.raw()).expect("a whole number of elements"));
    }
    let mut local: Vec<String> = (0..cfg.dma_engines).map(|e| format!("dma{e}")).collect();
    local.extend(["main".to_string(), "sub".to_string()]);
    let names: Vec<String> = match cfg.chips {
        1 => local,
        chips => (0..chips).flat_map(|c| local.iter().map(move |q| format!("chip{c}.{q}"))).collect(),
    };
    let labels = ops.iter().zip(&steps).map(|(&op, step)| {
        let label = format!("{} at {}", ctx.op_name(op), ctx.loc_text(ctx.body.op(op).loc));
        (label, (!step.barrier).then_some(step.queue))
    });
    let moved = moved(&actions, ctx, &args);
    Ok(Run { buffers, schedule: timing, queues: names, steps: labels.collect(), machine: cfg.clone(), moved })
}

/// The schedule of `steps` over the queues they use only (the vector clocks are as long as that), its busy cycles
/// given back per queue of the machine's `queues`.
fn schedule_used(
    mut steps: Vec<Step>,
    queues: usize,
    semaphores: usize,
) -> Result<Result<Schedule, String>, ScheduleError> {
    let mut used: Vec<usize> = steps.iter().filter(|s| !s.barrier).map(|s| s.queue).collect();
    used.sort_unstable();
    used.dedup();
    let entries = (steps.len() as u64).saturating_mul(used.len().max(1) as u64);
    if entries > MAX_CLOCK_ENTRIES {
        let m = format!(
            "{} instructions on {} queues need {entries} vector-clock entries, more than MAX_CLOCK_ENTRIES ({MAX_CLOCK_ENTRIES})",
            steps.len(),
            used.len()
        );
        return Ok(Err(m));
    }
    for s in steps.iter_mut().filter(|s| !s.barrier) {
        s.queue = used.binary_search(&s.queue).expect("a used queue");
    }
    let mut timing = schedule(&steps, used.len(), semaphores)?;
    let mut busy = vec![0; queues];
    for (dense, &q) in used.iter().enumerate() {
        busy[q] = timing.busy[dense];
    }
    timing.busy = busy;
    Ok(Ok(timing))
}

/// The bytes each pair of memory tiers and each link carried.
fn moved(actions: &[Option<Instruction>], ctx: &Context, args: &[ValueId]) -> BTreeMap<String, u64> {
    let chip_of = |region: u32| as_buf(ctx, ctx.body.value_type(args[region as usize])).map_or(0, |t| t.chip);
    let tier = |m: &Memory| match m {
        Memory::Hbm { .. } => "hbm",
        Memory::Dm { .. } => "dm",
    };
    let mut out = BTreeMap::new();
    for d in actions.iter().flatten().filter_map(|i| if let Instruction::Dma(d) = i { Some(d) } else { None }) {
        let key = match (d.src.memory, d.dst.memory) {
            (Memory::Hbm { region: a, .. }, Memory::Hbm { region: b, .. }) if d.crosses_chips() => {
                format!("link chip{} -> chip{}", chip_of(a), chip_of(b))
            }
            (s, t) => format!("{} -> {}", tier(&s), tier(&t)),
        };
        *out.entry(key).or_insert(0u64) += d.src.pattern.bytes().unwrap_or(u64::MAX);
    }
    out
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

type Program = (Vec<Step>, Vec<Option<Instruction>>, Vec<OpId>, usize);

/// Each instruction as a step of the schedule (its footprints from the memory-effects interface) and what it does,
/// with the number of semaphores.
fn decode_program(ctx: &Context, entry: crate::ir::BlockId, cfg: &NpuConfig) -> Result<Program, InterpError> {
    let mut sems: HashMap<ValueId, usize> = HashMap::new();
    let mut memories: HashMap<(&'static str, u64), u64> = HashMap::new();
    let (mut steps, mut actions, mut ops) = (Vec::new(), Vec::new(), Vec::new());
    let mut touched: HashSet<Site> = HashSet::new();
    let mut onchip_bytes = 0u64;
    for op in ctx.body.block_ops(entry) {
        let err = |message: String| InterpError::at(Some(op), message);
        let name = ctx.op_name(op);
        if name == "npu.semaphore" {
            let v = ctx.body.results(op).next().expect("one result");
            let n = sems.len();
            sems.insert(v, n);
            continue;
        }
        let instruction = Instruction::decode(ctx, op, cfg).map_err(err)?;
        if let Some(i) = &instruction {
            i.check_rules(cfg).map_err(err)?; // The verifier did too; the library may be handed unverified IR.
        }
        let step = match &instruction {
            None if name == "npu.barrier" => Step { barrier: true, ..Step::default() },
            None => return Err(err(format!("the interpreter cannot run '{name}'"))),
            Some(i) => {
                let buffers = match i {
                    Instruction::Dma(d) => {
                        [&d.src.memory, &d.dst.memory].iter().filter(|m| matches!(m, Memory::Hbm { .. })).count()
                    }
                    _ => 0,
                };
                let mut step = synced(ctx, op, buffers, &sems, cfg).map_err(err)?;
                step.queue += i.chip() as usize * (cfg.dma_engines as usize + 2);
                step.cycles = i.cycles(cfg);
                let accesses = i.accesses(cfg);
                check_work(&accesses).map_err(err)?;
                for access in &accesses {
                    if let (Site::Slice(space, ..), true) = (access.site, touched.insert(access.site)) {
                        onchip_bytes = onchip_bytes.saturating_add(space.capacity(cfg).max(MIN_SITE_BYTES));
                    }
                }
                if onchip_bytes > MAX_ONCHIP_BYTES {
                    return Err(err(format!(
                        "the on-chip memories the kernel touches up to here take more than MAX_ONCHIP_BYTES ({MAX_ONCHIP_BYTES}) bytes"
                    )));
                }
                // The memory effects the dialect's interface implementation reports, from the instruction decoded
                // here (the implementation decodes the op again; this is the same function on the same accesses).
                for e in accesses.iter().flat_map(effects) {
                    let next = memories.len() as u64;
                    let extent = e.extent.unwrap_or(Extent::run(0, i128::MIN / 4, i128::MAX / 4));
                    let memory = *memories.entry((e.resource, extent.unit)).or_insert(next);
                    let footprint = Footprint { memory, extent };
                    match e.kind {
                        EffectKind::Write => step.writes.push(footprint),
                        _ => step.reads.push(footprint),
                    }
                }
                step
            }
        };
        steps.push(step);
        actions.push(instruction);
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
