//! `teg-shard`: rewrites every TEG op that carries a `teg.shard` plan, in a graph with a `teg.mesh`, into one op
//! per shard of its index space, so the graph says what each device computes.
//!
//! For each combination of parts of the split index dimensions, the op is repeated on the shapes of that shard:
//! each operand becomes the box its IPF reads (a chain of `teg.slice` views, one per dimension it cuts), and the
//! shard op is marked with the ranks of the devices that compute it (`teg.devices`, row-major ranks of the mesh;
//! several when the shard is replicated along axes the plan does not use). Shards that differ only along reduced
//! dimensions are partial results of one output box: they are combined with the reduction's monoid (`teg.add`,
//! `teg.mul`, `teg.max`, `teg.min`). The output boxes are reassembled with `teg.concat` along each split output
//! dimension, and the result replaces the op's. Values are unchanged: the reference evaluator gives the same
//! outputs before and after (`tests/teg_shard.rs` checks it for every plan of several graphs).
//!
//! This first version splits elementwise ops, contractions and reductions (their meaning does not depend on the
//! shape they run on). A plan that splits any other op, a `mean` reduction or a reduction with a `default` along a
//! reduced dimension is an error at the op; ops without a plan (or with one that splits nothing) are left alone,
//! and so are sources and sinks, whose plans say where their values live.

use super::pass::{Changed, Pass, PassEnv, PassInfo};
use super::registry::PassEntry;
use crate::dialects::teg::graphs_under;
use crate::dialects::teg::ops::{decode, Monoid, OpKind};
use crate::dialects::teg::shard_problem::{mesh_of, plan_of, SHARD_ATTR};
use crate::dialects::teg::tensor_type::{as_tensor, tensor_type, TensorType};
use crate::interfaces::sharding::{index_maps_of, IndexMaps};
use crate::ir::builder::OpState;
use crate::ir::{Context, Diagnostic, OpId, ValueId};
use crate::machine::Machine;
use crate::shard::Plan;
use crate::zspace::ZRange;
use std::collections::BTreeMap;

/// The registration of `teg-shard`.
pub const ENTRY: PassEntry = PassEntry { info: &INFO, create };

static INFO: PassInfo = PassInfo {
    argument: "teg-shard",
    name: "TegShard",
    description: "Split every TEG op with a teg.shard plan into per-device shards, reassembled with concat",
    anchor: None,
    options: &[],
    statistics: &[("num-ops", "Ops split"), ("num-shards", "Shard ops created")],
};

/// The device attribute of a shard op.
pub const DEVICES_ATTR: &str = "teg.devices";

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
            let region = ctx.body.regions(graph)[0];
            let ops: Vec<OpId> = ctx
                .body
                .region(region)
                .blocks
                .clone()
                .into_iter()
                .flat_map(|b| ctx.body.block_ops(b).collect::<Vec<_>>())
                .collect();
            for op in ops {
                // A source's or a sink's plan says where the value lives, not a computation to split.
                if matches!(decode(ctx, op), Ok(OpKind::Io(_))) {
                    continue;
                }
                let Some(maps) = index_maps_of(ctx, op) else { continue };
                let Some(plan) = plan_of(ctx, op, &maps.index, &machine) else { continue };
                let plan = plan.map_err(|d| vec![d])?;
                if plan.used().is_empty() {
                    continue;
                }
                let shards = split(ctx, op, &maps, &plan, &machine).map_err(|m| vec![at(ctx, op, m)])?;
                env.stats.add("num-ops", 1);
                env.stats.add("num-shards", shards as u64);
                changed = Changed::Yes;
            }
        }
        Ok(changed)
    }
}

fn at(ctx: &Context, op: OpId, message: String) -> Diagnostic {
    Diagnostic::error(ctx.body.op(op).loc, format!("teg-shard: {message}"))
}

/// Splits `op` by `plan`; returns the number of shard ops made.
fn split(ctx: &mut Context, op: OpId, maps: &IndexMaps, plan: &Plan, machine: &Machine) -> Result<usize, String> {
    let kind = decode(ctx, op)?;
    let name = ctx.op_name(op).to_string();
    match &kind {
        OpKind::Cell(_) | OpKind::Contraction(_) => {}
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
        _ => return Err(format!("cannot split '{name}' yet (elementwise ops, contractions and reductions only)")),
    }
    if maps.inputs.iter().any(|(_, p)| p.len() != 1 || !p[0].affine) || maps.outputs.len() != 1 {
        return Err(format!("'{name}' reads an operand piecewise"));
    }
    let result = ctx.body.results(op).next().ok_or("the op has no result")?;
    let out_type = as_tensor(ctx, ctx.body.value_type(result)).ok_or("the result is not a tensor")?.clone();
    let operands: Vec<ValueId> = ctx.body.operands(op).collect();
    let mesh = machine.mesh();
    let shards = plan.0.iter().try_fold(1u64, |n, s| n.checked_mul(s.parts(mesh).max(1)));
    if shards.is_none_or(|n| n > MAX_SHARDS) {
        return Err(format!("the plan makes more than MAX_SHARDS ({MAX_SHARDS}) shards of one op"));
    }
    let whole = maps.index_range();
    // Per index dimension, its pieces (one when not split).
    let pieces: Vec<Vec<ZRange>> = (0..maps.index.len())
        .map(|i| whole.split(i, plan.0[i].parts(mesh).max(1)).map_err(|e| e.to_string()))
        .collect::<Result<_, _>>()?;
    // Group the shards by their output box (partial results of one box differ only along reduced dimensions).
    let mut by_output: BTreeMap<Vec<usize>, Vec<ValueId>> = BTreeMap::new();
    let mut made = 0;
    let reduced: Vec<usize> = maps.reductions.iter().map(|r| r.0).collect();
    let ranks = ranks_by_part(plan, machine);
    for part in parts(&pieces) {
        let mut index = whole.clone();
        for (i, &k) in part.iter().enumerate() {
            index = index.intersect(&pieces[i][k]).expect("same rank");
        }
        if index.is_empty() {
            continue;
        }
        let mut ins = Vec::with_capacity(operands.len());
        for (v, (_, p)) in operands.iter().zip(&maps.inputs) {
            let read = p[0].ipf.project(&index).map_err(|e| e.to_string())?;
            ins.push(slice(ctx, op, *v, &read)?);
        }
        let out_box = maps.outputs[0].1.project(&index).map_err(|e| e.to_string())?;
        let ty = resized(&out_type, &out_box);
        let devices = ranks.get(&part).cloned().unwrap_or_default();
        let shard = clone_with(ctx, op, &ins, ty, &devices);
        made += 1;
        let key: Vec<usize> = part.iter().enumerate().map(|(i, &k)| if reduced.contains(&i) { 0 } else { k }).collect();
        by_output.entry(key).or_default().push(ctx.body.results(shard).next().expect("one result"));
    }
    let monoid = maps.reductions.first().map(|r| r.1);
    let mut boxes: BTreeMap<Vec<usize>, ValueId> = BTreeMap::new();
    for (key, partials) in by_output {
        boxes.insert(key, combine(ctx, op, &partials, monoid)?);
    }
    let value = reassemble(ctx, op, boxes, maps, plan, &out_type)?;
    ctx.body.replace_all_uses(result, value);
    ctx.body.erase_op(op);
    Ok(made)
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

/// The box `read` of `v`, as `teg.slice` views along each dimension it cuts, inserted before `anchor`.
fn slice(ctx: &mut Context, anchor: OpId, v: ValueId, read: &ZRange) -> Result<ValueId, String> {
    let mut t = as_tensor(ctx, ctx.body.value_type(v)).ok_or("an operand is not a tensor")?.clone();
    let mut value = v;
    for j in 0..t.dims.len() {
        let (start, end) = (read.start()[j], read.end()[j]);
        if start == 0 && end as u64 == t.dims[j].1 {
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
        value = insert(ctx, anchor, state);
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
    let i64t = ctx.int_type(64);
    let ranks = devices.iter().map(|&r| ctx.int_attr(r as i128, i64t)).collect::<Vec<_>>();
    let list = ctx.attr(crate::ir::Attr::Array(ranks.into()));
    let state = state.attr(ctx, DEVICES_ATTR, list);
    let shard = state.create(ctx);
    ctx.body.insert_op_before(op, shard);
    shard
}

fn insert(ctx: &mut Context, anchor: OpId, state: OpState) -> ValueId {
    let op = state.create(ctx);
    ctx.body.insert_op_before(anchor, op);
    ctx.body.results(op).next().expect("one result")
}

/// The partial results of one output box combined with the monoid, left to right.
fn combine(ctx: &mut Context, anchor: OpId, partials: &[ValueId], monoid: Option<Monoid>) -> Result<ValueId, String> {
    let mut acc = partials[0];
    for &next in &partials[1..] {
        let name = match monoid {
            Some(Monoid::Sum) => "teg.add",
            Some(Monoid::Prod) => "teg.mul",
            Some(Monoid::Max) => "teg.max",
            Some(Monoid::Min) => "teg.min",
            Some(Monoid::Mean) | None => return Err("partial results without a monoid to combine them".into()),
        };
        let ty = ctx.body.value_type(acc);
        let loc = ctx.body.op(anchor).loc;
        let state = OpState::new(ctx, name, loc).operands(&[acc, next]).results(&[ty]);
        acc = insert(ctx, anchor, state);
    }
    Ok(acc)
}

/// The output boxes (keyed by their pieces per index dimension) joined by `teg.concat` along each split output
/// dimension, last index dimension first.
fn reassemble(
    ctx: &mut Context,
    anchor: OpId,
    mut boxes: BTreeMap<Vec<usize>, ValueId>,
    maps: &IndexMaps,
    plan: &Plan,
    out: &TensorType,
) -> Result<ValueId, String> {
    let ipf = &maps.outputs[0].1;
    for i in (0..maps.index.len()).rev() {
        let splits = boxes.keys().any(|k| k[i] > 0);
        if !splits || plan.0[i].is_empty() {
            continue;
        }
        let Some(j) = (0..ipf.map().outputs()).find(|&j| ipf.map().coef(j, i) != 0) else {
            return Err(format!("index dimension {} is split but moves no output dimension", maps.index[i].0));
        };
        let mut groups: BTreeMap<Vec<usize>, Vec<ValueId>> = BTreeMap::new();
        for (key, v) in std::mem::take(&mut boxes) {
            let mut rest = key.clone();
            rest[i] = 0;
            groups.entry(rest).or_default().push(v);
        }
        for (key, parts) in groups {
            let value = if parts.len() == 1 { parts[0] } else { concat(ctx, anchor, &parts, &out.dims[j].0)? };
            boxes.insert(key, value);
        }
    }
    let mut values = boxes.into_values();
    match (values.next(), values.next()) {
        (Some(v), None) => Ok(v),
        _ => Err("the shards did not reassemble into one value".into()),
    }
}

fn concat(ctx: &mut Context, anchor: OpId, parts: &[ValueId], dim: &str) -> Result<ValueId, String> {
    let types: Vec<TensorType> = parts
        .iter()
        .map(|&v| as_tensor(ctx, ctx.body.value_type(v)).cloned().ok_or("a shard is not a tensor"))
        .collect::<Result<_, _>>()?;
    let mut t = types[0].clone();
    let j = t.position(dim).ok_or("the concat dimension is missing")?;
    t.dims[j].1 = types.iter().map(|x| x.dims[j].1).sum();
    let ty = tensor_type(ctx, t);
    let name = ctx.string_attr(dim);
    let loc = ctx.body.op(anchor).loc;
    let state = OpState::new(ctx, "teg.concat", loc).operands(parts).results(&[ty]).prop(ctx, "dim", name);
    Ok(insert(ctx, anchor, state))
}
