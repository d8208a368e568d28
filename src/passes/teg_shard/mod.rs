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
//! - from any other value (an unplanned source, an op without a plan), a chain of `teg.slice` views: it is on
//!   every device.
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
//! Plans come from each op's `teg.shard` (explicit part sizes included) or, for ops without one, from the `plan`
//! option (`batch:x,d1:y`; see `dialects::teg::shard_plan`), written on each op it fits before anything is split.
//!
//! This version splits elementwise ops, contractions, convolutions, reductions, strided views and constant
//! generators (`zeros`, `ones`, `full`: each shard is the generator of its box). A `mean` split along a reduced
//! dimension becomes shards that sum, their sum combined whole, and a division by the count (users read the
//! quotient whole). A plan that splits any other op, or a reduction with a `default` along a reduced dimension,
//! is an error at the op; ops without a plan (or with one that splits nothing) are left alone.

mod build;
mod expand;
mod geometry;

use super::options::{OptionKind, OptionSpec, OptionValues};
use super::pass::{Changed, Pass, PassEnv, PassInfo};
use super::registry::PassEntry;
use crate::array::DType;
use crate::dialects::teg::ops::{decode, Io, Monoid, OpKind};
use crate::dialects::teg::shard_plan::Placement;
use crate::dialects::teg::shard_plan::{
    parse_plan_option, placement, placement_of, set_placement, DimSplit, SHARD_ATTR,
};
use crate::dialects::teg::shard_problem::mesh_of;
use crate::dialects::teg::tensor_type::{as_tensor, TensorType};
use crate::dialects::teg::transfers::{table_of, DEVICES_ATTR};
use crate::dialects::teg::{graph_ops, graphs_under};
use crate::interfaces::sharding::{index_maps_of, IndexMaps};
use crate::ir::{Context, Diagnostic, OpId, ValueId};
use crate::machine::Machine;
use crate::shard::transfers::classify;
use crate::shard::Plan;
use crate::zspace::ZRange;
use build::{cast, clone_with, divide, fit_to_box, mark, pad, reshard, slice, zeros};
use expand::expand_split_linears;
use geometry::{clip, ranks_by_part, resized, shards};
use std::collections::HashMap;

/// The registration of `teg-shard`.
pub const ENTRY: PassEntry = PassEntry { info: &INFO, create };

static INFO: PassInfo = PassInfo {
    argument: "teg-shard",
    name: "TegShard",
    description: "Split every TEG op with a teg.shard plan into per-device shards joined by teg.reshard",
    anchor: None,
    options: &[OptionSpec {
        name: "plan",
        kind: OptionKind::String,
        default: "",
        description: "A plan for every op without teg.shard that has these index dimensions: batch:x,n:x+y",
    }],
    statistics: &[("num-ops", "Ops split"), ("num-shards", "Shard ops created"), ("num-reshards", "Reshards made")],
};

/// Most shards one op may be split into (the product of its split dimensions' parts); past it, an error at the op.
pub const MAX_SHARDS: u64 = 4096;

fn create(options: &OptionValues) -> Box<dyn Pass> {
    Box::new(Shard { plan: options.text("plan").to_string() })
}

struct Shard {
    /// The `plan` option's text.
    plan: String,
}

impl Pass for Shard {
    fn info(&self) -> &'static PassInfo {
        &INFO
    }

    fn run(&mut self, ctx: &mut Context, root: OpId, env: &mut PassEnv<'_>) -> Result<Changed, Vec<Diagnostic>> {
        let mut changed = Changed::No;
        let option = parse_plan_option(&self.plan)
            .map_err(|m| vec![Diagnostic::error(ctx.body.op(root).loc, format!("teg-shard: option plan: {m}"))])?;
        for graph in graphs_under(ctx, root) {
            let Some(machine) = mesh_of(ctx, graph) else { continue };
            let machine = machine.map_err(|d| vec![d])?;
            if !option.is_empty() {
                write_option_plans(ctx, graph, &option, &machine, env).map_err(|d| vec![d])?;
            }
            expand_split_linears(ctx, graph, &machine).map_err(|d| vec![d])?;
            let ops: Vec<OpId> = graph_ops(ctx, graph).collect();
            let mut state = Graph { machine, split: HashMap::new(), made: Vec::new(), whole: Vec::new() };
            for op in ops {
                let kind = decode(ctx, op);
                let Some(maps) = index_maps_of(ctx, op) else { continue };
                let Some(placement) = placement_of(ctx, op, &maps.index, &state.machine) else { continue };
                let placement = placement.map_err(|d| vec![d])?;
                if placement.plan.used().is_empty()
                    || matches!(kind, Ok(OpKind::Io(Io::Sink { .. } | Io::SequencePoint)))
                {
                    continue;
                }
                let loc = ctx.body.op(op).loc;
                let at = |m: String| vec![Diagnostic::error(loc, format!("teg-shard: {m}"))];
                if ctx.op_attr(op, DEVICES_ATTR).is_some() {
                    return Err(at(format!("the op is already a shard ({DEVICES_ATTR}); it cannot take a plan")));
                }
                if matches!(kind, Ok(OpKind::Io(Io::Source { .. }))) {
                    state.cut_source(ctx, op, &maps, &placement).map_err(at)?;
                    continue;
                }
                let shards = state.split(ctx, op, &maps, &placement, env).map_err(at)?;
                if shards == 0 {
                    continue;
                }
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
    fn cut_source(
        &mut self,
        ctx: &mut Context,
        op: OpId,
        maps: &IndexMaps,
        placement: &Placement,
    ) -> Result<(), String> {
        let value = ctx.body.results(op).next().ok_or("the source has no result")?;
        let Some(anchor) = ctx.body.next_op(op) else { return Ok(()) };
        let plan = &placement.plan;
        let ranks = ranks_by_part(plan, &self.machine);
        let mut parts = Vec::new();
        let boxes = shards(maps, placement, &self.machine)?;
        if boxes.is_empty() {
            return Ok(());
        }
        for (part, index) in boxes {
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
        placement: &Placement,
        env: &mut PassEnv<'_>,
    ) -> Result<usize, String> {
        let plan = &placement.plan;
        check_splittable(ctx, op, maps, plan)?;
        let result = ctx.body.results(op).next().ok_or("the op has no result")?;
        let out_type = as_tensor(ctx, ctx.body.value_type(result)).ok_or("the result is not a tensor")?.clone();
        let operands: Vec<ValueId> = ctx.body.operands(op).collect();
        let ranks = ranks_by_part(plan, &self.machine);
        let name = label(ctx, op, maps, plan, &self.machine);
        let boxes = shards(maps, placement, &self.machine)?;
        if boxes.is_empty() {
            return Ok(0); // An empty index space: nothing to split.
        }
        let split_reduced = maps.reductions.iter().any(|(d, _)| !plan.0[*d].is_empty());
        // A mean split along a reduced dimension: its shards sum, and the whole sum is divided by the count.
        let mean = split_reduced && matches!(decode(ctx, op), Ok(OpKind::Reduce(r)) if r.monoid == Monoid::Mean);
        // Partial sums (and products) of bf16 or f16 are computed and combined in f32 and rounded once at the end,
        // as the reference rounds a whole one: rounding each partial would lose what cancels between them.
        let exact = matches!(maps.reductions.first(), Some((_, Monoid::Max | Monoid::Min)));
        let widen = split_reduced && !exact && matches!(out_type.dtype, DType::BF16 | DType::F16);
        let work_type = TensorType { dtype: if widen { DType::F32 } else { out_type.dtype }, ..out_type.clone() };
        let mut edges: Vec<Vec<OpId>> = vec![Vec::new(); operands.len()];
        let mut parts = Vec::new();
        for (part, index) in boxes {
            let devices = ranks.get(&part).cloned().unwrap_or_default();
            let mut ins = Vec::with_capacity(operands.len());
            let mut first_read = None;
            for (slot, (v, (_, p))) in operands.iter().zip(&maps.inputs).enumerate() {
                let read = p[0].ipf.project(&index).map_err(|e| e.to_string())?;
                let Some((inside, border)) = clip(ctx, *v, &read)? else {
                    ins.push(zeros(ctx, op, *v, &read)?);
                    continue;
                };
                first_read.get_or_insert_with(|| inside.clone());
                let (value, reshard) = self.operand(ctx, op, *v, &inside, &devices)?;
                edges[slot].extend(reshard);
                ins.push(pad(ctx, op, value, &border)?);
            }
            if widen {
                ins = ins.into_iter().map(|v| widened(ctx, op, v, &devices)).collect();
            }
            let region = maps.outputs[0].1.project(&index).map_err(|e| e.to_string())?;
            let shard = clone_with(ctx, op, &ins, resized(&work_type, &region), &devices);
            if mean {
                let sum = ctx.string_attr(Monoid::Sum.name());
                ctx.set_op_prop(shard, "monoid", sum);
            }
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
        let combine = match (split_reduced, mean) {
            (true, true) => Some(Monoid::Sum),
            (true, false) => maps.reductions.first().map(|r| r.1),
            _ => None,
        };
        let made = parts.len();
        let whole = ZRange::of_shape(&out_type.dims.iter().map(|d| d.1).collect::<Vec<_>>());
        let sources: Vec<(ValueId, &ZRange)> = parts.iter().map(|p| (p.value, &p.region)).collect();
        let full = reshard(ctx, op, &sources, &whole, &work_type, combine, None);
        let full_value = ctx.body.results(full).next().expect("one result");
        if mean || widen {
            // Users read the quotient (or the rounded sum) whole, sliced as they need: the shards hold sums, not
            // means (or sums in f32).
            let count = maps.reductions.iter().map(|&(d, _)| maps.index[d].1).product::<u64>();
            let quotient = if mean { divide(ctx, op, full_value, &work_type, count) } else { full_value };
            let rounded = if widen { cast(ctx, op, quotient, out_type.dtype, None) } else { quotient };
            ctx.body.replace_all_uses(result, rounded);
            ctx.body.erase_op(op);
            self.whole.push((full, name));
            return Ok(made);
        }
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
        let tables: Result<Vec<_>, String> = made.iter().filter_map(|&r| table_of(ctx, r, mesh)).collect();
        let tables = match tables {
            Ok(t) => t,
            Err(e) => {
                return Diagnostic::remark(ctx.body.op(op).loc, format!("teg-shard: {what}: no transfer table ({e})"))
            }
        };
        let edge: Vec<_> = tables.iter().map(|t| t.as_reshard()).collect();
        let moves: usize = tables.iter().map(|t| t.moves.len()).sum();
        let bytes = tables.iter().fold(0u64, |n, t| n.saturating_add(t.bytes()));
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

/// Writes the `plan` option's placement on every op of `graph` that has none and that it splits (not on shards,
/// which carry `teg.devices`, nor on reshards); an op it would
/// split but `teg-shard` cannot (or whose extent is smaller than the parts) is left whole, with a remark. An axis
/// the graph's mesh lacks is an error at the graph.
fn write_option_plans(
    ctx: &mut Context,
    graph: OpId,
    option: &[DimSplit],
    machine: &Machine,
    env: &mut PassEnv<'_>,
) -> Result<(), Diagnostic> {
    if let Some(axis) = option.iter().flat_map(|s| &s.axes).find(|a| machine.mesh().axis_index(a).is_err()) {
        let message = format!("teg-shard: option plan: the mesh of this graph has no axis '{axis}'");
        return Err(Diagnostic::error(ctx.body.op(graph).loc, message));
    }
    let ops: Vec<OpId> = graph_ops(ctx, graph).collect();
    let mut matched = vec![false; option.len()];
    for op in ops {
        let Some(maps) = index_maps_of(ctx, op) else { continue };
        for (seen, split) in matched.iter_mut().zip(option) {
            *seen |= maps.index.iter().any(|d| d.0 == split.dim);
        }
        let kind = decode(ctx, op);
        let placed = ctx.op_attr(op, SHARD_ATTR).is_some() || ctx.op_attr(op, DEVICES_ATTR).is_some();
        if placed || matches!(kind, Ok(OpKind::Io(Io::Sink { .. }) | OpKind::Reshard(_))) {
            continue;
        }
        let fits = placement(option, &maps.index, machine, true).and_then(|p| {
            let is_source = matches!(kind, Ok(OpKind::Io(Io::Source { .. })));
            if !is_source && !p.plan.used().is_empty() {
                check_splittable(ctx, op, &maps, &p.plan)?;
            }
            Ok(p)
        });
        match fits {
            Ok(p) if p.plan.used().is_empty() => {}
            Ok(p) => set_placement(ctx, op, &p, &maps.index, machine),
            Err(m) => {
                let message = format!("teg-shard: the plan option leaves '{}' whole: {m}", ctx.op_name(op));
                env.remarks.push(Diagnostic::remark(ctx.body.op(op).loc, message));
            }
        }
    }
    for split in option.iter().zip(&matched).filter(|(_, &m)| !m).map(|(s, _)| s) {
        let message =
            format!("teg-shard: the plan option's dimension '{}' is an index dimension of no op here", split.dim);
        env.remarks.push(Diagnostic::warning(ctx.body.op(graph).loc, message));
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
        OpKind::Reduce(r) if r.default.is_some() => {
            if maps.reductions.iter().any(|(d, _)| !plan.0[*d].is_empty()) {
                return Err(format!(
                    "cannot split a reduced dimension of a '{}' reduction with a default yet",
                    r.monoid.name()
                ));
            }
        }
        // A masked mean's count is the mask's, not the reduced extent the split divides by.
        OpKind::Reduce(r) if r.monoid == Monoid::Mean && ctx.body.operands(op).count() > 1 => {
            if maps.reductions.iter().any(|(d, _)| !plan.0[*d].is_empty()) {
                return Err("cannot split a reduced dimension of a masked 'mean' reduction yet".into());
            }
        }
        OpKind::Reduce(_) => {}
        OpKind::Generate(g) if g.is_constant() => {}
        _ => {
            return Err(format!(
                "cannot split '{name}' yet (elementwise ops, contractions, convolutions, reductions, strided views and constant generators only)"
            ))
        }
    }
    if maps.inputs.iter().any(|(_, p)| p.len() != 1 || !p[0].affine) || maps.outputs.len() != 1 {
        return Err(format!("'{name}' reads an operand piecewise"));
    }
    Ok(())
}

/// `v` cast to f32 before `op` on `devices` if it is a bf16 or f16 tensor (a widened partial's operand).
fn widened(ctx: &mut Context, op: OpId, v: ValueId, devices: &[usize]) -> ValueId {
    match as_tensor(ctx, ctx.body.value_type(v)).map(|t| t.dtype) {
        Some(DType::BF16 | DType::F16) => cast(ctx, op, v, DType::F32, Some(devices)),
        _ => v,
    }
}
