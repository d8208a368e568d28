//! The NPU interpreter: loads an `npu.kernel` once (`program`: decoded into steps, timed with the machine's cycle
//! costs by `schedule`: queues, semaphores, barriers, deadlocks and races), then an [`Npu`] runs it on inputs,
//! carrying out its data movement on byte memories (`memory`) in the order the steps started. A race-free program
//! gives the same bytes in any order that keeps happens-before, and the schedule has already refused every other
//! program.
//!
//! The kernel's buffers are its arguments, named `arg0`, `arg1`, ... in order: each is bound to an array of its
//! length and element type, or left unbound (nothing written yet: reading it is an error). Every buffer that an
//! instruction writes or that nothing bound is returned at the end. It runs every instruction of the dialect.

pub mod background;
pub mod deferred;
pub mod execute;
pub mod forward;
pub mod lazy_fill;
pub mod matmul;
pub mod memory;
pub mod moves;
pub mod parallel;
pub mod program;
pub mod run_index;
pub mod schedule;
pub mod shared_a;
pub mod spare;
pub mod stacked;
pub mod state;
pub mod trace;
pub mod trf_forward;

use super::types::elem_name;
use crate::array::Array;
use crate::dialects::npu::ops::instruction::Site;
use crate::ir::{Context, OpId};
use crate::machine::NpuConfig;
use execute::run_in_order;
use indexmap::IndexMap;
use memory::{from_bytes, to_bytes, Bytes};
pub use program::Program;
use schedule::Schedule;
use spare::Spare;
use state::Memories;
use std::collections::BTreeMap;

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
    /// `arg0`, `arg1`, ...: the contents at the end of each buffer some instruction writes or nothing bound (a
    /// buffer bound to an input and only read is not copied back: it is still that input).
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

/// Runs `kernel` with `inputs` bound by argument name, on the machine it is written for (`npu.machine`), on a new
/// [`Npu`].
pub fn run_kernel(ctx: &Context, kernel: OpId, inputs: &IndexMap<String, Array>) -> Result<Run, InterpError> {
    Npu::default().launch(&Program::load(ctx, kernel)?, inputs)
}

/// An NPU that runs loaded kernels one after another. It keeps the memories of its last run for the next (their
/// pages, never their contents), as a runtime keeps device memory: running a kernel again then costs no fresh pages,
/// which take longer to fault in than the bytes take to copy.
#[derive(Debug)]
pub struct Npu {
    spare: Spare,
    /// Whether DMAs out of HBM become forwards (`forward`), carried out only when needed.
    lazy: bool,
}

impl Default for Npu {
    fn default() -> Npu {
        Npu { spare: Spare::default(), lazy: true }
    }
}

impl Npu {
    /// An NPU that carries out every DMA at once: the same results, slower (the reference the lazy copies are
    /// tested against).
    pub fn eager() -> Npu {
        Npu { lazy: false, ..Npu::default() }
    }

    /// Runs `program` with `inputs` bound by argument name.
    pub fn launch(&mut self, program: &Program, inputs: &IndexMap<String, Array>) -> Result<Run, InterpError> {
        let hbm = bind(program, inputs, &mut self.spare)?;
        let mut mem = Memories::new(hbm, &program.machine, std::mem::take(&mut self.spare));
        let buffers = run_in_order(program, &mut mem, self.lazy)
            .map_err(|(k, m)| InterpError::at(Some(program.ops[k]), m))
            .and_then(|()| {
                mem.carry_out_into_hbm();
                read_back(program, inputs, &mut mem)
            });
        self.spare = mem.into_spare();
        Ok(Run {
            buffers: buffers?,
            schedule: program.schedule.clone(),
            queues: program.queues.clone(),
            steps: program.steps.clone(),
            machine: program.machine.clone(),
            moved: program.moved.clone(),
        })
    }
}

/// The contents of the buffers some instruction writes and of those nothing bound, as `arg0`, `arg1`, ...: a buffer
/// bound to an input and only read is that input still, which the caller has.
fn read_back(
    program: &Program,
    inputs: &IndexMap<String, Array>,
    mem: &mut Memories,
) -> Result<IndexMap<String, Array>, InterpError> {
    let mut buffers = IndexMap::new();
    for (i, ((_, dtype), bytes)) in program.buffers.iter().zip(&mut mem.hbm).enumerate() {
        let name = format!("arg{i}");
        if !program.written[i] && inputs.contains_key(&name) {
            continue;
        }
        let array = from_bytes(*dtype, bytes.contents())
            .map_err(|e| InterpError::at(Some(program.kernel), format!("reading {name} back: {e}")))?;
        buffers.insert(name, array.expect("a type buffers bind to"));
    }
    Ok(buffers)
}

/// The HBM buffers (memories taken from `spare`), from the inputs bound to them (checked against their types) or
/// empty.
fn bind(program: &Program, inputs: &IndexMap<String, Array>, spare: &mut Spare) -> Result<Vec<Bytes>, InterpError> {
    let err = |message: String| InterpError::at(Some(program.kernel), message);
    let mut out = Vec::with_capacity(program.buffers.len());
    for (i, (t, dtype)) in program.buffers.iter().enumerate() {
        let name = format!("arg{i}");
        out.push(match inputs.get(&name) {
            None => spare.take(Site::Hbm(i as u32), t.bytes() as usize),
            Some(a) if a.dtype() == *dtype && a.len() as u64 == t.len => {
                let mut bytes = spare.take(Site::Hbm(i as u32), t.bytes() as usize);
                bytes.write(0, &to_bytes(a).expect("a bindable type"));
                bytes
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
    let args = program.buffers.len();
    if let Some(name) = inputs.keys().find(|n| !(0..args).any(|i| **n == format!("arg{i}"))) {
        return Err(err(format!(
            "the kernel has no argument '{name}' (it has arg0 ... arg{})",
            args.saturating_sub(1)
        )));
    }
    Ok(out)
}
