//! Plans as users write them: the `teg.shard` attribute on an op, and `teg-shard`'s `plan` option, both read into
//! a [`Placement`] (the mesh axes each index dimension is split over, and optionally the explicit sizes of its
//! parts) and written back.
//!
//! `teg.shard = {batch = "x", n = ["x", "y"], m = {axes = "y", sizes = [300, 724]}}`: a dimension named with one
//! axis, a list of axes, or a dictionary of `axes` and the `sizes` of its parts (one per device along those axes,
//! in mesh order, summing to the extent: explicit uneven ranges). Dimensions left out are not split. Without
//! `sizes`, parts are as even as can be, the first ones one larger (3 over 2 gives 2 + 1).
//!
//! The `plan` option text is `batch:x,n:x+y`: dimension, `:`, axes joined by `+`.

use crate::ir::{Attr, AttrId, Context, Diagnostic, OpId};
use crate::machine::Machine;
use crate::shard::{AxisSet, Plan};

/// The op attribute holding a plan.
pub const SHARD_ATTR: &str = "teg.shard";

/// One index dimension's split as written: its name, the mesh axes, and the explicit part sizes if any.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DimSplit {
    /// The index dimension.
    pub dim: String,
    /// The mesh axes it is split over, in the order written.
    pub axes: Vec<String>,
    /// The extent of each part, when given.
    pub sizes: Option<Vec<u64>>,
}

/// A plan with its explicit part sizes: per index dimension, `None` for even parts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placement {
    /// The axes each index dimension is split over.
    pub plan: Plan,
    /// Per index dimension, the extents of its parts when written explicitly.
    pub sizes: Vec<Option<Vec<u64>>>,
}

/// The placement of `op`'s `teg.shard` attribute over index dimensions `index` (`None` without one).
pub fn placement_of(
    ctx: &Context,
    op: OpId,
    index: &[(String, u64)],
    machine: &Machine,
) -> Option<Result<Placement, Diagnostic>> {
    let attr = ctx.op_attr(op, SHARD_ATTR)?;
    let err = |m: String| Diagnostic::error(ctx.body.op(op).loc, format!("{SHARD_ATTR}: {m}"));
    Some(read_attr(ctx, attr).and_then(|dims| placement(&dims, index, machine, false)).map_err(err))
}

/// The plan of `op`'s `teg.shard` attribute (`None` without one); explicit sizes are checked and left out.
pub fn plan_of(
    ctx: &Context,
    op: OpId,
    index: &[(String, u64)],
    machine: &Machine,
) -> Option<Result<Plan, Diagnostic>> {
    placement_of(ctx, op, index, machine).map(|r| r.map(|p| p.plan))
}

/// The placement `dims` give an op with index dimensions `index`. A dimension the op does not have is an error,
/// or skipped when `skip_missing` (a plan for many ops, such as the `plan` option).
pub fn placement(
    dims: &[DimSplit],
    index: &[(String, u64)],
    machine: &Machine,
    skip_missing: bool,
) -> Result<Placement, String> {
    let mut plan = Plan::replicated(index.len());
    let mut sizes = vec![None; index.len()];
    for split in dims {
        let name = split.dim.as_str();
        let Some(d) = index.iter().position(|i| i.0 == name) else {
            if skip_missing {
                continue;
            }
            let known: Vec<&str> = index.iter().map(|i| i.0.as_str()).collect();
            return Err(format!("the op has no index dimension '{name}' (it has: {})", known.join(", ")));
        };
        for axis in &split.axes {
            let a = machine.mesh().axis_index(axis).map_err(|_| format!("the mesh has no axis '{axis}'"))?;
            if plan.0[d].has(a) {
                return Err(format!("axis '{axis}' is listed twice for '{name}'"));
            }
            if plan.used().has(a) {
                return Err(format!("axis '{axis}' splits two index dimensions"));
            }
            plan.0[d] = plan.0[d].union(AxisSet::one(a));
        }
        let parts = plan.0[d].parts(machine.mesh());
        let extent = index[d].1;
        if parts > extent {
            return Err(format!("'{name}' of extent {extent} split into {parts} parts, more than its extent"));
        }
        if let Some(s) = &split.sizes {
            check_sizes(name, s, parts, extent)?;
            sizes[d] = Some(s.clone());
        }
    }
    Ok(Placement { plan, sizes })
}

fn check_sizes(name: &str, sizes: &[u64], parts: u64, extent: u64) -> Result<(), String> {
    if sizes.len() as u64 != parts {
        return Err(format!("'{name}' is split into {parts} parts but {} sizes are given", sizes.len()));
    }
    let sum = sizes.iter().try_fold(0u64, |n, &s| n.checked_add(s));
    if sum != Some(extent) {
        return Err(format!("the sizes of '{name}' do not sum to its extent {extent}"));
    }
    Ok(())
}

fn read_attr(ctx: &Context, attr: AttrId) -> Result<Vec<DimSplit>, String> {
    if !matches!(ctx.attr_data(attr), Attr::Dict(_)) {
        return Err("must be a dictionary {dimension = \"axis\", ...}".into());
    }
    let mut out = Vec::new();
    for (key, value) in ctx.dict_entries(attr) {
        let dim = ctx.str(*key).to_string();
        let bad = || {
            format!(
                "'{dim}' must name a mesh axis, list mesh axes, or be {{axes = ..., sizes = [...]}} with sizes \
                 non-negative integers"
            )
        };
        let (axes, sizes) = match ctx.attr_data(*value) {
            Attr::Dict(_) => read_dict(ctx, *value).ok_or_else(bad)?,
            _ => (axis_names(ctx, *value).ok_or_else(bad)?, None),
        };
        out.push(DimSplit { dim, axes, sizes });
    }
    Ok(out)
}

/// `{axes = "x", sizes = [3, 5]}`: both fields, nothing else.
fn read_dict(ctx: &Context, attr: AttrId) -> Option<(Vec<String>, Option<Vec<u64>>)> {
    let (mut axes, mut sizes) = (None, None);
    for (key, value) in ctx.dict_entries(attr) {
        match ctx.str(*key) {
            "axes" => axes = Some(axis_names(ctx, *value)?),
            "sizes" => sizes = Some(read_sizes(ctx, *value)?),
            _ => return None,
        }
    }
    Some((axes?, sizes))
}

/// `[3, 5]`: non-negative integers (not booleans).
fn read_sizes(ctx: &Context, attr: AttrId) -> Option<Vec<u64>> {
    let Attr::Array(items) = ctx.attr_data(attr) else { return None };
    let size = |&i: &AttrId| match ctx.attr_data(i) {
        Attr::Int { value, ty } if ctx.type_kind(*ty).int_width() != Some(1) => u64::try_from(*value).ok(),
        _ => None,
    };
    items.iter().map(size).collect()
}

/// `"x"` or `["x", "y"]`.
fn axis_names(ctx: &Context, attr: AttrId) -> Option<Vec<String>> {
    match ctx.attr_data(attr) {
        Attr::String(s) => Some(vec![s.to_string()]),
        Attr::Array(items) => items.iter().map(|&i| ctx.attr_data(i).as_str().map(str::to_string)).collect(),
        _ => None,
    }
}

/// Reads the `plan` option: `batch:x,n:x+y` (empty text: no plan).
pub fn parse_plan_option(text: &str) -> Result<Vec<DimSplit>, String> {
    let mut out: Vec<DimSplit> = Vec::new();
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let bad = || format!("'{item}' is not dimension:axis or dimension:axis+axis");
        let (dim, axes) = item.split_once(':').ok_or_else(bad)?;
        let axes: Vec<String> = axes.split('+').map(|a| a.trim().to_string()).collect();
        if dim.trim().is_empty() || axes.iter().any(String::is_empty) {
            return Err(bad());
        }
        if out.iter().any(|s| s.dim == dim.trim()) {
            return Err(format!("dimension '{}' is given twice", dim.trim()));
        }
        let mut seen: Vec<&String> = out.iter().flat_map(|s| &s.axes).collect();
        for axis in &axes {
            if seen.contains(&axis) {
                return Err(format!("axis '{axis}' is given twice (an axis splits one dimension)"));
            }
            seen.push(axis);
        }
        out.push(DimSplit { dim: dim.trim().to_string(), axes, sizes: None });
    }
    Ok(out)
}

/// Writes `placement` on `op` as its `teg.shard` attribute (removed when it splits nothing).
pub fn set_placement(ctx: &mut Context, op: OpId, placement: &Placement, index: &[(String, u64)], machine: &Machine) {
    let mut entries = Vec::new();
    for ((set, sizes), (name, _)) in placement.plan.0.iter().zip(&placement.sizes).zip(index) {
        let axes: Vec<AttrId> = set.axes().map(|a| ctx.string_attr(&machine.mesh().axes()[a].name)).collect();
        let axes = match axes.as_slice() {
            [] => continue,
            [one] => *one,
            many => ctx.attr(Attr::Array(many.into())),
        };
        let value = match sizes {
            None => axes,
            Some(sizes) => {
                let i64t = ctx.int_type(64);
                let items: Vec<AttrId> = sizes.iter().map(|&s| ctx.int_attr(s as i128, i64t)).collect();
                let sizes = ctx.attr(Attr::Array(items.into()));
                let fields = vec![(ctx.sym("axes"), axes), (ctx.sym("sizes"), sizes)];
                ctx.dict_attr(fields)
            }
        };
        entries.push((ctx.sym(name), value));
    }
    if entries.is_empty() {
        ctx.remove_op_attr(op, SHARD_ATTR);
    } else {
        let dict = ctx.dict_attr(entries);
        ctx.set_op_attr(op, SHARD_ATTR, dict);
    }
}

/// Writes `plan` (even parts) on `op`, unless its `teg.shard` already says that plan (a pin keeps its sizes).
pub fn set_plan(ctx: &mut Context, op: OpId, plan: &Plan, index: &[(String, u64)], machine: &Machine) {
    if plan_of(ctx, op, index, machine).is_some_and(|p| p.as_ref() == Ok(plan)) {
        return;
    }
    let placement = Placement { plan: plan.clone(), sizes: vec![None; index.len()] };
    set_placement(ctx, op, &placement, index, machine);
}
