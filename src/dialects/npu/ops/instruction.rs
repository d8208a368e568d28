//! Every `npu` instruction that moves or computes data, decoded once into one type: what the interpreter executes,
//! what it costs, and which bytes of which memory it reads and writes (the accesses the dialect's memory-effects
//! implementation reports and the race detector reads).

use super::clauses::{queue_index, str_prop, sync_of};
use super::dma_op;
use super::matmul::{self, Matmul};
use super::memset::{self, Memset};
use super::onchip::{Operand, Slices, Space};
use super::reduce::{self, Reduce};
use super::stream::{self, Stream};
use super::vector::{self, Vector};
use crate::dialects::npu::access::AccessPattern;
use crate::dialects::npu::dma::{Dma, Memory};
use crate::dialects::npu::machine_attr::machine_of;
use crate::ir::registry::{ParseFn, PrintFn};
use crate::ir::verify::op_error;
use crate::ir::{Arity, Context, Diagnostic, OpId, OpInfo, OpTrait, Syntax};
use crate::machine::NpuConfig;

/// The registration of an instruction: inside an `npu.kernel`, any operands (buffers and semaphores), verified by
/// [`verify`], with its own pretty syntax.
pub const fn registration(name: &'static str, summary: &'static str, parse: ParseFn, print: PrintFn) -> OpInfo {
    OpInfo {
        operands: Arity::Any,
        traits: &[OpTrait::HasParent(&["npu.kernel"])],
        verify: Some(verify),
        syntax: Syntax::Custom { parse, print },
        ..OpInfo::new(name, summary)
    }
}

/// Most packets one instruction may touch, over all its operands and slices: the interpreter walks them one by
/// one, so this bounds its work per instruction (past it, a verifier error).
pub const MAX_INSTRUCTION_PACKETS: u64 = 1 << 24;

/// Most bytes one instruction may touch, over all its operands and slices (past it, a verifier error).
pub const MAX_INSTRUCTION_BYTES: u64 = 1 << 32;

/// The verifier of every instruction that moves or computes data: it decodes the instruction, checks its queue and
/// the machine's rules for it on the program's machine (`npu.machine`; the kernel reports a malformed one), and
/// the interpreter's limits on the work of one instruction.
pub fn verify(ctx: &Context, op: OpId) -> Result<(), Diagnostic> {
    let cfg = machine_of(ctx, op).unwrap_or_default();
    let err = |m: String| op_error(ctx, op, m);
    let name = ctx.op_name(op);
    if ctx.op_attr(op, "out_dtype").is_some() && !matches!(name, "npu.cast" | "npu.matmul") {
        return Err(err("only npu.cast and npu.matmul take a result type ('-> T')".into()));
    }
    let instruction = Instruction::decode(ctx, op, &cfg).map_err(err)?.expect("an instruction that touches memory");
    if !matches!(instruction, Instruction::Dma(_)) {
        sync_of(ctx, op, 0).map_err(err)?;
    }
    let queue = str_prop(ctx, op, "queue").unwrap_or_default();
    let engines = cfg.dma_engines as usize;
    match (&instruction, queue_index(queue, cfg.dma_engines)) {
        (Instruction::Dma(_), Some(q)) if q < engines => {}
        (Instruction::Dma(_), _) => {
            return Err(err(format!("runs on a DMA queue, dma0 ... dma{}, not '{queue}'", engines - 1)))
        }
        (_, Some(q)) if q >= engines => {}
        _ => return Err(err(format!("runs on the main or sub queue, not '{queue}'"))),
    }
    instruction.check(&cfg).map_err(err)
}

/// A decoded instruction.
#[derive(Clone, Debug)]
pub enum Instruction {
    /// `npu.dma`.
    Dma(Dma),
    /// `npu.memset`.
    Memset(Memset),
    /// `npu.load_trf`, `npu.load_vrf`, `npu.cast`, `npu.transpose`.
    Stream(Stream),
    /// `npu.matmul`.
    Matmul(Matmul),
    /// `npu.vec.unary`, `npu.vec.binary`.
    Vector(Vector),
    /// `npu.vec.reduce`, `npu.reduce.slices`.
    Reduce(Reduce),
}

/// A memory: an HBM buffer (by kernel argument) or one slice's memory of an on-chip space.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Site {
    /// Kernel argument `n`'s buffer.
    Hbm(u32),
    /// `(space, chip, cluster, slice)`.
    Slice(Space, u64, u64, u64),
}

impl Site {
    /// The memory-effects resource: `npu.hbm`, `npu.dm`, `npu.acc`, `npu.trf` or `npu.vrf`.
    pub fn resource(self) -> &'static str {
        match self {
            Site::Hbm(_) => "npu.hbm",
            Site::Slice(Space::Dm, ..) => "npu.dm",
            Site::Slice(Space::Acc, ..) => "npu.acc",
            Site::Slice(Space::Trf, ..) => "npu.trf",
            Site::Slice(Space::Vrf, ..) => "npu.vrf",
        }
    }

    /// Which one of its resource: the argument, or `chip · 2^40 + cluster · 2^20 + slice` (the machine's
    /// geometry is at most `MAX_GEOMETRY` = 2^20 clusters of 2^20 slices).
    pub fn unit(self) -> u64 {
        match self {
            Site::Hbm(region) => region as u64,
            Site::Slice(_, chip, cluster, slice) => (chip << 40) + (cluster << 20) + slice,
        }
    }

    /// The chip it is on (HBM buffers are told by the caller).
    pub fn chip(self) -> Option<u64> {
        match self {
            Site::Hbm(_) => None,
            Site::Slice(_, chip, ..) => Some(chip),
        }
    }

    /// The site of a DMA side's memory.
    pub fn of(memory: &Memory) -> Site {
        match *memory {
            Memory::Hbm { region, .. } => Site::Hbm(region),
            Memory::Dm { chip, cluster, slice } => Site::Slice(Space::Dm, chip, cluster, slice),
        }
    }
}

/// One read or write: the bytes of `pattern` in `site`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Access {
    /// A write (else a read).
    pub write: bool,
    /// The memory.
    pub site: Site,
    /// The bytes.
    pub pattern: AccessPattern,
}

impl Instruction {
    /// Decodes `op`: `None` for instructions that touch no memory (the kernel, semaphores, barriers).
    pub fn decode(ctx: &Context, op: OpId, cfg: &NpuConfig) -> Result<Option<Instruction>, String> {
        Ok(Some(match ctx.op_name(op) {
            "npu.dma" => Instruction::Dma(dma_op::decode(ctx, op, cfg)?.0),
            "npu.memset" => Instruction::Memset(memset::decode(ctx, op)?),
            "npu.load_trf" | "npu.load_vrf" | "npu.cast" | "npu.transpose" => {
                Instruction::Stream(stream::decode(ctx, op)?)
            }
            "npu.matmul" => Instruction::Matmul(matmul::decode(ctx, op)?),
            "npu.vec.unary" | "npu.vec.binary" => Instruction::Vector(vector::decode(ctx, op)?),
            "npu.vec.reduce" | "npu.reduce.slices" => Instruction::Reduce(reduce::decode(ctx, op)?),
            _ => return Ok(None),
        }))
    }

    /// The chip whose queues run it: a DMA's source's, a compute instruction's.
    pub fn chip(&self) -> u64 {
        match (self, self.slices()) {
            (Instruction::Dma(d), _) => d.src.memory.chip(),
            (_, slices) => slices.expect("a compute instruction runs on slices").chip,
        }
    }

    /// The slices a compute instruction runs on (none for a DMA).
    pub fn slices(&self) -> Option<Slices> {
        match self {
            Instruction::Dma(_) => None,
            Instruction::Memset(m) => Some(m.slices),
            Instruction::Stream(s) => Some(s.slices),
            Instruction::Matmul(m) => Some(m.slices),
            Instruction::Vector(v) => Some(v.slices),
            Instruction::Reduce(r) => Some(r.slices),
        }
    }

    /// The machine's rules for it, then the interpreter's limits on its work.
    pub fn check(&self, cfg: &NpuConfig) -> Result<(), String> {
        self.check_rules(cfg)?;
        check_work(&self.accesses(cfg))
    }

    /// The machine's rules for it.
    pub fn check_rules(&self, cfg: &NpuConfig) -> Result<(), String> {
        match self {
            Instruction::Dma(d) => d.check(cfg),
            Instruction::Memset(m) => memset::check(m, cfg),
            Instruction::Stream(s) => stream::check(s, cfg),
            Instruction::Matmul(m) => matmul::check(m, cfg),
            Instruction::Vector(v) => vector::check(v, v.rhs.is_some(), cfg),
            Instruction::Reduce(r) => reduce::check(r, cfg),
        }
    }

    /// Its cost in cycles.
    pub fn cycles(&self, cfg: &NpuConfig) -> u64 {
        match self {
            Instruction::Dma(d) => d.cycles(cfg),
            Instruction::Memset(m) => m.cycles(cfg),
            Instruction::Stream(s) => s.cycles(cfg),
            Instruction::Matmul(m) => m.cycles(cfg),
            Instruction::Vector(v) => v.cycles(cfg),
            Instruction::Reduce(r) => r.cycles(cfg),
        }
    }

    /// Every memory access, slice by slice for compute instructions.
    pub fn accesses(&self, cfg: &NpuConfig) -> Vec<Access> {
        match self {
            Instruction::Dma(d) => dma_accesses(d),
            Instruction::Memset(m) => on_slices(&m.slices, &[], &[&m.dst]),
            Instruction::Stream(s) => on_slices(&s.slices, &[&s.src], &[&s.dst]),
            Instruction::Matmul(m) => {
                let (low, high) = m.lane_bytes(cfg);
                let lanes = m.n.min(cfg.trf_lanes) as u32;
                let b = AccessPattern::new(low, &[(lanes, cfg.trf_lane_bytes as i64)], (high - low) as u32);
                let trf = Operand { space: Space::Trf, pattern: b };
                let reads: Vec<&Operand> = if m.accumulate { vec![&m.a, &trf, &m.c] } else { vec![&m.a, &trf] };
                on_slices(&m.slices, &reads, &[&m.c])
            }
            Instruction::Vector(v) => on_slices(&v.slices, &v.reads(), &[&v.dst]),
            Instruction::Reduce(r) => on_slices(&r.slices, &[&r.src], &[&r.dst]),
        }
    }
}

/// A DMA's reads and writes, part by part over its spread (a broadcast's HBM bytes read once).
fn dma_accesses(d: &Dma) -> Vec<Access> {
    let (mut out, mut read) = (Vec::new(), std::collections::HashSet::new());
    for part in d.parts() {
        let site = Site::of(&part.src.memory);
        if read.insert((site, part.src.pattern.clone())) {
            out.push(Access { write: false, site, pattern: part.src.pattern });
        }
        out.push(Access { write: true, site: Site::of(&part.dst.memory), pattern: part.dst.pattern });
    }
    out
}

/// The interpreter's limits on the work of one instruction, from its accesses.
pub fn check_work(accesses: &[Access]) -> Result<(), String> {
    let (mut packets, mut bytes) = (0u64, 0u64);
    for a in accesses {
        packets = packets.saturating_add(a.pattern.packets().unwrap_or(u64::MAX));
        bytes = bytes.saturating_add(a.pattern.bytes().unwrap_or(u64::MAX));
    }
    if packets > MAX_INSTRUCTION_PACKETS || bytes > MAX_INSTRUCTION_BYTES {
        return Err(format!(
            "touches {bytes} B in {packets} packets over its operands and slices, past the interpreter's \
             MAX_INSTRUCTION_BYTES ({MAX_INSTRUCTION_BYTES}) or MAX_INSTRUCTION_PACKETS ({MAX_INSTRUCTION_PACKETS})"
        ));
    }
    Ok(())
}

/// The accesses of a compute instruction: each operand on each slice of the range.
fn on_slices(slices: &Slices, reads: &[&Operand], writes: &[&Operand]) -> Vec<Access> {
    let mut out = Vec::new();
    for slice in slices.first..slices.end {
        let all = reads.iter().map(|o| (false, o)).chain(writes.iter().map(|o| (true, o)));
        for (write, o) in all {
            let site = slices.site(o.space, slice);
            out.push(Access { write, site, pattern: o.pattern.clone() });
        }
    }
    out
}
