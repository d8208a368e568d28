//! A TEG graph as a sharding problem for the search core (`crate::shard`): the mesh its `teg.mesh` attribute
//! declares, one problem op per TEG op with its index maps, and plans read from and written to `teg.shard`
//! attributes.
//!
//! `teg.mesh = {axes = ["x", "y"], shape = [2, 4], alpha = [1.0, 1.0], beta = [1.0, 0.01], memory = 1048576000}`
//! on a `teg.graph`: named axes, outermost first, with their sizes; per axis the link latency `α` and time per
//! byte `β` (default 1 each); the bytes per device (default: no limit); optionally `matrix` and `vector`, the
//! operations per time unit of a device (see [`time_per_point`]; an op's `teg.cost` overrides its operations per
//! point). Without rates compute is free (Alpa's model), and contractions and convolutions, the heavy ops, split
//! over the whole mesh whenever a valid plan does.
//!
//! A sink named as a source (`teg.sink @W1` after `teg.source @W1`) writes its value back over the source, as an
//! updated weight of a training step: the problem charges the reshard back to the source's spec.
//!
//! An op's `teg.shard` plan (`shard_plan.rs`) is a pin for `teg-auto-shard`.

use super::ops::{decode, Io, Monoid, OpKind};
use super::shard_plan::{plan_of, SHARD_ATTR};
use super::tensor_type::as_tensor;
use crate::interfaces::sharding::index_maps_of;
use crate::ir::{Attr, AttrId, Context, Diagnostic, OpId, ValueId};
use crate::machine::{presets, ElemType, Machine, OpClass};
use crate::shard::tables::Tables;
use crate::shard::{Op, Plan, Problem, ShardError, Strategies, Tensor, TensorId};
use crate::zspace::{Ipf, ZAffineMap};
use std::collections::HashMap;

/// Most devices a `teg.mesh` may have (the product of its axis sizes); past it, an error at the graph.
pub const MAX_MESH_DEVICES: usize = 1 << 16;

/// The graph attribute declaring the mesh.
pub const MESH_ATTR: &str = "teg.mesh";
/// Most operations per index point a `teg.cost` may give.
pub const MAX_COST_PER_POINT: f64 = 1e12;
/// The range of a `teg.mesh`'s `matrix` and `vector` rates (operations per time unit).
pub const RATE_RANGE: (f64, f64) = (1e-12, 1e18);
/// The fields a `teg.mesh` may have.
const MESH_FIELDS: &[&str] = &["axes", "shape", "alpha", "beta", "memory", "matrix", "vector"];
/// The op attribute overriding its operations per index point (see [`time_per_point`]).
pub const COST_ATTR: &str = "teg.cost";

/// A graph's problem and, per problem op, the TEG op it stands for.
pub struct GraphProblem {
    /// The problem.
    pub problem: Problem,
    /// The TEG op of each problem op.
    pub ops: Vec<OpId>,
}

/// A graph ready for the search core: its machine, its problem, the problem's strategies and cost tables.
pub struct Prepared {
    /// The machine of the graph's mesh.
    pub machine: Machine,
    /// The problem and the TEG op of each problem op.
    pub graph: GraphProblem,
    /// Every op's strategies.
    pub strategies: Strategies,
    /// The pairwise cost tables.
    pub tables: Tables,
}

/// Prepares `graph` (`None` without a `teg.mesh`): its mesh, its problem with `teg.shard` plans as pins (with
/// `replicate_unplanned`, an op without one is pinned to splitting nothing, and no op must split over the whole
/// mesh: the plans are priced as written), the strategies and the tables. Errors are placed at the op at fault.
pub fn prepare(ctx: &Context, graph: OpId, replicate_unplanned: bool) -> Option<Result<Prepared, Vec<Diagnostic>>> {
    let machine = match mesh_of(ctx, graph)? {
        Ok(m) => m,
        Err(d) => return Some(Err(vec![d])),
    };
    Some(prepare_on(ctx, graph, machine, replicate_unplanned))
}

fn prepare_on(
    ctx: &Context,
    graph: OpId,
    machine: Machine,
    replicate_unplanned: bool,
) -> Result<Prepared, Vec<Diagnostic>> {
    let mut gp = problem_of(ctx, graph, &machine, true)?;
    let fail = |e: ShardError, ops: &[OpId]| {
        let at = e.op.and_then(|k| ops.get(k).copied()).unwrap_or(graph);
        vec![Diagnostic::error(ctx.body.op(at).loc, e.to_string())]
    };
    if replicate_unplanned {
        let mut ops = gp.problem.ops().to_vec();
        for op in &mut ops {
            op.pinned.get_or_insert_with(|| Plan::replicated(op.index.len()));
            op.split_all = false;
        }
        let (tensors, aliases) = (gp.problem.tensors().to_vec(), gp.problem.aliases().to_vec());
        gp.problem = Problem::new(tensors, ops, aliases).map_err(|e| fail(e, &gp.ops))?;
    }
    let strategies = Strategies::of(&gp.problem, &machine).map_err(|e| fail(e, &gp.ops))?;
    let tables = Tables::build(&gp.problem, &strategies, &machine).map_err(|e| fail(e, &gp.ops))?;
    Ok(Prepared { machine, graph: gp, strategies, tables })
}

/// The machine `graph`'s `teg.mesh` attribute declares (`None` without one).
pub fn mesh_of(ctx: &Context, graph: OpId) -> Option<Result<Machine, Diagnostic>> {
    let attr = ctx.op_attr(graph, MESH_ATTR)?;
    Some(read_mesh(ctx, attr).map_err(|e| Diagnostic::error(ctx.body.op(graph).loc, format!("{MESH_ATTR}: {e}"))))
}

fn read_mesh(ctx: &Context, attr: AttrId) -> Result<Machine, String> {
    if !matches!(ctx.attr_data(attr), Attr::Dict(_)) {
        return Err("must be a dictionary {axes = [...], shape = [...], ...}".into());
    }
    let field = |key: &str| ctx.dict_get(attr, key).map(|a| ctx.attr_data(a));
    let list = |key: &str| -> Result<Option<Vec<&Attr>>, String> {
        match field(key) {
            None => Ok(None),
            Some(Attr::Array(items)) => Ok(Some(items.iter().map(|&i| ctx.attr_data(i)).collect())),
            Some(_) => Err(format!("'{key}' must be a list")),
        }
    };
    let axes: Vec<String> = list("axes")?
        .ok_or("needs 'axes', a list of axis names")?
        .iter()
        .map(|a| a.as_str().map(str::to_string).ok_or("'axes' must be a list of names"))
        .collect::<Result<_, _>>()?;
    let shape: Vec<usize> = list("shape")?
        .ok_or("needs 'shape', a list of axis sizes")?
        .iter()
        .map(|a| a.as_int().and_then(|v| usize::try_from(v).ok()).ok_or("'shape' must be a list of sizes"))
        .collect::<Result<_, _>>()?;
    if axes.len() != shape.len() {
        return Err(format!("{} axes but {} sizes", axes.len(), shape.len()));
    }
    if axes.len() > crate::shard::MAX_MESH_AXES {
        return Err(format!("{} axes, more than MAX_MESH_AXES ({})", axes.len(), crate::shard::MAX_MESH_AXES));
    }
    for (key, _) in ctx.dict_entries(attr) {
        let key = ctx.str(*key);
        if !MESH_FIELDS.contains(&key) {
            return Err(format!("unknown field '{key}' (fields: {})", MESH_FIELDS.join(", ")));
        }
    }
    let numbers = |key: &str| -> Result<Vec<f64>, String> {
        match list(key)? {
            None => Ok(vec![1.0; axes.len()]),
            Some(items) if items.len() == axes.len() => {
                items.iter().map(|a| number(a).ok_or(format!("'{key}' must be numbers"))).collect()
            }
            Some(items) => Err(format!("'{key}' has {} numbers for {} axes", items.len(), axes.len())),
        }
    };
    let memory = match field("memory") {
        None => u64::MAX,
        Some(a) => a.as_int().and_then(|v| u64::try_from(v).ok()).ok_or("'memory' must be a byte count")?,
    };
    let devices = shape.iter().try_fold(1usize, |n, &s| n.checked_mul(s));
    if devices.is_none_or(|n| n > MAX_MESH_DEVICES) {
        return Err(format!("more than MAX_MESH_DEVICES ({MAX_MESH_DEVICES}) devices"));
    }
    let named: Vec<(&str, usize)> = axes.iter().map(String::as_str).zip(shape).collect();
    let mut rates = Vec::new();
    for (key, class) in [("matrix", OpClass::Matrix), ("vector", OpClass::Vector)] {
        if let Some(a) = field(key) {
            let rate = number(a).filter(|r| (RATE_RANGE.0..=RATE_RANGE.1).contains(r));
            let (lo, hi) = RATE_RANGE;
            let message = format!("'{key}' must be a number of operations per time unit from {lo:e} to {hi:e}");
            rates.push((class, rate.ok_or(message)?));
        }
    }
    presets::alpa_rated(&named, &numbers("alpha")?, &numbers("beta")?, memory, &rates).map_err(|e| e.to_string())
}

/// The time one index point of `op` (of kind `kind`) takes on one device of `machine`: its operations per point
/// (`teg.cost`, or by default 2 for a contraction, a multiply-add, and 2 per kernel tap for a convolution, 1 for an elementwise op or a
/// reduction, 0 for views, generators, inputs and outputs) over the mesh's rate for its class (`matrix` for
/// contractions and convolutions, `vector` for the rest); 0 when the mesh gives no rate (compute is free, as in
/// Alpa's model). An error names a bad `teg.cost`.
pub fn time_per_point(ctx: &Context, op: OpId, kind: &OpKind, machine: &Machine) -> Result<f64, String> {
    // A convolution's point sums over one input channel: a multiply-add per tap of its kernel window.
    let taps = |v| as_tensor(ctx, ctx.body.value_type(v)).map_or(1, |t| t.shape().iter().skip(2).product::<u64>());
    let (class, default) = match kind {
        OpKind::Contraction(_) => (OpClass::Matrix, 2.0),
        OpKind::Conv2d(_) => (OpClass::Matrix, 2.0 * taps(ctx.body.operand(op, 1)) as f64),
        OpKind::Cell(_) | OpKind::Reduce(_) | OpKind::Block(_) => (OpClass::Vector, 1.0),
        _ => (OpClass::Vector, 0.0),
    };
    let per_point = match ctx.op_attr(op, COST_ATTR) {
        None => default,
        Some(a) => number(ctx.attr_data(a)).filter(|c| (0.0..=MAX_COST_PER_POINT).contains(c)).ok_or(format!(
            "{COST_ATTR} must be a number of operations per index point from 0 to MAX_COST_PER_POINT ({MAX_COST_PER_POINT:e})"
        ))?,
    };
    Ok(machine.device().throughput(class, ElemType::F32).map_or(0.0, |rate| per_point / rate))
}

fn number(a: &Attr) -> Option<f64> {
    match a {
        Attr::Float { bits, .. } => Some(f64::from_bits(*bits)),
        other => other.as_int().map(|v| v as f64),
    }
}

/// The problem of `graph` on `machine`: every op with index maps (sources, sinks, views, operators), in order.
/// Only sources, sinks, elementwise ops, contractions, convolutions, reductions and strided views may split (what
/// `teg-shard` can carry out); other ops, and ops whose inputs are read piecewise or through a map that is not
/// affine, run whole. With `pins`, each op's `teg.shard` plan is its only choice.
pub fn problem_of(ctx: &Context, graph: OpId, machine: &Machine, pins: bool) -> Result<GraphProblem, Vec<Diagnostic>> {
    let mut tensors: Vec<Tensor> = Vec::new();
    let mut ids: HashMap<ValueId, TensorId> = HashMap::new();
    let mut ops = Vec::new();
    let mut teg_ops = Vec::new();
    let mut diags = Vec::new();
    let mut sources: HashMap<String, TensorId> = HashMap::new();
    let mut aliases = Vec::new();
    for op in super::graph_ops(ctx, graph) {
        let Ok(kind) = decode(ctx, op) else { continue };
        let Some(maps) = index_maps_of(ctx, op) else { continue };
        let name = format!("{} at {}", ctx.op_name(op), ctx.loc_text(ctx.body.op(op).loc));
        let inputs: Vec<(ValueId, TensorId)> =
            ctx.body.operands(op).filter_map(|v| ids.get(&v).map(|&t| (v, t))).collect();
        let output = ctx.body.results(op).next().and_then(|v| {
            let t = as_tensor(ctx, ctx.body.value_type(v))?;
            let persistent = matches!(kind, OpKind::Io(Io::Source { .. }));
            tensors.push(Tensor {
                name: name.clone(),
                shape: t.shape(),
                elem_bytes: t.dtype.size() as u64,
                persistent,
            });
            let id = TensorId(tensors.len() as u32 - 1);
            ids.insert(v, id);
            Some(id)
        });
        match (&kind, output) {
            (OpKind::Io(Io::Source { name }), Some(t)) => {
                sources.insert(name.clone(), t);
            }
            (OpKind::Io(Io::Sink { name }), _) => {
                for &(_, t) in &inputs {
                    tensors[t.0 as usize].persistent = true;
                    // A sink named as a source writes the value back over it: it should keep its spec.
                    if let Some(&original) = sources.get(name) {
                        let same = tensors[t.0 as usize].shape == tensors[original.0 as usize].shape
                            && tensors[t.0 as usize].elem_bytes == tensors[original.0 as usize].elem_bytes;
                        if same {
                            aliases.push((t, original));
                        }
                    }
                }
            }
            _ => {}
        }
        // Piecewise views, coordinate-dependent generators and user blocks depend on their shapes: `teg-shard`
        // cannot split them yet, so the search does not either.
        let splittable = match &kind {
            OpKind::Cell(_) | OpKind::Contraction(_) | OpKind::Conv2d(_) | OpKind::Reduce(_) | OpKind::Io(_) => true,
            OpKind::View(v) => v.splits_by_box(),
            OpKind::Generate(g) => g.is_constant(),
            _ => false,
        };
        let whole = !splittable
            || maps.inputs.len() != inputs.len()
            || maps.inputs.iter().any(|(_, p)| p.len() != 1 || !p[0].affine);
        let mut problem_op = if whole {
            let read = inputs.iter().map(|&(_, t)| (t, constant(&tensors[t.0 as usize].shape))).collect();
            let write = output.map(|t| (t, constant(&tensors[t.0 as usize].shape)));
            Op { shardable: false, ..Op::new(&name, Vec::new(), read, write, Vec::new()) }
        } else {
            let read = inputs.iter().zip(&maps.inputs).map(|(&(_, t), (_, p))| (t, p[0].ipf.clone())).collect();
            let write = output.zip(maps.outputs.first()).map(|(t, o)| (t, o.1.clone()));
            // A mean, or a reduction with a default, cannot be split along what it reduces (`teg-shard` refuses):
            // listing no reduced dimension leaves those dimensions nothing to gain from a split.
            let fixed = matches!(&kind, OpKind::Reduce(r) if r.default.is_some() || r.monoid == Monoid::Mean);
            let reduced = if fixed { Vec::new() } else { maps.reductions.iter().map(|r| r.0).collect() };
            Op::new(&name, maps.index.clone(), read, write, reduced)
        };
        // Heavy ops split over the whole mesh when compute is free (no rates); with rates, the cost decides.
        let free = machine.device().throughputs().is_empty();
        problem_op.split_all = free && matches!(kind, OpKind::Contraction(_) | OpKind::Conv2d(_));
        match time_per_point(ctx, op, &kind, machine) {
            Ok(t) => problem_op.work_per_point = t,
            Err(m) => diags.push(Diagnostic::error(ctx.body.op(op).loc, m)),
        }
        if pins {
            match plan_of(ctx, op, &maps.index, machine) {
                Some(Ok(plan)) if whole && !plan.used().is_empty() => diags.push(Diagnostic::error(
                    ctx.body.op(op).loc,
                    format!("{SHARD_ATTR}: '{}' cannot be split yet, so its plan must split nothing", ctx.op_name(op)),
                )),
                Some(Ok(_)) if whole => problem_op.pinned = Some(Plan::replicated(0)),
                Some(Ok(plan)) => problem_op.pinned = Some(plan),
                Some(Err(d)) => diags.push(d),
                None => {}
            }
        }
        ops.push(problem_op);
        teg_ops.push(op);
    }
    if !diags.is_empty() {
        return Err(diags);
    }
    let problem = Problem::new(tensors, ops, aliases)
        .map_err(|e| vec![Diagnostic::error(ctx.body.op(graph).loc, e.to_string())])?;
    Ok(GraphProblem { problem, ops: teg_ops })
}

/// The IPF of an op that is not split (an index space of rank 0): it reads or writes the whole tensor.
fn constant(shape: &[u64]) -> Ipf {
    let map = ZAffineMap::new(0, vec![Vec::new(); shape.len()], vec![0; shape.len()]).expect("rows of no inputs");
    Ipf::new(map, shape.to_vec()).expect("one extent per row")
}
