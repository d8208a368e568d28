//! Writing `npu` kernels in code, for passes that lower to the NPU: a [`KernelBuilder`] creates the kernel with
//! its HBM buffers and takes instructions in program order, each as its decoded value (a [`Dma`] or an
//! [`Instruction`]) and a queue; it checks the machine's rules for each, and synchronizes them itself: one
//! timeline semaphore per queue, each instruction signalling its position on its queue and waiting for the latest
//! instruction of each other queue whose bytes it depends on ([`hazards`]) unless what it already knows has
//! happened implies it ([`clocks`]). The interpreter's race detector is the check that this ordering is enough.

pub mod clocks;
pub mod hazards;
pub mod ops;

use crate::dialects::npu::dma::Dma;
use crate::dialects::npu::ops::clauses::{queue_index, Sync};
use crate::dialects::npu::ops::instruction::{check_work, Access, Instruction};
use crate::dialects::npu::types::{buf_type, sem_type, BufType};
use crate::ir::builder::OpState;
use crate::ir::rewrite::Rewriter;
use crate::ir::{Attr, BlockId, Loc, OpId, ValueDef, ValueId};
use crate::machine::{ElemType, NpuConfig};
use clocks::Clocks;
use hazards::{Hazards, Stamp};
use indexmap::IndexMap;

/// Most instructions a kernel written in code may hold: past it, [`KernelBuilder`] refuses the next one (a
/// lowering of tensors too large to simulate stops with an error instead of filling memory).
pub const MAX_KERNEL_INSTRUCTIONS: u64 = 1 << 22;

/// A kernel being written.
pub struct KernelBuilder {
    /// The `npu.kernel` op.
    pub kernel: OpId,
    block: BlockId,
    args: Vec<ValueId>,
    cfg: NpuConfig,
    /// Per `(chip, queue)`: its semaphore and the instructions issued on it.
    queues: IndexMap<(u64, String), (ValueId, u64)>,
    hazards: Hazards,
    clocks: Clocks,
    /// Per queue (by index), its instructions; and whether any instruction waits for it.
    issued: Vec<Vec<OpId>>,
    waited: Vec<bool>,
    /// The last semaphore made (the next goes after it).
    last_semaphore: Option<OpId>,
    /// Instructions written.
    pub written: u64,
}

impl KernelBuilder {
    /// Creates `npu.kernel @name` with one argument per buffer at the rewriter's insertion point, for machine
    /// `cfg`; instructions then go to its end.
    pub fn new(rw: &mut Rewriter<'_>, name: &str, buffers: &[BufType], cfg: NpuConfig, loc: Loc) -> KernelBuilder {
        let types: Vec<_> = buffers.iter().map(|b| buf_type(rw.interners(), b.clone())).collect();
        let outer = rw.insertion_point();
        let region = rw.create_region();
        let block = rw.create_block(region, &types);
        rw.set_insertion_point(outer);
        let sym = rw.interners().string_attr(name);
        let mut state = rw.op_state("npu.kernel");
        state = state.prop(rw.interners(), "sym_name", sym).region(region);
        state.loc = loc;
        let kernel = rw.create(state);
        let args = rw.ir().body.block(block).args.clone();
        KernelBuilder {
            kernel,
            block,
            args,
            cfg,
            queues: IndexMap::new(),
            hazards: Hazards::default(),
            clocks: Clocks::default(),
            issued: Vec::new(),
            waited: Vec::new(),
            last_semaphore: None,
            written: 0,
        }
    }

    /// The kernel's block.
    pub fn block(&self) -> BlockId {
        self.block
    }

    /// The machine it is written for.
    pub fn machine(&self) -> &NpuConfig {
        &self.cfg
    }

    /// The argument holding HBM region `region`.
    pub fn arg(&self, region: u32) -> ValueId {
        self.args[region as usize]
    }

    /// Writes DMA `dma` of `dtype` elements on `queue` (`dma0`, ...) at the rewriter's insertion point.
    pub fn dma(&mut self, rw: &mut Rewriter<'_>, dma: &Dma, dtype: ElemType, queue: &str) -> Result<OpId, String> {
        dma.check(&self.cfg)?;
        let instruction = Instruction::Dma(dma.clone());
        let (sync, index) = self.sync(rw, &instruction, queue)?;
        let args = &self.args;
        let state = ops::dma_state(rw.interners(), dma, dtype, &|r| args[r as usize], &sync, Loc::Unknown);
        Ok(self.issue(rw, state, index))
    }

    /// Writes compute instruction `instruction` on `queue` (`main` or `sub`) at the rewriter's insertion point.
    pub fn compute(&mut self, rw: &mut Rewriter<'_>, instruction: &Instruction, queue: &str) -> Result<OpId, String> {
        instruction.check(&self.cfg)?;
        let (sync, index) = self.sync(rw, instruction, queue)?;
        let state = ops::compute_state(rw.interners(), instruction, &sync, Loc::Unknown)
            .ok_or("this instruction cannot be written from code yet")?;
        Ok(self.issue(rw, state, index))
    }

    /// Creates the instruction `state` and notes it on its queue (by index).
    fn issue(&mut self, rw: &mut Rewriter<'_>, state: OpState, queue: usize) -> OpId {
        let op = rw.create(state);
        self.written += 1;
        self.issued[queue].push(op);
        op
    }

    /// Ends the kernel: the queues no instruction waits for signal nothing and lose their semaphores, as
    /// `canonicalize` would leave them.
    pub fn finish(self, rw: &mut Rewriter<'_>) {
        let empty = {
            let ints = rw.interners();
            ints.attr(Attr::Array(Vec::new().into()))
        };
        for (index, (sem, _)) in self.queues.values().enumerate() {
            if self.waited[index] {
                continue;
            }
            for &op in &self.issued[index] {
                let operands: Vec<ValueId> = rw.ir().body.operands(op).filter(|v| v != sem).collect();
                rw.set_operands(op, &operands);
                rw.set_prop(op, "signals", empty);
            }
            if let ValueDef::Result { op, .. } = rw.ir().body.value_def(*sem) {
                rw.erase_op(op);
            }
        }
    }

    /// Checks that `more` instructions still fit under [`MAX_KERNEL_INSTRUCTIONS`], before a lowering writes them.
    pub fn reserve(&self, more: u64) -> Result<(), String> {
        match self.written.checked_add(more) {
            Some(n) if n <= MAX_KERNEL_INSTRUCTIONS => Ok(()),
            _ => Err(format!(
                "the kernel would hold more than MAX_KERNEL_INSTRUCTIONS ({MAX_KERNEL_INSTRUCTIONS}) instructions"
            )),
        }
    }

    /// The queue, waits and signal of the next instruction on `queue` of its chip, and the queue's index.
    fn sync(&mut self, rw: &mut Rewriter<'_>, instruction: &Instruction, queue: &str) -> Result<(Sync, usize), String> {
        self.reserve(1)?;
        if queue_index(queue, self.cfg.dma_engines).is_none() {
            return Err(format!("no queue '{queue}' on this machine"));
        }
        let accesses: Vec<Access> = instruction.accesses(&self.cfg);
        check_work(&accesses)?;
        let key = (instruction.chip(), queue.to_string());
        let index = match self.queues.get_index_of(&key) {
            Some(i) => i,
            None => {
                let sem = self.semaphore(rw);
                self.issued.push(Vec::new());
                self.waited.push(false);
                self.queues.insert_full(key, (sem, 0)).0
            }
        };
        let (sem, count) = &mut self.queues[index];
        *count += 1;
        let me = Stamp { queue: index, seq: *count };
        let signals = vec![(*sem, *count)];
        let waits = self.clocks.keep(me, self.hazards.order(&accesses, me));
        for w in &waits {
            self.waited[w.queue] = true;
        }
        let waits = waits.into_iter().map(|w| (self.queues[w.queue].0, w.seq)).collect();
        Ok((Sync { queue: queue.to_string(), waits, signals }, index))
    }

    /// A new semaphore at the start of the kernel, after those made before.
    fn semaphore(&mut self, rw: &mut Rewriter<'_>) -> ValueId {
        let outer = rw.insertion_point();
        match self.last_semaphore {
            Some(op) => rw.set_insertion_point_after(op),
            None => rw.set_insertion_point_to_start(self.block),
        }
        let ty = sem_type(rw.interners());
        let state = rw.op_state("npu.semaphore").results(&[ty]);
        let op = rw.create(state);
        self.last_semaphore = Some(op);
        rw.set_insertion_point(outer);
        rw.ir().body.result(op, 0)
    }
}
