//! Where every tensor of a graph lives in HBM: one kernel argument per source, per sink and per tensor computed
//! on the way, each in the layout `resolve-layouts` gave it (`teg.layout`). A computed tensor that exactly one
//! sink writes out lives in that sink's buffer, so it is not copied at the end. The kernel records, per argument,
//! what the harness binds to it (`npu.tensors`: a source or sink by name, its shape, element type and layout, or
//! scratch), so that `tap-run` can run the kernel on the graph's named inputs.

use super::views::{constant_value, fill_value, held, CONSTANT_ELEMS};
use crate::array::DType;
use crate::dialects::npu::dma::Memory;
use crate::dialects::npu::types::BufType;
use crate::dialects::teg::ops::Reshard;
use crate::dialects::teg::ops::{decode, Io, OpKind};
use crate::dialects::teg::tensor_type::as_tensor;
use crate::dialects::teg::transfers::{devices_of, DEVICES_ATTR};
use crate::dialects::teg::LAYOUT_ATTR;
use crate::ir::body::ValueDef;
use crate::ir::TypeId;
use crate::ir::{Attr, AttrId, Context, Diagnostic, Interners, OpId, ValueId};
use crate::machine::{ElemType, NpuConfig};
use crate::passes::resolve_layouts::{
    check_injective, check_rows, in_place, strided_of, view_map, Strided, IN_PLACE_ATTR,
};
use indexmap::IndexMap;
use std::collections::HashMap;

/// A tensor in an HBM buffer: a strided layout of its (padded) index space.
#[derive(Clone, Debug)]
pub struct Tensor {
    /// The kernel argument holding it.
    pub region: u32,
    /// Dimension names and extents (a scalar is one dimension of extent 1, named "").
    pub dims: Vec<(String, u64)>,
    /// The extent the last dimension takes in memory (its padded row).
    pub row: u64,
    /// Element stride of each dimension (0 and negative ones in views read in place).
    pub strides: Vec<i64>,
    /// Element offset of its first element in the buffer.
    pub offset: i64,
    /// Whether its rows are read whole, as operators read them (see `resolve_layouts::check_rows`); a source
    /// in another layout is read only by copies.
    pub rows: bool,
    /// The element type in memory.
    pub elem: ElemType,
    /// Bytes of its buffer.
    pub bytes: u64,
    /// The chip whose HBM holds it.
    pub chip: u64,
}

impl Tensor {
    /// Its buffer, as a DMA names it.
    pub fn hbm(&self) -> Memory {
        Memory::Hbm { chip: self.chip, region: self.region, bytes: self.bytes }
    }

    /// Its layout in its buffer.
    pub fn strided(&self) -> Strided {
        Strided { strides: self.strides.clone(), offset: self.offset }
    }

    /// The extents of its dimensions.
    pub fn extents(&self) -> Vec<u64> {
        self.dims.iter().map(|d| d.1).collect()
    }

    /// The extents the lowering computes over: the dimensions with the last one padded.
    pub fn space(&self) -> Vec<u64> {
        let mut s: Vec<u64> = self.dims.iter().map(|d| d.1).collect();
        *s.last_mut().expect("at least one dimension") = self.row;
        s
    }
}

/// What the harness binds to an argument.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Role {
    /// The graph's source of this name.
    Source(String),
    /// The graph's sink of this name.
    Sink(String),
    /// A tensor computed on the way.
    Scratch,
}

/// One kernel argument.
#[derive(Clone, Debug)]
pub struct Arg {
    /// Its buffer type.
    pub buf: BufType,
    /// What it holds.
    pub role: Role,
    /// The tensor's element type.
    pub dtype: DType,
    /// Its shape.
    pub shape: Vec<u64>,
    /// The tensor it holds, as its layout places it.
    pub tensor: Tensor,
}

/// Every buffer of one graph.
#[derive(Clone, Debug, Default)]
pub struct Buffers {
    /// The kernel's arguments, in order.
    pub args: Vec<Arg>,
    /// The tensor each TEG value is.
    pub values: HashMap<ValueId, Tensor>,
    /// The buffer each sink writes (by op), when it is not its operand's own.
    pub sinks: HashMap<OpId, Tensor>,
    /// Small buffers of one value (by element type and the value's bits) that fills read.
    pub constants: HashMap<(ElemType, u64), Tensor>,
    /// Copies of values on the chips of ops that read them there (by value and chip): an op brings its operands
    /// into its chip's data memory, and DMAs between chips go HBM to HBM.
    pub replicas: HashMap<(ValueId, u64), Tensor>,
    /// Per reshard combining partial results, per group of partials of one box, the buffer (on the reshard's
    /// chip) they are combined in.
    pub accumulators: HashMap<OpId, Vec<Tensor>>,
    /// Bytes of each chip's HBM the buffers take so far.
    used: HashMap<u64, u64>,
}

/// A combining reshard's operands grouped by the box they hold (offset and type), in order: the partial results
/// each group's cells combine.
pub fn partial_groups(ctx: &Context, op: OpId, r: &Reshard) -> Vec<Vec<usize>> {
    let mut groups: IndexMap<(&Vec<i64>, TypeId), Vec<usize>> = IndexMap::new();
    for (i, v) in ctx.body.operands(op).enumerate() {
        groups.entry((&r.from[i], ctx.body.value_type(v))).or_default().push(i);
    }
    groups.into_values().collect()
}

/// The chip `op` runs on: the first of its `teg.devices` (device `d` of the mesh is chip `d`), chip 0 when it
/// has none (sources, sinks, what no device was given).
pub fn chip_of(ctx: &Context, op: OpId, cfg: &NpuConfig) -> Result<u64, String> {
    let Some(ranks) = devices_of(ctx, op, usize::MAX) else { return Ok(0) };
    let ranks = ranks.map_err(|_| format!("{DEVICES_ATTR} must be a non-empty list of distinct device numbers"))?;
    let device = ranks[0] as u64;
    if device >= cfg.chips {
        return Err(format!(
            "this op runs on device {device}, but the machine has {} chip(s): give the module \
             'npu.machine = {{chips = {}}}' (or more)",
            cfg.chips,
            device + 1
        ));
    }
    Ok(device)
}

/// The NPU element type of a TEG one; `None` for types the NPU does not compute on.
pub fn npu_elem(dtype: DType) -> Option<ElemType> {
    match dtype {
        DType::F32 => Some(ElemType::F32),
        DType::BF16 => Some(ElemType::Bf16),
        DType::I32 => Some(ElemType::I32),
        DType::I8 | DType::I1 => Some(ElemType::I8),
        DType::F64 | DType::F16 | DType::I64 => None,
    }
}

impl Buffers {
    /// Plans the buffers of a graph's ops (in order); an error names the op whose tensor cannot be placed.
    pub fn plan(ctx: &Context, ops: &[OpId], cfg: &NpuConfig) -> Result<Buffers, Diagnostic> {
        let mut b = Buffers::default();
        let sink_of = sole_sinks(ctx, ops);
        for &op in ops {
            let err = |m: String| Diagnostic::error(ctx.body.op(op).loc, m);
            let kind = decode(ctx, op).map_err(err)?;
            if ctx.op_attr(op, IN_PLACE_ATTR).is_some() && !matches!(kind, OpKind::View(_)) {
                return Err(err(format!("only a view can be read in place ('{IN_PLACE_ATTR}')")));
            }
            match kind {
                OpKind::Io(Io::Sink { name }) => {
                    let v = ctx.body.operand(op, 0);
                    let own = b.values.get(&v).map(|t| &b.args[t.region as usize].role);
                    if own != Some(&Role::Sink(name.clone())) {
                        let t = b.fresh(ctx, v, Role::Sink(name), 0, cfg).map_err(err)?;
                        b.sinks.insert(op, t);
                    }
                }
                OpKind::Io(Io::Source { name }) => {
                    let v = ctx.body.result(op, 0);
                    let t =
                        b.place(ctx, v, Role::Source(name), chip_of(ctx, op, cfg).map_err(err)?, cfg).map_err(err)?;
                    b.values.insert(v, t);
                }
                OpKind::Io(_) => {}
                OpKind::Generate(g) if constant_value(&g).is_some() => {
                    let v = ctx.body.result(op, 0);
                    let role = sink_of.get(&v).cloned().map(Role::Sink).unwrap_or(Role::Scratch);
                    let t = b.place(ctx, v, role, chip_of(ctx, op, cfg).map_err(err)?, cfg).map_err(err)?;
                    b.constant(t.elem, held(dtype_of(ctx, v), constant_value(&g).expect("a constant")), cfg);
                    b.values.insert(v, t);
                }
                OpKind::View(_) if ctx.op_attr(op, IN_PLACE_ATTR).is_some() => {
                    let v = ctx.body.result(op, 0);
                    let t = b.alias(ctx, op, cfg).map_err(err)?;
                    b.values.insert(v, t);
                }
                OpKind::View(view) => {
                    let v = ctx.body.result(op, 0);
                    let role = sink_of.get(&v).cloned().map(Role::Sink).unwrap_or(Role::Scratch);
                    let t = b.place(ctx, v, role, chip_of(ctx, op, cfg).map_err(err)?, cfg).map_err(err)?;
                    let pad = fill_value(&view).map(|f| held(dtype_of(ctx, v), f));
                    let fills = [(t.row > t.dims.last().map_or(1, |d| d.1)).then_some(0.0), pad];
                    for value in fills.into_iter().flatten() {
                        b.constant(t.elem, value, cfg);
                    }
                    b.values.insert(v, t);
                }
                kind => {
                    let Some(v) = ctx.body.results(op).next() else { continue };
                    let role = sink_of.get(&v).cloned().map(Role::Sink).unwrap_or(Role::Scratch);
                    let t = b.place(ctx, v, role, chip_of(ctx, op, cfg).map_err(err)?, cfg).map_err(err)?;
                    // A padded convolution may zero its input's row padding.
                    if matches!(&kind, OpKind::Conv2d(c) if c.padding[1] > 0) {
                        b.constant(t.elem, 0.0, cfg);
                    }
                    // A reshard copies within HBM (over links too) but combines partials on its chip.
                    if matches!(kind, OpKind::Reshard(_)) && t.row > t.dims.last().map_or(1, |d| d.1) {
                        b.constant(t.elem, 0.0, cfg);
                    }
                    match &kind {
                        OpKind::Reshard(r) if r.combine.is_none() => {}
                        OpKind::Reshard(r) => {
                            let mut accs = Vec::new();
                            for group in partial_groups(ctx, op, r) {
                                let leader = ctx.body.operand(op, group[0]);
                                accs.push(b.fresh(ctx, leader, Role::Scratch, t.chip, cfg).map_err(err)?);
                                for &i in &group[1..] {
                                    b.replicate_value(ctx, ctx.body.operand(op, i), t.chip, cfg).map_err(err)?;
                                }
                            }
                            b.accumulators.insert(op, accs);
                        }
                        _ => b.replicate(ctx, op, t.chip, cfg).map_err(err)?,
                    }
                    b.values.insert(v, t);
                }
            }
        }
        Ok(b)
    }

    /// Replicas on `chip` of `op`'s operands that live on other chips.
    fn replicate(&mut self, ctx: &Context, op: OpId, chip: u64, cfg: &NpuConfig) -> Result<(), String> {
        ctx.body.operands(op).try_for_each(|v| self.replicate_value(ctx, v, chip, cfg))
    }

    /// A replica of `v` on `chip` if it lives on another (one per value and chip).
    fn replicate_value(&mut self, ctx: &Context, v: ValueId, chip: u64, cfg: &NpuConfig) -> Result<(), String> {
        let elsewhere = self.values.get(&v).is_some_and(|t| t.chip != chip);
        if elsewhere && !self.replicas.contains_key(&(v, chip)) {
            let t = self.fresh(ctx, v, Role::Scratch, chip, cfg)?;
            self.replicas.insert((v, chip), t);
        }
        Ok(())
    }

    /// A new argument on `chip` holding `v` in the layout of its defining op (`teg.layout`): one of rows, or any
    /// strided layout a source is given (read only by copies).
    fn place(&mut self, ctx: &Context, v: ValueId, role: Role, chip: u64, cfg: &NpuConfig) -> Result<Tensor, String> {
        let ValueDef::Result { op: def, .. } = ctx.body.value_def(v) else { return Err("not an op's result".into()) };
        let layout = ctx.op_attr(def, LAYOUT_ATTR).ok_or(format!(
            "the tensor defined here has no layout ('{LAYOUT_ATTR}'): run resolve-layouts before convert-teg-to-npu"
        ))?;
        let (dtype, dims, elem) = tensor_parts(ctx, v)?;
        let extents: Vec<u64> = dims.iter().map(|d| d.1).collect();
        let strided = strided_of(&ctx.interners, layout, &extents)?;
        let rows = check_rows(&strided, &extents, elem.bytes(), cfg);
        let source = matches!(role, Role::Source(_));
        check_injective(&strided, &extents)?;
        if let (Err(m), false) = (&rows, source) {
            return Err(format!("'{LAYOUT_ATTR}' must be a layout of {m}"));
        }
        self.allocate(strided, rows.is_ok(), dtype, dims, elem, role, chip, cfg)
    }

    /// A new argument on `chip` holding `v` (or a copy of it) row-major in padded rows.
    fn fresh(&mut self, ctx: &Context, v: ValueId, role: Role, chip: u64, cfg: &NpuConfig) -> Result<Tensor, String> {
        let (dtype, dims, elem) = tensor_parts(ctx, v)?;
        let extents: Vec<u64> = dims.iter().map(|d| d.1).collect();
        self.allocate(Strided::row_major(&extents, cfg), true, dtype, dims, elem, role, chip, cfg)
    }

    /// The tensor of view `op`, read in place: its operand's buffer through the view's index map, checked as
    /// `resolve-layouts` decided it.
    fn alias(&self, ctx: &Context, op: OpId, cfg: &NpuConfig) -> Result<Tensor, String> {
        let operand = self.values.get(&ctx.body.operand(op, 0)).ok_or("its operand has no buffer")?;
        if chip_of(ctx, op, cfg)? != operand.chip {
            return Err(format!("a view read in place ('{IN_PLACE_ATTR}') must run on its operand's chip"));
        }
        let map = view_map(ctx, op).ok_or(format!("this view cannot be read in place ('{IN_PLACE_ATTR}')"))?;
        let (_, dims, elem) = tensor_parts(ctx, ctx.body.result(op, 0))?;
        let extents: Vec<u64> = dims.iter().map(|d| d.1).collect();
        let of = (&operand.strided(), &operand.dims.iter().map(|d| d.1).collect::<Vec<_>>()[..], operand.rows);
        let strided = in_place(&map, of, &extents, elem.bytes(), operand.bytes / elem.bytes(), cfg)
            .map_err(|why| format!("this view cannot be read in place ('{IN_PLACE_ATTR}'): {why}"))?;
        let given = ctx.op_attr(op, LAYOUT_ATTR).map(|a| strided_of(&ctx.interners, a, &extents));
        if given != Some(Ok(strided.clone())) {
            return Err(format!(
                "a view read in place must have its operand's layout through the view as '{LAYOUT_ATTR}'"
            ));
        }
        let row = cfg.padded_row(extents[extents.len() - 1]);
        Ok(Tensor { dims, row, strides: strided.strides, offset: strided.offset, rows: true, ..operand.clone() })
    }

    /// A new argument on `chip` of `elem` holding a tensor of `dims` in layout `strided`.
    #[allow(clippy::too_many_arguments)]
    fn allocate(
        &mut self,
        strided: Strided,
        rows: bool,
        dtype: DType,
        dims: Vec<(String, u64)>,
        elem: ElemType,
        role: Role,
        chip: u64,
        cfg: &NpuConfig,
    ) -> Result<Tensor, String> {
        let extents: Vec<u64> = dims.iter().map(|d| d.1).collect();
        let row = cfg.padded_row(extents[extents.len() - 1]);
        let len = strided
            .span(&extents, if rows { row } else { 1 })
            .filter(|&len| len.checked_mul(elem.bytes()).is_some())
            .ok_or("the tensor's layout places elements before its buffer's start or past 2^64 bytes")?;
        let used = self.used.entry(chip).or_default();
        if used.saturating_add(len * elem.bytes()) > cfg.hbm_bytes {
            return Err(format!(
                "this tensor of {} B does not fit the HBM of chip {chip}: {} B, {used} B of it taken by the tensors \
                 before",
                len * elem.bytes(),
                cfg.hbm_bytes
            ));
        }
        *used += len * elem.bytes();
        let region = self.args.len() as u32;
        let (strides, offset) = (strided.strides, strided.offset);
        let shape = if is_scalar(&dims) { Vec::new() } else { extents };
        let tensor = Tensor { region, dims, row, strides, offset, rows, elem, bytes: len * elem.bytes(), chip };
        self.args.push(Arg { buf: BufType { chip, len, elem }, role, dtype, shape, tensor: tensor.clone() });
        Ok(tensor)
    }

    /// A constant buffer of `value` in `elem` (one per pair).
    fn constant(&mut self, elem: ElemType, value: f64, cfg: &NpuConfig) {
        let key = (elem, value.to_bits());
        if self.constants.contains_key(&key) {
            return;
        }
        let len = CONSTANT_ELEMS;
        let region = self.args.len() as u32;
        let buf = BufType { chip: 0, len, elem };
        let dims = vec![(String::new(), len)];
        let row = cfg.padded_row(len);
        let (bytes, rows) = (len * elem.bytes(), true);
        let t = Tensor { region, dims, row, strides: vec![1], offset: 0, rows, elem, bytes, chip: 0 };
        self.args.push(Arg { buf, role: Role::Scratch, dtype: DType::F32, shape: vec![len], tensor: t.clone() });
        self.constants.insert(key, t);
    }

    /// The `npu.tensors` attribute: per argument `{role, name, shape, dtype, layout}` (scratch: `{role}` only).
    pub fn attr(&self, ints: &mut Interners) -> AttrId {
        let items: Vec<AttrId> = self.args.iter().map(|a| arg_attr(ints, a)).collect();
        ints.attr(Attr::Array(items.into()))
    }
}

fn arg_attr(ints: &mut Interners, a: &Arg) -> AttrId {
    let (role, name) = match &a.role {
        Role::Source(n) => ("source", Some(n)),
        Role::Sink(n) => ("sink", Some(n)),
        Role::Scratch => ("scratch", None),
    };
    let i64t = ints.int_type(64);
    let mut entries = vec![(ints.sym("role"), ints.string_attr(role))];
    if let Some(name) = name {
        let shape: Vec<AttrId> = a.shape.iter().map(|&e| ints.int_attr(e as i128, i64t)).collect();
        let layout = a.tensor.strided().attr(ints, &a.shape);
        entries.push((ints.sym("name"), ints.string_attr(name)));
        entries.push((ints.sym("shape"), ints.attr(Attr::Array(shape.into()))));
        entries.push((ints.sym("dtype"), ints.string_attr(&a.dtype.to_string())));
        entries.push((ints.sym("layout"), layout));
    }
    ints.dict_attr(entries)
}

/// The element type of the TEG tensor `v`.
fn dtype_of(ctx: &Context, v: ValueId) -> DType {
    as_tensor(ctx, ctx.body.value_type(v)).map_or(DType::F32, |t| t.dtype)
}

/// The computed values exactly one sink writes out, with that sink's name.
fn sole_sinks(ctx: &Context, ops: &[OpId]) -> HashMap<ValueId, String> {
    let mut count: HashMap<ValueId, (usize, String)> = HashMap::new();
    for &op in ops {
        if let Ok(OpKind::Io(Io::Sink { name })) = decode(ctx, op) {
            count.entry(ctx.body.operand(op, 0)).or_insert((0, name)).0 += 1;
        }
    }
    count.into_iter().filter(|(_, (n, _))| *n == 1).map(|(v, (_, name))| (v, name)).collect()
}

/// Dimension names and extents.
type Dims = Vec<(String, u64)>;

/// A tensor value's element type, dimensions (a scalar as one of extent 1, named "") and NPU element type.
fn tensor_parts(ctx: &Context, v: ValueId) -> Result<(DType, Dims, ElemType), String> {
    let ty = as_tensor(ctx, ctx.body.value_type(v)).ok_or("not a TEG tensor")?;
    let elem = npu_elem(ty.dtype).ok_or(format!(
        "the NPU does not compute on {} (its types are bf16, f32, i8, i32; i1 lives as i8)",
        ty.dtype
    ))?;
    let mut dims = ty.dims.clone();
    if dims.is_empty() {
        dims.push((String::new(), 1));
    }
    Ok((ty.dtype, dims, elem))
}

/// Whether `dims` stand for a scalar (one dimension of extent 1 without a name, as [`tensor_parts`] makes it).
fn is_scalar(dims: &[(String, u64)]) -> bool {
    matches!(dims, [(name, 1)] if name.is_empty())
}
