//! A kernel loaded for the interpreter: its argument buffers checked, each instruction decoded once into a step
//! (queue, semaphores, cycles, footprints from the memory-effects interface) and what it does, and the steps
//! scheduled (queues, semaphores, cycles; races and deadlocks refused). What a kernel does and when depends only on
//! its instructions, never on the data, so one loaded program runs on any inputs.

use super::execute::dma_groups;
use super::schedule::{schedule, Footprint, Schedule, ScheduleError, Step};
use super::trf_forward::TrfPlan;
use super::{InterpError, MAX_CLOCK_ENTRIES, MAX_HBM_BYTES, MAX_ONCHIP_BYTES, MIN_SITE_BYTES};
use crate::array::DType;
use crate::dialects::npu::dma::{Dma, Memory};
use crate::dialects::npu::effects::effects;
use crate::dialects::npu::interp::memory::dtype_of;
use crate::dialects::npu::machine_attr::machine_of;
use crate::dialects::npu::ops::clauses::{queue_index, sync_of};
use crate::dialects::npu::ops::instruction::{check_work, Access, Instruction, Site};
use crate::dialects::npu::types::{as_buf, elem_name, BufType};
use crate::interfaces::memory_effects::{EffectKind, Extent};
use crate::ir::{BlockId, Context, OpId, ValueId};
use crate::machine::NpuConfig;
use std::collections::{BTreeMap, HashMap, HashSet};

/// A kernel decoded and scheduled, ready to run.
#[derive(Clone, Debug)]
pub struct Program {
    /// The `npu.kernel` op.
    pub kernel: OpId,
    /// The machine it is written for.
    pub machine: NpuConfig,
    /// Each argument's buffer and the array type it binds to.
    pub buffers: Vec<(BufType, DType)>,
    /// Per argument: whether some instruction writes its buffer.
    pub written: Vec<bool>,
    /// What each step does (`None` for a barrier).
    pub(super) actions: Vec<Option<Instruction>>,
    /// The memory accesses of each step.
    pub(super) accesses: Vec<Vec<Access>>,
    /// The single-slice commands of each DMA step (empty for other steps): a spread's parts.
    pub(super) parts: Vec<Vec<Dma>>,
    /// The op of each step.
    pub(super) ops: Vec<OpId>,
    /// The steps in the order they start.
    pub(super) order: Vec<usize>,
    /// Per position in `order` where DMAs that may run at once start, how many there are (0 elsewhere).
    pub(super) dma_groups: Vec<usize>,
    /// The TRF loads a lazy run elides and the matmuls that read through them.
    pub(super) trf: TrfPlan,
    /// When each step runs, queue by queue.
    pub schedule: Schedule,
    /// The name of each queue of the schedule.
    pub queues: Vec<String>,
    /// Per step: the instruction (`npu.dma at file.tap:3:3`) and its queue (none for a barrier).
    pub steps: Vec<(String, Option<usize>)>,
    /// Bytes DMAs move, per pair of memory tiers and per link between chips.
    pub moved: BTreeMap<String, u64>,
}

impl Program {
    /// Loads `kernel`: its arguments, instructions and schedule, on the machine it is written for (`npu.machine`).
    pub fn load(ctx: &Context, kernel: OpId) -> Result<Program, InterpError> {
        let machine = machine_of(ctx, kernel).map_err(|m| InterpError::at(Some(kernel), m))?;
        let region = ctx.body.regions(kernel)[0];
        let entry = *ctx.body.region(region).blocks.first().ok_or(InterpError::at(Some(kernel), "no body".into()))?;
        let args: Vec<ValueId> = ctx.body.block(entry).args.clone();
        let buffers = buffers(ctx, kernel, &args)?;
        let (steps, actions, accesses, ops, semaphores) = decode_program(ctx, entry, &machine)?;
        let per_chip = machine.dma_engines as usize + 2;
        let schedule = schedule_used(steps.clone(), per_chip * machine.chips as usize, semaphores)
            .map_err(|e| schedule_error(e, &ops))?
            .map_err(|m| InterpError::at(Some(kernel), m))?;
        let mut order: Vec<usize> = (0..steps.len()).collect();
        order.sort_by_key(|&k| (schedule.start[k], k));
        let labels = ops.iter().zip(&steps).map(|(&op, step)| {
            let label = format!("{} at {}", ctx.op_name(op), ctx.loc_text(ctx.body.op(op).loc));
            (label, (!step.barrier).then_some(step.queue))
        });
        let steps = labels.collect();
        let moved = moved(&actions, &buffers);
        let queues = queue_names(&machine);
        let mut written = vec![false; buffers.len()];
        for a in accesses.iter().flatten().filter(|a| a.write) {
            if let Site::Hbm(r) = a.site {
                written[r as usize] = true;
            }
        }
        let trf = TrfPlan::of(&actions, &accesses, &order, &machine);
        let parts: Vec<Vec<Dma>> =
            actions.iter().map(|a| if let Some(Instruction::Dma(d)) = a { d.parts() } else { Vec::new() }).collect();
        let dma_groups = dma_groups(&order, &parts);
        Ok(Program {
            kernel,
            machine,
            buffers,
            written,
            actions,
            accesses,
            parts,
            ops,
            order,
            dma_groups,
            trf,
            schedule,
            queues,
            steps,
            moved,
        })
    }
}

/// Each argument's buffer type and the array type it binds to; an error for an argument that is not a buffer, one
/// of a type arrays do not have, or buffers past [`MAX_HBM_BYTES`].
fn buffers(ctx: &Context, kernel: OpId, args: &[ValueId]) -> Result<Vec<(BufType, DType)>, InterpError> {
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
        out.push((t.clone(), dtype));
    }
    Ok(out)
}

/// The queues' names: `dma0` ... `main`, `sub`, prefixed `chip1.` and so on when there are several chips.
fn queue_names(cfg: &NpuConfig) -> Vec<String> {
    let mut local: Vec<String> = (0..cfg.dma_engines).map(|e| format!("dma{e}")).collect();
    local.extend(["main".to_string(), "sub".to_string()]);
    match cfg.chips {
        1 => local,
        chips => (0..chips).flat_map(|c| local.iter().map(move |q| format!("chip{c}.{q}"))).collect(),
    }
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
fn moved(actions: &[Option<Instruction>], buffers: &[(BufType, DType)]) -> BTreeMap<String, u64> {
    let chip_of = |region: u32| buffers[region as usize].0.chip;
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
        let bytes = d.src.pattern.bytes().unwrap_or(u64::MAX).saturating_mul(d.slices());
        let total = out.entry(key).or_insert(0u64);
        *total = total.saturating_add(bytes);
    }
    out
}

/// Per instruction: its step, what it does, its memory accesses and its op; and the number of semaphores.
type Decoded = (Vec<Step>, Vec<Option<Instruction>>, Vec<Vec<Access>>, Vec<OpId>, usize);

/// Each instruction as a step of the schedule (its footprints from the memory-effects interface) and what it does,
/// with the number of semaphores.
fn decode_program(ctx: &Context, entry: BlockId, cfg: &NpuConfig) -> Result<Decoded, InterpError> {
    let mut sems: HashMap<ValueId, usize> = HashMap::new();
    let mut memories: HashMap<(&'static str, u64), u64> = HashMap::new();
    let (mut steps, mut actions, mut all_accesses, mut ops) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
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
        let mut step_accesses = Vec::new();
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
                step_accesses = accesses;
                step
            }
        };
        steps.push(step);
        actions.push(instruction);
        all_accesses.push(step_accesses);
        ops.push(op);
    }
    Ok((steps, actions, all_accesses, ops, sems.len()))
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
