//! `convert-teg-to-npu`: lowers each TEG graph (its tensors laid out by `resolve-layouts`) to an `npu.kernel` of
//! the same name, on the dialect-conversion framework. The pass plans every tensor's HBM buffer (`buffers`),
//! creates the kernel with one argument per buffer and moves the graph's ops into it; then conversion patterns
//! replace each TEG op by the instructions that compute it and its result by its buffer: sources are their
//! buffers, cell ops are tiled over slices (`elementwise`), a sink copies into its buffer unless its tensor was
//! computed there, and sequence points go (the kernel ends when every queue has drained). Instructions are
//! synchronized by the kernel builder from the bytes they touch.
//!
//! An op it cannot lower yet is an error at the op, naming it; so is a tensor of a type the NPU does not compute
//! on. The conversion is all or nothing: on an error the module is left as it was.

mod buffers;
mod contraction;
mod conv;
mod elementwise;
mod estimate;
mod host;
mod operand;
mod reduction;
mod spread;
mod tiles;
mod transfer;
mod views;

use super::pass::{Changed, Pass, PassEnv, PassInfo};
use super::registry::PassEntry;
use crate::array::DType;
use crate::dialects::npu::build::KernelBuilder;
use crate::dialects::npu::dma::{Dma, Memory};
use crate::dialects::npu::machine_attr::machine_of;
use crate::dialects::npu::ops::instruction::Instruction;
use crate::dialects::npu::ops::kernel::TENSORS_ATTR;
use crate::dialects::npu::ops::onchip::Slices;
use crate::dialects::npu::types::{buf_type, BufType};
use crate::dialects::teg::ops::{decode, Io, OpKind};
use crate::dialects::teg::shard_problem::mesh_of;
use crate::dialects::teg::tensor_type::as_tensor;
use crate::dialects::teg::tensor_type::{TensorType, TokenType};
use crate::dialects::teg::transfers::DEVICES_ATTR;
use crate::dialects::teg::{graph_ops, graphs_under};
use crate::ir::conversion::{
    apply_conversion, ConversionMode, ConversionPattern, ConversionRewriter, ConversionTarget, Legality, OpAdaptor,
    TypeConverter,
};
use crate::ir::rewrite::Rewriter;
use crate::ir::symbols::symbol_name;
use crate::ir::{Context, Diagnostic, OpId, TypeKind, ValueId};
use crate::machine::{ElemType, NpuConfig};
use buffers::Buffers;
pub use buffers::{npu_elem, Role, Tensor};
pub use estimate::ESTIMATE_ATTR;
pub use host::{AFTER_ATTR, HOST_ATTR};
use std::cell::RefCell;
use std::collections::HashSet;

/// The registration of `convert-teg-to-npu`.
pub const ENTRY: PassEntry = PassEntry { info: &INFO, create: |_| Box::new(Convert) };

static INFO: PassInfo = PassInfo {
    argument: "convert-teg-to-npu",
    name: "ConvertTegToNpu",
    description: "Lower TEG graphs (laid out by resolve-layouts) to npu.kernel programs",
    anchor: None,
    options: &[],
    statistics: &[("num-kernels", "Kernels written"), ("num-instructions", "Instructions written")],
};

struct Convert;

impl Pass for Convert {
    fn info(&self) -> &'static PassInfo {
        &INFO
    }

    fn run(&mut self, ctx: &mut Context, root: OpId, env: &mut PassEnv<'_>) -> Result<Changed, Vec<Diagnostic>> {
        let graphs = graphs_under(ctx, root);
        for &graph in &graphs {
            let written = lower_graph(ctx, graph, env.remarks).map_err(|d| vec![d])?;
            env.stats.add("num-kernels", 1);
            env.stats.add("num-instructions", written);
        }
        Ok(if graphs.is_empty() { Changed::No } else { Changed::Yes })
    }
}

/// The state the patterns share while one graph is converted.
pub struct Lowering {
    /// The machine.
    pub cfg: NpuConfig,
    /// The chip of the op being lowered (its result's).
    pub chip: u64,
    /// Every tensor's buffer.
    pub buffers: Buffers,
    /// The kernel being written.
    pub kernel: KernelBuilder,
    /// Per DMA engine, the cycles of the transfers given to it so far (the next goes to the least busy).
    engine_cycles: Vec<u64>,
    /// Tile waves written so far (they alternate between two halves of data memory).
    pub waves: u64,
    /// The constant buffers written so far.
    pub constants_written: HashSet<(ElemType, u64)>,
    /// The replicas written so far.
    replicated: HashSet<(ValueId, u64)>,
    /// The first error a pattern met (the conversion then fails with it).
    error: Option<Diagnostic>,
}

impl Lowering {
    /// Writes `dma` (of `elem` elements) on the DMA engine with the fewest cycles of work so far (the first of
    /// them), which balances engines when transfers differ in size.
    pub fn dma(&mut self, rw: &mut Rewriter<'_>, dma: &Dma, elem: ElemType) -> Result<(), String> {
        let (engine, _) = self.engine_cycles.iter().enumerate().min_by_key(|&(i, &c)| (c, i)).expect("an engine");
        self.engine_cycles[engine] = self.engine_cycles[engine].saturating_add(dma.cycles(&self.cfg));
        self.kernel.dma(rw, dma, elem, &format!("dma{engine}")).map(|_| ())
    }

    /// Writes single-slice DMAs `parts` (in slice order, of `elem` elements) as few spread commands as line up
    /// ([`spread::merge`]), but at least one per engine while they can be split.
    pub fn dmas(&mut self, rw: &mut Rewriter<'_>, parts: &[Dma], elem: ElemType) -> Result<(), String> {
        for command in spread::merge(parts, self.engine_cycles.len(), &self.cfg) {
            self.dma(rw, &command, elem)?;
        }
        Ok(())
    }

    /// Value `v` as the op being lowered reads it: its buffer, or its replica on the op's chip (copied there over
    /// the link the first time).
    fn operand(&mut self, rw: &mut Rewriter<'_>, v: ValueId) -> Result<Tensor, String> {
        let Some(replica) = self.buffers.replicas.get(&(v, self.chip)).cloned() else {
            return Ok(self.buffers.values[&v].clone());
        };
        if self.replicated.insert((v, self.chip)) {
            let from = self.buffers.values[&v].clone();
            views::copy_tensor(self, rw, &from, &replica)?;
        }
        Ok(replica)
    }

    /// Slices `first..end` of the chip of the op being lowered, numbered across its clusters (cluster `c`'s
    /// first is `c · slices_per_cluster`): one range per cluster they reach.
    pub fn slices_in(&self, first: u64, end: u64) -> Vec<Slices> {
        let per = self.cfg.slices_per_cluster.max(1);
        let mut out = Vec::new();
        let mut at = first;
        while at < end {
            let stop = end.min((at / per + 1) * per);
            out.push(self.slices(at, stop));
            at = stop;
        }
        out
    }

    /// Slices `first..end` (numbered across clusters, as [`Lowering::slices_in`] takes them) that lie in one
    /// cluster: the waves of elementwise ops and reductions, which fit cluster 0.
    pub fn slices(&self, first: u64, end: u64) -> Slices {
        let per = self.cfg.slices_per_cluster.max(1);
        let cluster = first / per;
        Slices { chip: self.chip, cluster, first: first - cluster * per, end: end - cluster * per }
    }

    /// The data memory of slice `slice` of the chip of the op being lowered, numbered across its clusters.
    pub fn dm(&self, slice: u64) -> Memory {
        let per = self.cfg.slices_per_cluster.max(1);
        Memory::Dm { chip: self.chip, cluster: slice / per, slice: slice % per }
    }

    /// Writes a compute instruction on the main queue, or on the sub queue for the slices of an odd cluster: the
    /// chip's two compute queues drive its clusters side by side.
    pub fn compute(&mut self, rw: &mut Rewriter<'_>, instruction: &Instruction) -> Result<(), String> {
        let queue = if odd_cluster(instruction) { "sub" } else { "main" };
        self.kernel.compute(rw, instruction, queue).map(|_| ())
    }

    /// Writes an instruction preparing data (a memset before a transfer) on the compute queue its cluster's
    /// compute is not on (the sub queue for cluster 0), so that it does not wait behind that compute.
    pub fn prepare(&mut self, rw: &mut Rewriter<'_>, instruction: &Instruction) -> Result<(), String> {
        let queue = if odd_cluster(instruction) { "main" } else { "sub" };
        self.kernel.compute(rw, instruction, queue).map(|_| ())
    }
}

/// Whether a compute instruction runs on an odd cluster's slices (whose compute the sub queue drives).
fn odd_cluster(instruction: &Instruction) -> bool {
    instruction.slices().is_some_and(|s| s.cluster % 2 == 1)
}

/// The slices of a chip, all of which a contraction's or convolution's tiles may spread over (numbered across its
/// clusters, as [`Lowering::dm`] and [`Lowering::slices_in`] take them).
pub fn chip_slices(cfg: &NpuConfig) -> u64 {
    cfg.clusters.saturating_mul(cfg.slices_per_cluster).max(1)
}

/// Lowers `graph` into a kernel in its place (its host segments into graphs before and after it, each op of them a
/// remark); the number of instructions written.
fn lower_graph(ctx: &mut Context, graph: OpId, remarks: &mut Vec<Diagnostic>) -> Result<u64, Diagnostic> {
    let loc = ctx.body.op(graph).loc;
    let cfg = machine_of(ctx, graph).and_then(|c| supported(&c).map(|()| c)).map_err(|m| Diagnostic::error(loc, m))?;
    let ops: Vec<OpId> = graph_ops(ctx, graph).collect();
    check_chips(ctx, graph, &cfg)?;
    let host = host::split_host(ctx, graph, &ops, &cfg, remarks)?;
    let ops: Vec<OpId> = graph_ops(ctx, graph).collect();
    let estimate = estimate::estimate(ctx, graph, &cfg);
    for &op in &ops {
        check_supported(ctx, op)?;
    }
    let buffers = Buffers::plan(ctx, &ops, &cfg)?;
    let name = symbol_name(ctx, graph).unwrap_or("graph").to_string();
    let bufs: Vec<BufType> = buffers.args.iter().map(|a| a.buf.clone()).collect();
    let mut rw = Rewriter::at(ctx, graph);
    let kernel = KernelBuilder::new(&mut rw, &name, &bufs, cfg.clone(), loc);
    let tensors = buffers.attr(rw.interners());
    rw.set_attr(kernel.kernel, TENSORS_ATTR, tensors);
    for (key, graph) in [(HOST_ATTR, &host.before), (AFTER_ATTR, &host.after)] {
        if let Some(graph) = graph {
            let graph = rw.interners().string_attr(graph);
            rw.set_attr(kernel.kernel, key, graph);
        }
    }
    if let Some(cycles) = estimate {
        let i64_type = rw.interners().int_type(64);
        let cycles = rw.interners().attr(crate::ir::Attr::Int { value: cycles as i128, ty: i64_type });
        rw.set_attr(kernel.kernel, ESTIMATE_ATTR, cycles);
    }
    for &op in &ops {
        rw.move_op_to_end(op, kernel.block());
    }
    rw.erase_op(graph);
    let root = kernel.kernel;
    let state = RefCell::new(Lowering {
        engine_cycles: vec![0; cfg.dma_engines.max(1) as usize],
        chip: 0,
        cfg,
        buffers,
        kernel,
        waves: 0,
        constants_written: HashSet::new(),
        replicated: HashSet::new(),
        error: None,
    });
    let patterns: [&dyn ConversionPattern; 8] = [
        &Sources(&state),
        &Sinks(&state),
        &SequencePoints,
        &elementwise::Cells(&state),
        &contraction::Contractions(&state),
        &conv::Convolutions(&state),
        &reduction::Reductions(&state),
        &views::Views(&state),
    ];
    let target = ConversionTarget::new().dialect("teg", Legality::Illegal).dialect("npu", Legality::Legal);
    let result = apply_conversion(ctx, root, &target, &patterns, &types(), ConversionMode::Full);
    let state = state.into_inner();
    match (result, state.error) {
        (_, Some(d)) | (Err(d), None) => Err(d),
        (Ok(_), None) => {
            let written = state.kernel.written;
            let mut rw = Rewriter::at(ctx, state.kernel.kernel);
            state.kernel.finish(&mut rw);
            Ok(written)
        }
    }
}

/// An error at `graph` when its mesh has more devices than the machine has chips (device `d` runs on chip `d`).
fn check_chips(ctx: &Context, graph: OpId, cfg: &NpuConfig) -> Result<(), Diagnostic> {
    let Some(Ok(mesh)) = mesh_of(ctx, graph) else { return Ok(()) };
    let devices = mesh.mesh().num_devices() as u64;
    let placed = graph_ops(ctx, graph).any(|op| ctx.op_attr(op, DEVICES_ATTR).is_some());
    if !placed || devices <= cfg.chips {
        return Ok(());
    }
    Err(Diagnostic::error(
        ctx.body.op(graph).loc,
        format!(
            "the graph's mesh has {devices} devices, but the machine has {} chip(s): give the module \
             'npu.machine = {{chips = {devices}}}' (or more)",
            cfg.chips
        ),
    ))
}

/// Whether the lowering handles machine `cfg`: its tiles align rows and chunks on 8 elements and fill the TRF in
/// groups of its lanes, so the DM write alignment and the lanes must divide 8, and a packet hold 64 bytes.
fn supported(cfg: &NpuConfig) -> Result<(), String> {
    let divides_8 = |v: u64| v > 0 && 8 % v == 0;
    if !divides_8(cfg.dm_write_align) || !divides_8(cfg.trf_lanes) || cfg.max_packet_bytes < 64 {
        return Err(format!(
            "convert-teg-to-npu lowers for machines whose dm_write_align and trf_lanes divide 8 and whose \
             max_packet_bytes is at least 64; this one has {}, {} and {}",
            cfg.dm_write_align, cfg.trf_lanes, cfg.max_packet_bytes
        ));
    }
    Ok(())
}

/// What a TEG type becomes: a tensor its default buffer (the one `resolve-layouts` lays out), a token nothing.
fn types() -> TypeConverter {
    TypeConverter::new().rule_many(|ints, ty| {
        let TypeKind::Dialect(data) = ints.type_kind(ty) else { return None };
        if data.downcast::<TokenType>().is_some() {
            return Some(Vec::new());
        }
        let t = data.downcast::<TensorType>()?.clone();
        let cfg = NpuConfig::default();
        let elem = buffers::npu_elem(t.dtype)?;
        let shape = t.shape();
        let row = cfg.padded_row(shape.last().copied().unwrap_or(1));
        let len = shape.iter().rev().skip(1).product::<u64>() * row;
        Some(vec![buf_type(ints, BufType { chip: 0, len, elem })])
    })
}

/// An error at `op` unless the lowering knows how to lower it.
fn check_supported(ctx: &Context, op: OpId) -> Result<(), Diagnostic> {
    let err = |m: String| Diagnostic::error(ctx.body.op(op).loc, m);
    let kind = decode(ctx, op).map_err(err)?;
    match &kind {
        OpKind::Io(Io::Source { .. } | Io::Sink { .. } | Io::SequencePoint) => Ok(()),
        OpKind::Cell(cell) => elementwise::check(ctx, op, cell).map_err(err),
        OpKind::Contraction(c) => contraction::check(ctx, op, c).map_err(err),
        OpKind::Conv2d(_) => conv::check(ctx, op).map_err(err),
        OpKind::Reduce(r) => reduction::check(ctx, op, r).map_err(err),
        OpKind::View(v) => views::check(ctx, op, v).map_err(err),
        OpKind::Reshard(r) => {
            let dtype = as_tensor(ctx, ctx.body.value_type(ctx.body.result(op, 0))).map_or(DType::F32, |t| t.dtype);
            views::check_reshard(r, dtype).map_err(err)
        }
        OpKind::Generate(g) if views::constant_value(g).is_some() => Ok(()),
        _ => Err(err(format!(
            "convert-teg-to-npu cannot lower '{}' yet (it lowers sources, sinks, elementwise ops, contractions, convolutions, reductions, views, reshards and constants)",
            ctx.op_name(op)
        ))),
    }
}

/// Lowers `op`, an op of one tensor result, with `write` (given its operands' tensors and its result's), then
/// replaces it by its result's buffer; an error `write` returns is recorded and fails the pattern.
pub fn lower_op(
    state: &RefCell<Lowering>,
    op: OpId,
    rw: &mut ConversionRewriter<'_, '_>,
    write: impl FnOnce(&mut Lowering, &mut Rewriter<'_>, &[Tensor], &Tensor) -> Result<(), String>,
) -> bool {
    let mut s = state.borrow_mut();
    let ctx = rw.ir();
    let r = s.buffers.values[&ctx.body.result(op, 0)].clone();
    s.chip = r.chip;
    let values: Vec<ValueId> = ctx.body.operands(op).collect();
    // Views and plain reshards copy cell by cell through any layout; a reshard combining partial results computes.
    let copies = match decode(ctx, op) {
        Ok(OpKind::View(_)) => true,
        Ok(OpKind::Reshard(r)) => r.combine.is_none(),
        _ => false,
    };
    let operands = values.iter().map(|&v| s.operand(rw, v)).collect::<Result<Vec<Tensor>, String>>();
    let operands = operands.and_then(|o| match o.iter().any(|t| !t.rows) && !copies {
        true => Err("it reads a source whose layout is not one of rows: run resolve-layouts, which copies it".into()),
        false => Ok(o),
    });
    if let Err(m) = operands.and_then(|operands| write(&mut s, rw, &operands, &r)) {
        drop(s);
        return failed(state, rw.ir(), op, m);
    }
    let arg = s.kernel.arg(r.region);
    drop(s);
    rw.replace_op(op, &[arg]);
    true
}

/// Records a pattern's error (the first one wins) and fails the pattern.
fn failed(state: &RefCell<Lowering>, ctx: &Context, op: OpId, message: String) -> bool {
    let mut s = state.borrow_mut();
    if s.error.is_none() {
        let name = ctx.op_name(op);
        s.error = Some(Diagnostic::error(ctx.body.op(op).loc, format!("lowering '{name}': {message}")));
    }
    false
}

/// A source is its buffer.
struct Sources<'s>(&'s RefCell<Lowering>);

impl ConversionPattern for Sources<'_> {
    fn name(&self) -> &'static str {
        "Sources"
    }

    fn root(&self) -> Option<&'static str> {
        Some("teg.source")
    }

    fn match_and_rewrite(&self, op: OpId, _: &OpAdaptor, rw: &mut ConversionRewriter<'_, '_>) -> bool {
        let s = self.0.borrow();
        let v = rw.ir().body.result(op, 0);
        let arg = s.kernel.arg(s.buffers.values[&v].region);
        drop(s);
        rw.replace_op(op, &[arg]);
        true
    }
}

/// A sink copies its tensor into its own buffer, unless the tensor was computed there.
struct Sinks<'s>(&'s RefCell<Lowering>);

impl ConversionPattern for Sinks<'_> {
    fn name(&self) -> &'static str {
        "Sinks"
    }

    fn root(&self) -> Option<&'static str> {
        Some("teg.sink")
    }

    fn match_and_rewrite(&self, op: OpId, _: &OpAdaptor, rw: &mut ConversionRewriter<'_, '_>) -> bool {
        let mut s = self.0.borrow_mut();
        if let Some(to) = s.buffers.sinks.get(&op).cloned() {
            let from = s.buffers.values[&rw.ir().body.operand(op, 0)].clone();
            if let Err(m) = views::copy_tensor(&mut s, rw, &from, &to) {
                drop(s);
                return failed(self.0, rw.ir(), op, m);
            }
        }
        drop(s);
        rw.replace_op_with_groups(op, &[Vec::new()]);
        true
    }
}

/// A sequence point orders nothing the kernel's queues do not: it goes.
struct SequencePoints;

impl ConversionPattern for SequencePoints {
    fn name(&self) -> &'static str {
        "SequencePoints"
    }

    fn root(&self) -> Option<&'static str> {
        Some("teg.sequence_point")
    }

    fn match_and_rewrite(&self, op: OpId, _: &OpAdaptor, rw: &mut ConversionRewriter<'_, '_>) -> bool {
        rw.replace_op(op, &[]);
        true
    }
}
