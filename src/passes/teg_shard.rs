//! `teg-shard`: rewrites every TEG op that carries a `teg.shard` plan, in a graph with a `teg.mesh`, into one op
//! per shard of its index space, so the graph says what each device computes and what moves between devices.
//!
//! For each combination of parts of the split index dimensions, the op is repeated on the shapes of that shard and
//! marked with the ranks of the devices that compute it (`teg.devices`, row-major ranks of the mesh; several when
//! the shard is replicated along axes the plan does not use). Each operand becomes the box its IPF reads:
//! - from a value `teg-shard` split, the producer's shard itself when it is that box on those devices, and
//!   otherwise a `teg.reshard` of the producer's shards that overlap the box (partial results of a split reduced
//!   dimension are combined there with the reduction's monoid). Every such edge is reported as a remark naming both
//!   ops, their plans, the collective the moves amount to and the bytes moved (`teg-print-transfers` prints the
//!   tables);
//! - from any other value (a source, an op without a plan), a chain of `teg.slice` views: it is on every device.
//!
//! A planned source is cut into the boxes its plan gives (slices marked with their devices). The whole value of a
//! split op is reassembled by one `teg.reshard` (no `teg.devices`: on every device) for its users that are not
//! split, such as sinks; it and any slices nobody reads are removed. Values are unchanged: the reference evaluator
//! gives the same outputs before and after (`tests/teg_shard.rs` checks it for every plan of several graphs).
//!
//! Where a read box crosses an operand's border (a convolution's padded windows), the part inside is read and the
//! rest padded explicitly with `teg.pad`; a convolution shard then runs with padding 0. A `teg.linear` whose summed
//! dimension is split is first expanded into `teg.matmul` and `teg.add`, so that the bias is added once.
//!
//! A strided view's shard is the same view of the box it reads, its attributes fitted to that box.
//!
//! This version splits elementwise ops, contractions, convolutions, reductions and strided views. A plan that
//! splits any other op, a `mean` reduction or a reduction with a `default` along a reduced dimension is an error
//! at the op; ops without a plan (or with one that splits nothing) are left alone.

use super::pass::{Changed, Pass, PassEnv, PassInfo};
use super::registry::PassEntry;
use crate::dialects::teg::graphs_under;
use crate::dialects::teg::ops::{decode, Contraction, Io, Monoid, OpKind, View};
use crate::dialects::teg::shard_problem::{mesh_of, plan_of, set_plan, SHARD_ATTR};
use crate::dialects::teg::tensor_type::{as_tensor, tensor_type, TensorType};
use crate::dialects::teg::transfers::{table_of, DEVICES_ATTR};
use crate::interfaces::sharding::{index_maps_of, IndexMaps};
use crate::ir::builder::OpState;
use crate::ir::rewrite::Rewriter;
use crate::ir::{Attr, Context, Diagnostic, OpId, ValueDef, ValueId};
use crate::machine::Machine;
use crate::shard::transfers::classify;
use crate::shard::{AxisSet, Plan};
use crate::zspace::ZRange;
use std::collections::{BTreeMap, HashMap};

/// The registration of `teg-shard`.
pub const ENTRY: PassEntry = PassEntry { info: &INFO, create };

static INFO: PassInfo = PassInfo {
    argument: "teg-shard",
    name: "TegShard",
    description: "Split every TEG op with a teg.shard plan into per-device shards joined by teg.reshard",
    anchor: None,
    options: &[],
    statistics: &[("num-ops", "Ops split"), ("num-shards", "Shard ops created"), ("num-reshards", "Reshards made")],
};

/// Most shards one op may be split into (the product of its split dimensions' parts); past it, an error at the op.
pub const MAX_SHARDS: u64 = 4096;

fn create(_: &super::options::OptionValues) -> Box<dyn Pass> {
    Box::new(Shard)
}

struct Shard;

impl Pass for Shard {
    fn info(&self) -> &'static PassInfo {
        &INFO
    }

    fn run(&mut self, ctx: &mut Context, root: OpId, env: &mut PassEnv<'_>) -> Result<Changed, Vec<Diagnostic>> {
        let mut changed = Changed::No;
        for graph in graphs_under(ctx, root) {
            let Some(machine) = mesh_of(ctx, graph) else { continue };
            let machine = machine.map_err(|d| vec![d])?;
            expand_split_linears(ctx, graph, &machine).map_err(|d| vec![d])?;
            let region = ctx.body.regions(graph)[0];
            let ops: Vec<OpId> = ctx
                .body
                .region(region)
                .blocks
                .clone()
                .into_iter()
                .flat_map(|b| ctx.body.block_ops(b).collect::<Vec<_>>())
                .collect();
            let mut state = Graph { machine, split: HashMap::new(), made: Vec::new(), whole: Vec::new() };
            for op in ops {
                let kind = decode(ctx, op);
                let Some(maps) = index_maps_of(ctx, op) else { continue };
                let Some(plan) = plan_of(ctx, op, &maps.index, &state.machine) else { continue };
                let plan = plan.map_err(|d| vec![d])?;
                if plan.used().is_empty() || matches!(kind, Ok(OpKind::Io(Io::Sink { .. } | Io::SequencePoint))) {
                    continue;
                }
                let loc = ctx.body.op(op).loc;
                let at = |m: String| vec![Diagnostic::error(loc, format!("teg-shard: {m}"))];
                if matches!(kind, Ok(OpKind::Io(Io::Source { .. }))) {
                    state.cut_source(ctx, op, &maps, &plan).map_err(at)?;
                    continue;
                }
                let shards = state.split(ctx, op, &maps, &plan, env).map_err(at)?;
                env.stats.add("num-ops", 1);
                env.stats.add("num-shards", shards as u64);
                changed = Changed::Yes;
            }
            state.finish(ctx, env);
        }
        Ok(changed)
    }
}

/// One shard of a split value: its value, its box of the whole tensor, and the devices holding it.
struct Part {
    value: ValueId,
    region: ZRange,
    devices: Vec<usize>,
}

/// A value `teg-shard` split: its shards, how its partial results combine, and what made it (for remarks).
struct Split {
    parts: Vec<Part>,
    combine: Option<Monoid>,
    maker: String,
}

/// What `teg-shard` knows while it walks one graph.
struct Graph {
    machine: Machine,
    /// The split values, by the whole value that replaced them.
    split: HashMap<ValueId, Split>,
    /// Ops it created that may end up unread (slices of sources), in creation order.
    made: Vec<OpId>,
    /// The reshards reassembling whole values, with what made them.
    whole: Vec<(OpId, String)>,
}

impl Graph {
    /// Cuts a planned source into the boxes its plan gives, each a slice (after the source) marked with its devices.
    fn cut_source(&mut self, ctx: &mut Context, op: OpId, maps: &IndexMaps, plan: &Plan) -> Result<(), String> {
        let value = ctx.body.results(op).next().ok_or("the source has no result")?;
        let Some(anchor) = ctx.body.next_op(op) else { return Ok(()) };
        let ranks = ranks_by_part(plan, &self.machine);
        let mut parts = Vec::new();
        for (part, index) in shards(maps, plan, &self.machine)? {
            let region = maps.outputs[0].1.project(&index).map_err(|e| e.to_string())?;
            let devices = ranks.get(&part).cloned().unwrap_or_default();
            let (piece, made) = slice(ctx, anchor, value, &region, true)?;
            mark(ctx, *made.last().expect("at least one slice"), &devices);
            self.made.extend(made);
            parts.push(Part { value: piece, region, devices });
        }
        self.split.insert(value, Split { parts, combine: None, maker: label(ctx, op, maps, plan, &self.machine) });
        Ok(())
    }

    /// Splits `op` by `plan`; returns the number of shard ops made.
    fn split(
        &mut self,
        ctx: &mut Context,
        op: OpId,
        maps: &IndexMaps,
        plan: &Plan,
        env: &mut PassEnv<'_>,
    ) -> Result<usize, String> {
        check_splittable(ctx, op, maps, plan)?;
        let result = ctx.body.results(op).next().ok_or("the op has no result")?;
        let out_type = as_tensor(ctx, ctx.body.value_type(result)).ok_or("the result is not a tensor")?.clone();
        let operands: Vec<ValueId> = ctx.body.operands(op).collect();
        let ranks = ranks_by_part(plan, &self.machine);
        let name = label(ctx, op, maps, plan, &self.machine);
        let mut edges: Vec<Vec<OpId>> = vec![Vec::new(); operands.len()];
        let mut parts = Vec::new();
        for (part, index) in shards(maps, plan, &self.machine)? {
            let devices = ranks.get(&part).cloned().unwrap_or_default();
            let mut ins = Vec::with_capacity(operands.len());
            let mut first_read = None;
            for (slot, (v, (_, p))) in operands.iter().zip(&maps.inputs).enumerate() {
                let read = p[0].ipf.project(&index).map_err(|e| e.to_string())?;
                let (inside, border) = clip(ctx, *v, &read)?;
                first_read.get_or_insert_with(|| inside.clone());
                let (value, reshard) = self.operand(ctx, op, *v, &inside, &devices)?;
                edges[slot].extend(reshard);
                ins.push(pad(ctx, op, value, &border)?);
            }
            let region = maps.outputs[0].1.project(&index).map_err(|e| e.to_string())?;
            let shard = clone_with(ctx, op, &ins, resized(&out_type, &region), &devices);
            fit_to_box(ctx, shard, first_read.as_ref().unwrap_or(&index), &region)?;
            parts.push(Part { value: ctx.body.results(shard).next().expect("one result"), region, devices });
        }
        for (slot, (v, made)) in operands.iter().zip(&edges).enumerate() {
            if let (Some(from), false) = (self.split.get(v), made.is_empty()) {
                let what = format!("operand {slot} of {name} from {}", from.maker);
                env.remarks.push(self.remark(ctx, op, &what, made));
                env.stats.add("num-reshards", made.len() as u64);
            }
        }
        let split_reduced = maps.reductions.iter().any(|(d, _)| !plan.0[*d].is_empty());
        let combine = if split_reduced { maps.reductions.first().map(|r| r.1) } else { None };
        let made = parts.len();
        let whole = ZRange::of_shape(&out_type.dims.iter().map(|d| d.1).collect::<Vec<_>>());
        let sources: Vec<(ValueId, &ZRange)> = parts.iter().map(|p| (p.value, &p.region)).collect();
        let full = reshard(ctx, op, &sources, &whole, &out_type, combine, None);
        let full_value = ctx.body.results(full).next().expect("one result");
        ctx.body.replace_all_uses(result, full_value);
        ctx.body.erase_op(op);
        self.whole.push((full, name.clone()));
        self.split.insert(full_value, Split { parts, combine, maker: name });
        Ok(made)
    }

    /// The box `read` of operand `v` for a shard on `devices`: the producer's shard itself, a `teg.reshard` of the
    /// producer's shards (returned as the second value), or slices of a value on every device.
    fn operand(
        &mut self,
        ctx: &mut Context,
        anchor: OpId,
        v: ValueId,
        read: &ZRange,
        devices: &[usize],
    ) -> Result<(ValueId, Option<OpId>), String> {
        let Some(split) = self.split.get(&v) else {
            let (value, made) = slice(ctx, anchor, v, read, false)?;
            self.made.extend(made);
            return Ok((value, None));
        };
        let overlapping: Vec<&Part> =
            split.parts.iter().filter(|p| p.region.intersect(read).is_some_and(|r| !r.is_empty())).collect();
        if let [only] = overlapping.as_slice() {
            if only.region == *read && devices.iter().all(|d| only.devices.contains(d)) {
                return Ok((only.value, None));
            }
        }
        let t = as_tensor(ctx, ctx.body.value_type(v)).ok_or("an operand is not a tensor")?.clone();
        let sources: Vec<(ValueId, &ZRange)> = overlapping.iter().map(|p| (p.value, &p.region)).collect();
        let op = reshard(ctx, anchor, &sources, read, &t, split.combine, Some(devices));
        Ok((ctx.body.results(op).next().expect("one result"), Some(op)))
    }

    /// A remark at `op` on the reshards `made` for `what`: the collective they amount to and the bytes moved.
    fn remark(&self, ctx: &Context, op: OpId, what: &str, made: &[OpId]) -> Diagnostic {
        let mesh = self.machine.mesh();
        let tables: Vec<_> = made.iter().filter_map(|&r| table_of(ctx, r, mesh)?.ok()).collect();
        let edge: Vec<_> = tables.iter().map(|t| t.as_reshard()).collect();
        let moves: usize = tables.iter().map(|t| t.moves.len()).sum();
        let bytes: u64 = tables.iter().map(|t| t.bytes()).sum();
        let message = format!("teg-shard: {what}: {}, {moves} moves, {bytes} B", classify(&edge));
        Diagnostic::remark(ctx.body.op(op).loc, message)
    }

    /// Removes what nobody reads (whole values only split ops used, slices of sources no shard took), and reports
    /// the reassembly of every whole value that is read.
    fn finish(&mut self, ctx: &mut Context, env: &mut PassEnv<'_>) {
        for &(op, ref name) in &self.whole {
            let value = ctx.body.results(op).next().expect("one result");
            if ctx.body.has_uses(value) {
                let what = format!("the whole value of {name} for its unsplit users");
                env.remarks.push(self.remark(ctx, op, &what, &[op]));
                env.stats.add("num-reshards", 1);
            } else {
                ctx.body.erase_op(op);
            }
        }
        for &op in self.made.iter().rev() {
            if ctx.body.results(op).all(|v| !ctx.body.has_uses(v)) {
                ctx.body.erase_op(op);
            }
        }
    }
}

/// Rewrites each `teg.linear` whose plan splits its summed `in` into `teg.matmul` (with that plan) and `teg.add` of
/// the bias (with the plan's output dimensions): each shard of a split `in` holds a partial sum, and the bias must
/// be added once, after they are combined. The whitepaper's local expansion, applied before splitting.
fn expand_split_linears(ctx: &mut Context, graph: OpId, machine: &Machine) -> Result<(), Diagnostic> {
    for op in crate::ir::walk::preorder(&ctx.body, graph) {
        if !matches!(decode(ctx, op), Ok(OpKind::Contraction(Contraction::Linear))) {
            continue;
        }
        let Some(maps) = index_maps_of(ctx, op) else { continue };
        let Some(plan) = plan_of(ctx, op, &maps.index, machine) else { continue };
        let plan = plan.map_err(|d| d)?;
        if maps.reductions.iter().all(|(d, _)| plan.0[*d].is_empty()) {
            continue;
        }
        let by_name: HashMap<&str, AxisSet> =
            maps.index.iter().map(|d| d.0.as_str()).zip(plan.0.iter().copied()).collect();
        let operands: Vec<ValueId> = ctx.body.operands(op).collect();
        let result = ctx.body.results(op).next().expect("one result");
        let ty = ctx.body.value_type(result);
        let loc = ctx.body.op(op).loc;
        let mut rw = Rewriter::at(ctx, op);
        let state = OpState::new(rw.interners(), "teg.matmul", loc).operands(&operands[..2]).results(&[ty]);
        let product = rw.create_value(state);
        let state = OpState::new(rw.interners(), "teg.add", loc).operands(&[product, operands[2]]).results(&[ty]);
        let sum = rw.create_value(state);
        rw.replace_op(op, &[sum]);
        for value in [product, sum] {
            let ValueDef::Result { op: new, .. } = ctx.body.value_def(value) else { continue };
            let Some(index) = index_maps_of(ctx, new).map(|m| m.index) else { continue };
            let plan =
                Plan(index.iter().map(|d| by_name.get(d.0.as_str()).copied().unwrap_or(AxisSet::EMPTY)).collect());
            set_plan(ctx, new, &plan, &index, machine);
        }
    }
    Ok(())
}

/// `teg.matmul {b = x, k = y}`: the op's name and plan.
fn label(ctx: &Context, op: OpId, maps: &IndexMaps, plan: &Plan, machine: &Machine) -> String {
    format!("{} {}", ctx.op_name(op), plan.display(&maps.index, machine.mesh()))
}

/// Whether `teg-shard` can split `op` by `plan`: elementwise ops, contractions, and reductions (a `mean` or one with
/// a `default` only along kept dimensions), each reading every operand through one affine IPF.
fn check_splittable(ctx: &Context, op: OpId, maps: &IndexMaps, plan: &Plan) -> Result<(), String> {
    let kind = decode(ctx, op)?;
    let name = ctx.op_name(op);
    match &kind {
        OpKind::Cell(_) | OpKind::Contraction(_) | OpKind::Conv2d(_) => {}
        OpKind::View(v) if v.splits_by_box() => {}
        OpKind::Reduce(r) if r.default.is_some() || r.monoid == Monoid::Mean => {
            if maps.reductions.iter().any(|(d, _)| !plan.0[*d].is_empty()) {
                return Err(format!(
                    "cannot split a reduced dimension of a '{}' reduction{} yet",
                    r.monoid.name(),
                    if r.default.is_some() { " with a default" } else { "" }
                ));
            }
        }
        OpKind::Reduce(_) => {}
        _ => {
            return Err(format!(
                "cannot split '{name}' yet (elementwise ops, contractions, convolutions, reductions and strided views only)"
            ))
        }
    }
    if maps.inputs.iter().any(|(_, p)| p.len() != 1 || !p[0].affine) || maps.outputs.len() != 1 {
        return Err(format!("'{name}' reads an operand piecewise"));
    }
    Ok(())
}

/// Each non-empty shard of `plan`'s index space: its piece per index dimension and its box; an error past
/// [`MAX_SHARDS`].
fn shards(maps: &IndexMaps, plan: &Plan, machine: &Machine) -> Result<Vec<(Vec<usize>, ZRange)>, String> {
    let mesh = machine.mesh();
    let count = plan.0.iter().try_fold(1u64, |n, s| n.checked_mul(s.parts(mesh).max(1)));
    if count.is_none_or(|n| n > MAX_SHARDS) {
        return Err(format!("the plan makes more than MAX_SHARDS ({MAX_SHARDS}) shards of one op"));
    }
    let whole = maps.index_range();
    let pieces: Vec<Vec<ZRange>> = (0..maps.index.len())
        .map(|i| whole.split(i, plan.0[i].parts(mesh).max(1)).map_err(|e| e.to_string()))
        .collect::<Result<_, _>>()?;
    let mut out = Vec::new();
    for part in parts(&pieces) {
        let mut index = whole.clone();
        for (i, &k) in part.iter().enumerate() {
            index = index.intersect(&pieces[i][k]).expect("same rank");
        }
        if !index.is_empty() {
            out.push((part, index));
        }
    }
    Ok(out)
}

/// Every combination of one piece per index dimension, row-major.
fn parts(pieces: &[Vec<ZRange>]) -> Vec<Vec<usize>> {
    let mut out = vec![Vec::new()];
    for p in pieces {
        out = out.into_iter().flat_map(|pre| (0..p.len()).map(move |k| [pre.clone(), vec![k]].concat())).collect();
    }
    out
}

/// The ranks of the devices computing each shard, keyed by its piece per index dimension: a device computes the
/// piece its coordinates along the dimension's axes give (mixed radix, mesh order). One pass over the devices.
fn ranks_by_part(plan: &Plan, machine: &Machine) -> BTreeMap<Vec<usize>, Vec<usize>> {
    let mesh = machine.mesh();
    let mut out: BTreeMap<Vec<usize>, Vec<usize>> = BTreeMap::new();
    for rank in 0..mesh.num_devices() {
        let coords = mesh.coords(rank).expect("a rank of the mesh");
        let part = plan.0.iter().map(|set| set.axes().fold(0usize, |acc, a| acc * mesh.axes()[a].size + coords[a]));
        out.entry(part.collect()).or_default().push(rank);
    }
    out
}

/// `t` with the extents of `b`.
fn resized(t: &TensorType, b: &ZRange) -> TensorType {
    let dims = t.dims.iter().zip(b.shape()).map(|((n, _), e)| (n.clone(), e)).collect();
    TensorType { dims, dtype: t.dtype }
}

/// The box `read` of `v`, as `teg.slice` views along each dimension it cuts (at least one when `always`),
/// inserted before `anchor`; returns the last view's value and the slice ops.
fn slice(
    ctx: &mut Context,
    anchor: OpId,
    v: ValueId,
    read: &ZRange,
    always: bool,
) -> Result<(ValueId, Vec<OpId>), String> {
    let mut t = as_tensor(ctx, ctx.body.value_type(v)).ok_or("an operand is not a tensor")?.clone();
    let (mut value, mut made) = (v, Vec::new());
    for j in 0..t.dims.len() {
        let (start, end) = (read.start()[j], read.end()[j]);
        let whole = start == 0 && end as u64 == t.dims[j].1;
        if whole && !(always && made.is_empty() && j + 1 == t.dims.len()) {
            continue;
        }
        t.dims[j].1 = (end - start) as u64;
        let ty = tensor_type(ctx, t.clone());
        let i64t = ctx.int_type(64);
        let dim = ctx.string_attr(&t.dims[j].0);
        let (s, e, one) = (ctx.int_attr(start as i128, i64t), ctx.int_attr(end as i128, i64t), ctx.int_attr(1, i64t));
        let loc = ctx.body.op(anchor).loc;
        let state = OpState::new(ctx, "teg.slice", loc)
            .operands(&[value])
            .results(&[ty])
            .prop(ctx, "dim", dim)
            .prop(ctx, "start", s)
            .prop(ctx, "stop", e)
            .prop(ctx, "step", one);
        let op = insert(ctx, anchor, state);
        value = ctx.body.results(op).next().expect("one result");
        made.push(op);
    }
    if made.is_empty() && always {
        return Err("cannot cut a tensor without dimensions".into());
    }
    Ok((value, made))
}

/// Adjusts a shard's attributes to its boxes (`first_read` of its first operand, `region` of its result): a
/// convolution's border is padded explicitly, so it pads nothing; a view's attributes follow its box
/// ([`View::at_box`]).
fn fit_to_box(ctx: &mut Context, shard: OpId, first_read: &ZRange, region: &ZRange) -> Result<(), String> {
    let i64t = ctx.int_type(64);
    let int = |ctx: &mut Context, v: i64| ctx.int_attr(v as i128, i64t);
    match decode(ctx, shard)? {
        OpKind::Conv2d(_) => {
            let zero = int(ctx, 0);
            let none = ctx.attr(Attr::Array(vec![zero, zero].into()));
            ctx.set_op_prop(shard, "padding", none);
        }
        OpKind::View(view) => {
            let x = ctx.body.operand(shard, 0);
            let names = owned(as_tensor(ctx, ctx.body.value_type(x)).ok_or("an operand is not a tensor")?.names());
            let result = ctx.body.results(shard).next().expect("one result");
            let out = owned(as_tensor(ctx, ctx.body.value_type(result)).ok_or("the result is not a tensor")?.names());
            let count = |dim: &str| out.iter().position(|n| n == dim).map_or(1, |j| region.shape()[j]);
            let fitted = match &view {
                View::Slice { dim, .. } | View::Broadcast { dim, .. } => {
                    view.at_box(&names, &out, first_read.start(), region.start(), count(dim))
                }
                other => other.at_box(&names, &out, first_read.start(), region.start(), 1),
            };
            match fitted {
                View::Slice { start, stop, .. } => {
                    let (start, stop) = (int(ctx, start), int(ctx, stop));
                    ctx.set_op_prop(shard, "start", start);
                    ctx.set_op_prop(shard, "stop", stop);
                }
                View::Select { index, .. } => {
                    let index = int(ctx, index);
                    ctx.set_op_prop(shard, "index", index);
                }
                View::Broadcast { extent, .. } => {
                    let extent = int(ctx, extent);
                    ctx.set_op_prop(shard, "extent", extent);
                }
                _ => {}
            }
        }
        _ => {}
    }
    Ok(())
}

fn owned(names: Vec<&str>) -> Vec<String> {
    names.into_iter().map(String::from).collect()
}

/// The part of box `read` inside `v`'s extents, and per dimension the cells of `read` before and after it (the
/// padding a convolution's window reads at the border).
fn clip(ctx: &Context, v: ValueId, read: &ZRange) -> Result<(ZRange, Vec<(u64, u64)>), String> {
    let t = as_tensor(ctx, ctx.body.value_type(v)).ok_or("an operand is not a tensor")?;
    let whole = ZRange::of_shape(&t.shape());
    let inside = read.intersect(&whole).filter(|r| !r.is_empty()).ok_or("a shard reads no cell of an operand")?;
    let border = (0..read.rank())
        .map(|j| ((inside.start()[j] - read.start()[j]) as u64, (read.end()[j] - inside.end()[j]) as u64))
        .collect();
    Ok((inside, border))
}

/// `v` with `border` cells of zeros added before and after along each dimension (a `teg.pad` per padded one).
fn pad(ctx: &mut Context, anchor: OpId, v: ValueId, border: &[(u64, u64)]) -> Result<ValueId, String> {
    let mut value = v;
    for (j, &(low, high)) in border.iter().enumerate() {
        if low == 0 && high == 0 {
            continue;
        }
        let mut t = as_tensor(ctx, ctx.body.value_type(value)).ok_or("an operand is not a tensor")?.clone();
        let dim = ctx.string_attr(&t.dims[j].0);
        t.dims[j].1 += low + high;
        let ty = tensor_type(ctx, t);
        let i64t = ctx.int_type(64);
        let (lo, hi) = (ctx.int_attr(low as i128, i64t), ctx.int_attr(high as i128, i64t));
        let f64t = ctx.float_type(crate::ir::types::FloatKind::F64);
        let (mode, zero) = (ctx.string_attr("constant"), ctx.attr(Attr::Float { bits: 0f64.to_bits(), ty: f64t }));
        let loc = ctx.body.op(anchor).loc;
        let state = OpState::new(ctx, "teg.pad", loc)
            .operands(&[value])
            .results(&[ty])
            .prop(ctx, "dim", dim)
            .prop(ctx, "low", lo)
            .prop(ctx, "high", hi)
            .prop(ctx, "mode", mode)
            .prop(ctx, "value", zero);
        let op = insert(ctx, anchor, state);
        value = ctx.body.results(op).next().expect("one result");
    }
    Ok(value)
}

/// A copy of `op` on `operands` with result type `ty`, marked with its devices, inserted before `op`.
fn clone_with(ctx: &mut Context, op: OpId, operands: &[ValueId], ty: TensorType, devices: &[usize]) -> OpId {
    let ty = tensor_type(ctx, ty);
    let data = ctx.body.op(op);
    let (loc, attrs, props) = (data.loc, data.attrs, data.props);
    let name = ctx.op_name(op).to_string();
    let mut state = OpState::new(ctx, &name, loc).operands(operands).results(&[ty]);
    state.props = ctx.dict_entries(props).to_vec();
    let shard_key = ctx.sym(SHARD_ATTR);
    state.attrs = ctx.dict_entries(attrs).iter().filter(|e| e.0 != shard_key).copied().collect();
    let shard = insert(ctx, op, state);
    mark(ctx, shard, devices);
    shard
}

/// Sets `op`'s `teg.devices` to `devices`.
fn mark(ctx: &mut Context, op: OpId, devices: &[usize]) {
    let i64t = ctx.int_type(64);
    let ranks = devices.iter().map(|&r| ctx.int_attr(r as i128, i64t)).collect::<Vec<_>>();
    let list = ctx.attr(Attr::Array(ranks.into()));
    ctx.set_op_attr(op, DEVICES_ATTR, list);
}

fn insert(ctx: &mut Context, anchor: OpId, state: OpState) -> OpId {
    let op = state.create(ctx);
    ctx.body.insert_op_before(anchor, op);
    op
}

/// A `teg.reshard` before `anchor` making box `to` of a tensor of type `whole` (its dimension names and element
/// type) from `sources` (values and their boxes), combining equal boxes with `combine`; marked with `devices`
/// (none: on every device).
fn reshard(
    ctx: &mut Context,
    anchor: OpId,
    sources: &[(ValueId, &ZRange)],
    to: &ZRange,
    whole: &TensorType,
    combine: Option<Monoid>,
    devices: Option<&[usize]>,
) -> OpId {
    let i64t = ctx.int_type(64);
    let offset = |ctx: &mut Context, r: &ZRange| {
        let coords = r.start().iter().map(|&c| ctx.int_attr(c as i128, i64t)).collect::<Vec<_>>();
        ctx.attr(Attr::Array(coords.into()))
    };
    let from: Vec<_> = sources.iter().map(|(_, r)| offset(ctx, r)).collect();
    let from = ctx.attr(Attr::Array(from.into()));
    let at = offset(ctx, to);
    let values: Vec<ValueId> = sources.iter().map(|s| s.0).collect();
    let ty = tensor_type(ctx, resized(whole, to));
    let loc = ctx.body.op(anchor).loc;
    let mut state = OpState::new(ctx, "teg.reshard", loc)
        .operands(&values)
        .results(&[ty])
        .prop(ctx, "from", from)
        .prop(ctx, "at", at);
    if let Some(m) = combine {
        let name = ctx.string_attr(m.name());
        state = state.prop(ctx, "combine", name);
    }
    let op = insert(ctx, anchor, state);
    if let Some(d) = devices {
        mark(ctx, op, d);
    }
    op
}
