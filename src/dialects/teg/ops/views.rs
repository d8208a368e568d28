//! View selectors: every result cell is one operand cell (or, for a constant pad, the pad value). The strided ones
//! (permute, reverse, slice, squeeze, select, unsqueeze, broadcasts) are a new layout over their operand's cells
//! ([`View::strided`]); concat, interleave, repeat and pad are assembled from strided copies (`eval/views.rs`).

use super::attrs::Attrs;
use super::maps::{numbered, Maps, Row};
use super::rules::{broadcast, dim_of, distinct_dims, same, select_index, with_extent};
use super::syntax::{attr, optional, value_op, with};
use super::{Entry, OpFamily, OpKind};
use crate::array::Array;
use crate::dialects::teg::eval::views::{assemble, pad_source, region, Placement};
use crate::dialects::teg::eval::{Args, EvalError, Strided};
use crate::dialects::teg::patterns::{PERMUTE_PATTERNS, SLICE_PATTERNS};
use crate::dialects::teg::tensor_type::TensorType;
use crate::interfaces::sharding::{IndexMaps, Piece};
use crate::ir::rewrite::RewritePattern;
use crate::ir::{Arity, AttrKind, OpInfo};

/// How `teg.pad` fills the new cells.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PadMode {
    /// With `value`.
    Constant,
    /// Mirrored at the edge, the edge cell not repeated (NumPy's `reflect`).
    Reflect,
    /// From the other end (toroidal).
    Wrap,
}

/// A view selector; its fields are the op's attributes.
#[derive(Clone, Debug, PartialEq)]
#[allow(missing_docs)]
pub enum View {
    /// The dimensions in a new order (the result's names).
    Permute { dims: Vec<String> },
    /// The named dimensions reversed.
    Reverse { dims: Vec<String> },
    /// `start, start + step, ... < stop` along `dim`.
    Slice { dim: String, start: i64, stop: i64, step: i64 },
    /// Drops an extent-1 dimension.
    Squeeze { dim: String },
    /// Picks index `index` along `dim` and drops the dimension (a negative index counts from the end).
    Select { dim: String, index: i64 },
    /// Inserts an extent-1 dimension `dim` at position `index`.
    Unsqueeze { dim: String, index: i64 },
    /// Stretches an extent-1 dimension to `extent`.
    Broadcast { dim: String, extent: i64 },
    /// Broadcasts to the result type by dimension name: adds the dimensions the operand lacks and stretches its
    /// extent-1 ones.
    BroadcastTo,
    /// Joins the operands along `dim`.
    Concat { dim: String },
    /// Alternates the operands' cells along `dim`.
    Interleave { dim: String },
    /// The operand `times` times along `dim`.
    Repeat { dim: String, times: i64 },
    /// `low` and `high` new cells along `dim`.
    Pad { dim: String, low: i64, high: i64, mode: PadMode, value: f64 },
}

impl From<View> for OpKind {
    fn from(v: View) -> OpKind {
        OpKind::View(v)
    }
}

/// A view of one operand.
const fn one(
    name: &'static str,
    summary: &'static str,
    attrs: &'static [crate::ir::AttrSpec],
    format: &'static str,
    read: fn(&Attrs) -> Result<OpKind, String>,
) -> Entry {
    with(value_op(name, summary, Arity::Exact(1), attrs, format), read)
}

/// A view of one operand with canonicalization `patterns`.
const fn canonicalized(
    name: &'static str,
    summary: &'static str,
    attrs: &'static [crate::ir::AttrSpec],
    format: &'static str,
    read: fn(&Attrs) -> Result<OpKind, String>,
    patterns: &'static [&'static dyn RewritePattern],
) -> Entry {
    let info = value_op(name, summary, Arity::Exact(1), attrs, format);
    with(OpInfo { canonicalization: patterns, ..info }, read)
}

/// The view ops.
pub const OPS: &[Entry] = &[
    canonicalized(
        "teg.permute",
        "reorders the dimensions (the result's dimension names, in order)",
        &[attr("dims", AttrKind::Array)],
        "$operands `to` $dims attr-dict `:` type($operands) (`->` type($results)^)?",
        |a| Ok(View::Permute { dims: a.strings("dims")? }.into()),
        PERMUTE_PATTERNS,
    ),
    one(
        "teg.reverse",
        "reverses the named dimensions",
        &[attr("dims", AttrKind::Array)],
        "$operands `along` $dims attr-dict `:` type($operands) (`->` type($results)^)?",
        |a| Ok(View::Reverse { dims: a.strings("dims")? }.into()),
    ),
    canonicalized(
        "teg.slice",
        "the coordinates start, start + step, ... below stop of one dimension",
        &[attr("dim", AttrKind::Any), attr("start", AttrKind::Int), attr("stop", AttrKind::Int), attr("step", AttrKind::Int)],
        "$operands `along` $dim `from` $start `to` $stop `step` $step attr-dict `:` type($operands) (`->` type($results)^)?",
        |a| Ok(View::Slice { dim: a.string("dim")?, start: a.int("start")?, stop: a.int("stop")?, step: a.int("step")? }.into()),
        SLICE_PATTERNS,
    ),
    one(
        "teg.squeeze",
        "removes a dimension of extent 1",
        &[attr("dim", AttrKind::Any)],
        "$operands `along` $dim attr-dict `:` type($operands) (`->` type($results)^)?",
        |a| Ok(View::Squeeze { dim: a.string("dim")? }.into()),
    ),
    one(
        "teg.select",
        "one index along a dimension, the dimension dropped (NumPy's x[:, i]; a negative index counts from the end)",
        &[attr("dim", AttrKind::Any), attr("index", AttrKind::Int)],
        "$operands `along` $dim `at` $index attr-dict `:` type($operands) (`->` type($results)^)?",
        |a| Ok(View::Select { dim: a.string("dim")?, index: a.int("index")? }.into()),
    ),
    one(
        "teg.unsqueeze",
        "inserts a dimension of extent 1 (named as in the result type)",
        &[attr("dim", AttrKind::Any), attr("index", AttrKind::Int)],
        "$operands `as` $dim `at` $index attr-dict `:` type($operands) (`->` type($results)^)?",
        |a| Ok(View::Unsqueeze { dim: a.string("dim")?, index: a.int("index")? }.into()),
    ),
    one(
        "teg.broadcast",
        "stretches an extent-1 dimension to `extent`, or (without `along`) broadcasts to the result type by name",
        &[optional("dim", AttrKind::Any), optional("extent", AttrKind::Int)],
        "$operands (`along` $dim^ `to` $extent)? attr-dict `:` type($operands) (`->` type($results)^)?",
        broadcast_op,
    ),
    with(
        value_op(
            "teg.concat",
            "joins tensors end to end along a dimension",
            Arity::AtLeast(1),
            &[attr("dim", AttrKind::Any)],
            "$operands `along` $dim attr-dict `:` type($operands) (`->` type($results)^)?",
        ),
        |a| Ok(View::Concat { dim: a.string("dim")? }.into()),
    ),
    with(
        value_op(
            "teg.interleave",
            "alternates the cells of k tensors along a dimension (cell i from input i mod k)",
            Arity::AtLeast(1),
            &[attr("dim", AttrKind::Any)],
            "$operands `along` $dim attr-dict `:` type($operands) (`->` type($results)^)?",
        ),
        |a| Ok(View::Interleave { dim: a.string("dim")? }.into()),
    ),
    one(
        "teg.repeat",
        "the tensor repeated end to end along a dimension",
        &[attr("dim", AttrKind::Any), attr("times", AttrKind::Int)],
        "$operands `along` $dim `times` $times attr-dict `:` type($operands) (`->` type($results)^)?",
        |a| Ok(View::Repeat { dim: a.string("dim")?, times: a.int("times")? }.into()),
    ),
    one(
        "teg.pad",
        "pads a dimension (mode constant, reflect or wrap)",
        &[
            attr("dim", AttrKind::Any),
            attr("low", AttrKind::Int),
            attr("high", AttrKind::Int),
            attr("mode", AttrKind::Any),
            attr("value", AttrKind::Float),
        ],
        "$operands `along` $dim `low` $low `high` $high $mode $value attr-dict `:` type($operands) (`->` type($results)^)?",
        pad,
    ),
];

/// `teg.broadcast`: along a dimension to an extent, or (neither given) to the result type.
fn broadcast_op(a: &Attrs) -> Result<OpKind, String> {
    Ok(match (a.has("dim"), a.has("extent")) {
        (false, true) => return Err("an extent needs the dimension it stretches: along \"dim\" to extent".into()),
        (false, false) => View::BroadcastTo,
        _ => View::Broadcast { dim: a.string("dim")?, extent: a.int("extent")? },
    }
    .into())
}

fn pad(a: &Attrs) -> Result<OpKind, String> {
    let mode = match a.string("mode")?.as_str() {
        "constant" => PadMode::Constant,
        "reflect" => PadMode::Reflect,
        "wrap" => PadMode::Wrap,
        m => return Err(format!("unknown pad mode '{m}' (constant, reflect, wrap)")),
    };
    let (dim, low, high, value) = (a.string("dim")?, a.int("low")?, a.int("high")?, a.float("value")?);
    Ok(View::Pad { dim, low, high, mode, value }.into())
}

impl OpFamily for View {
    fn result_type(&self, operands: &[&TensorType], declared: &TensorType) -> Result<TensorType, String> {
        let x = operands[0];
        Ok(match self {
            View::Permute { dims } => permute(x, dims)?,
            View::Reverse { dims } => {
                distinct_dims(x, dims)?;
                x.clone()
            }
            View::Slice { dim, start, stop, step } => {
                let (t, k) = dim_of(x, dim)?;
                with_extent(t, k, Some(slice_extent(*start, *stop, *step, t.dims[k].1 as i64, dim)?))?
            }
            View::Squeeze { dim } => {
                let (t, k) = dim_of(x, dim)?;
                if t.dims[k].1 != 1 {
                    return Err(format!("dimension {dim} has extent {}, not 1", t.dims[k].1));
                }
                without(t, k)
            }
            View::Select { dim, index } => {
                let (t, k) = dim_of(x, dim)?;
                select_index(*index, t.dims[k].1, dim)?;
                without(t, k)
            }
            View::Unsqueeze { dim, index } => {
                if x.position(dim).is_some() || *index < 0 || *index as usize > x.dims.len() {
                    return Err(format!("cannot insert dimension {dim} at {index} into {x}"));
                }
                let mut out = x.clone();
                out.dims.insert(*index as usize, (dim.clone(), 1));
                out
            }
            View::BroadcastTo => {
                if broadcast(&[x, declared]).ok().as_ref() != Some(&declared.dims) || x.dtype != declared.dtype {
                    return Err(format!("{x} does not broadcast to {declared}"));
                }
                declared.clone()
            }
            View::Broadcast { dim, extent } => {
                let (t, k) = dim_of(x, dim)?;
                if t.dims[k].1 != 1 || *extent < 0 {
                    return Err(format!("only an extent-1 dimension broadcasts, {dim} has {}", t.dims[k].1));
                }
                with_extent(t, k, Some(*extent as u64))?
            }
            View::Concat { dim } => concat(operands, dim)?,
            View::Interleave { dim } => {
                for o in operands {
                    same(x, o, "interleaved operands")?;
                }
                let (t, k) = dim_of(x, dim)?;
                with_extent(t, k, t.dims[k].1.checked_mul(operands.len() as u64))?
            }
            View::Repeat { dim, times } => {
                let (t, k) = dim_of(x, dim)?;
                if *times < 0 {
                    return Err(format!("repeats {times} times"));
                }
                with_extent(t, k, t.dims[k].1.checked_mul(*times as u64))?
            }
            View::Pad { dim, low, high, mode, .. } => pad_type(x, dim, *low, *high, *mode)?,
        })
    }

    fn infers(&self) -> bool {
        *self != View::BroadcastTo
    }

    /// Strided views read through their coordinate maps (a slice by its step, a reverse by -1, a select at its
    /// index); concat and constant pads piecewise; interleave and repeat over a lane or copy dimension; reflect and
    /// wrap borders as the whole dimension, marked not affine; the rest by name.
    fn index_maps(&self, operands: &[&TensorType], result: Option<&TensorType>) -> Option<IndexMaps> {
        let result = result?;
        let x = operands[0];
        let mut m = Maps::over(result.dims.clone());
        let mut out = m.ipf(m.by_name(result));
        match self {
            View::Reverse { dims } => {
                let rows = (x.dims.iter().zip(m.by_name(x)))
                    .map(|((name, n), row)| match (dims.contains(name), m.pos(name)) {
                        (true, Some(i)) => Row { terms: vec![(i, -1)], offset: *n as i64 - 1, extent: 1 },
                        _ => row,
                    })
                    .collect();
                m.read("x", rows);
            }
            View::Slice { dim, start, step, .. } => {
                let mut rows = m.by_name(x);
                rows[x.position(dim)?] = Row { terms: vec![(m.pos(dim)?, *step)], offset: *start, extent: 1 };
                m.read("x", rows);
            }
            View::Select { dim, index } => {
                let k = x.position(dim)?;
                let at = select_index(*index, x.dims[k].1, dim).ok()? as i64;
                let mut rows = m.by_name(x);
                rows[k] = Row::fixed(at, 1);
                m.read("x", rows);
            }
            View::Concat { dim } => concat_maps(&mut m, operands, dim)?,
            View::Interleave { dim } | View::Repeat { dim, .. } => {
                out = lanes(&mut m, operands, result, dim, matches!(self, View::Interleave { .. }))?
            }
            View::Pad { dim, low, mode, .. } => pad_maps(&mut m, x, result, dim, *low, *mode)?,
            // Permute, squeeze, unsqueeze and broadcasts: by name.
            _ => m.read("x", m.by_name(x)),
        }
        Some(m.done(vec![("result".into(), out)], Vec::new()))
    }

    fn elementwise(&self) -> bool {
        matches!(self, View::Squeeze { .. } | View::Unsqueeze { .. } | View::Permute { .. })
    }

    /// A strided view copied out, or the result assembled from strided copies of the operands (concat,
    /// interleave, repeat and pad place each operand, or each slab of it, at a strided region of the result; a
    /// constant pad fills its border).
    fn eval(&self, a: &Args) -> Result<Array, EvalError> {
        let dense = a.dense_all()?;
        let arrays: Vec<&Array> = dense.iter().map(|d| &**d).collect();
        let x = arrays[0];
        if let Some(layout) = self.strided(&Strided::dense(x.shape()), &a.names[0], a.out_names, a.shape) {
            return crate::dialects::teg::eval::copy_view(x, layout);
        }
        let (out, shape) = (Strided::dense(a.shape), a.shape);
        let mut copies: Vec<Placement> = Vec::new();
        let mut fill = None;
        match self {
            View::Concat { dim } => {
                let (k, mut at) = (a.dim(0, dim)?, 0);
                for (i, x) in arrays.iter().enumerate() {
                    let n = x.shape()[k];
                    copies.push((region(&out, k, at, n, 1), i, Strided::dense(x.shape())));
                    at += n;
                }
            }
            View::Interleave { dim } => {
                let (k, count) = (a.dim(0, dim)?, arrays.len() as u64);
                for (i, x) in arrays.iter().enumerate() {
                    copies.push((region(&out, k, i as u64, x.shape()[k], count), i, Strided::dense(x.shape())));
                }
            }
            View::Repeat { dim, times } => {
                let (k, n) = (a.dim(0, dim)?, x.shape()[a.dim(0, dim)?]);
                for r in 0..*times as u64 {
                    copies.push((region(&out, k, r * n, n, 1), 0, Strided::dense(x.shape())));
                }
            }
            View::Pad { dim, low, mode, value, .. } => {
                let (k, n) = (a.dim(0, dim)?, x.shape()[a.dim(0, dim)?] as i64);
                copies.push((region(&out, k, *low as u64, n as u64, 1), 0, Strided::dense(x.shape())));
                let border = (0..*low).chain(low + n..shape[k] as i64);
                match mode {
                    PadMode::Constant => {
                        fill = Some((*value, border.map(|j| region(&out, k, j as u64, 1, 1)).collect()))
                    }
                    _ => {
                        for j in border {
                            let from = region(&Strided::dense(x.shape()), k, pad_source(*mode, j - low, n), 1, 1);
                            copies.push((region(&out, k, j as u64, 1, 1), 0, from));
                        }
                    }
                }
            }
            other => return Err(EvalError { op: None, message: format!("{other:?} is not a strided view") }),
        }
        assemble(&arrays, shape, &copies, fill)
    }
}

impl View {
    /// Whether a box of the result is this same view of the box of the operand it reads (with `at_box`'s
    /// attributes): the strided views of one operand. Concat, interleave, repeat and pad read piecewise.
    pub fn splits_by_box(&self) -> bool {
        !matches!(self, View::Concat { .. } | View::Interleave { .. } | View::Repeat { .. } | View::Pad { .. })
    }

    /// This view's attributes for the result box starting at `out_start` (per result dimension, named `out`) read
    /// from the operand box starting at `in_start` (per operand dimension, named `names`) with `count` cells along
    /// the view's dimension: a slice starts within the box, a select picks its one cell, a broadcast stretches to
    /// the box's extent; the other views keep theirs.
    pub fn at_box(&self, names: &[String], out: &[String], in_start: &[i64], out_start: &[i64], count: u64) -> View {
        let pos = |list: &[String], d: &str| list.iter().position(|n| n == d);
        match self {
            View::Slice { dim, start, step, .. } => {
                let (Some(k), Some(j)) = (pos(names, dim), pos(out, dim)) else { return self.clone() };
                let first = start + out_start[j] * step - in_start[k];
                let stop = first + (count as i64 - 1) * step + step.signum();
                View::Slice { dim: dim.clone(), start: first, stop, step: *step }
            }
            View::Select { dim, .. } => View::Select { dim: dim.clone(), index: 0 },
            View::Broadcast { dim, .. } => View::Broadcast { dim: dim.clone(), extent: count as i64 },
            other => other.clone(),
        }
    }

    /// The layout of this view of `x` (laid out as `x`, dimension `names`), or `None` for a view that is not a
    /// strided access of one operand. `out` is the result's dimension names and `shape` its extents.
    pub fn strided(&self, x: &Strided, names: &[String], out: &[String], shape: &[u64]) -> Option<Strided> {
        let pos = |d: &str| names.iter().position(|n| n == d);
        let mut l = x.clone();
        match self {
            View::Permute { dims } => {
                let p: Vec<usize> = dims.iter().map(|d| pos(d)).collect::<Option<_>>()?;
                l.shape = p.iter().map(|&k| x.shape[k]).collect();
                l.strides = p.iter().map(|&k| x.strides[k]).collect();
            }
            View::Reverse { dims } => {
                for d in dims {
                    let k = pos(d)?;
                    l.offset = (l.offset as isize + (x.shape[k] as isize - 1).max(0) * x.strides[k]) as usize;
                    l.strides[k] = -x.strides[k];
                }
            }
            View::Slice { dim, start, step, .. } => {
                let k = pos(dim)?;
                if shape[k] > 0 {
                    l.offset = (l.offset as isize + *start as isize * x.strides[k]) as usize;
                }
                // With one cell or none the step is never taken (and may be as large as an i64).
                l.strides[k] = if shape[k] > 1 { x.strides[k] * *step as isize } else { 0 };
                l.shape[k] = shape[k];
            }
            View::Squeeze { dim } => {
                let k = pos(dim)?;
                l.shape.remove(k);
                l.strides.remove(k);
            }
            View::Select { dim, index } => {
                let k = pos(dim)?;
                let at = select_index(*index, x.shape[k], dim).ok()?;
                l.offset = (l.offset as isize + at as isize * x.strides[k]) as usize;
                l.shape.remove(k);
                l.strides.remove(k);
            }
            View::Unsqueeze { index, .. } => {
                l.shape.insert(*index as usize, 1);
                l.strides.insert(*index as usize, 0);
            }
            View::Broadcast { dim, extent } => {
                let k = pos(dim)?;
                (l.shape[k], l.strides[k]) = (*extent as u64, 0);
            }
            View::BroadcastTo => l = Strided::broadcast_to(out, names, x, shape),
            _ => return None,
        }
        Some(l)
    }
}

/// `t` without its dimension `k`.
fn without(t: &TensorType, k: usize) -> TensorType {
    let mut out = t.clone();
    out.dims.remove(k);
    out
}

fn permute(t: &TensorType, dims: &[String]) -> Result<TensorType, String> {
    distinct_dims(t, dims)?;
    if dims.len() != t.dims.len() {
        return Err(format!("{} names for the {} dimensions of {t}", dims.len(), t.dims.len()));
    }
    let out = dims.iter().map(|d| t.dims[t.position(d).unwrap()].clone()).collect();
    Ok(TensorType { dims: out, dtype: t.dtype })
}

fn concat(operands: &[&TensorType], dim: &str) -> Result<TensorType, String> {
    let (first, k) = dim_of(operands[0], dim)?;
    let mut total = Some(0u64);
    for (i, o) in operands.iter().enumerate() {
        let rest = |t: &TensorType| -> Vec<(String, u64)> {
            t.dims.iter().enumerate().map(|(j, d)| if j == k { (d.0.clone(), 0) } else { d.clone() }).collect()
        };
        if o.dtype != first.dtype || o.dims.len() != first.dims.len() || rest(o) != rest(first) {
            return Err(format!("operand {i} ({o}) does not match {first} outside dimension {dim}"));
        }
        total = total.and_then(|t| t.checked_add(o.dims[k].1));
    }
    with_extent(first, k, total)
}

fn pad_type(t: &TensorType, dim: &str, low: i64, high: i64, mode: PadMode) -> Result<TensorType, String> {
    let (t, k) = dim_of(t, dim)?;
    let n = t.dims[k].1 as i64;
    if low < 0 || high < 0 {
        return Err(format!("padding {low} and {high} must not be negative"));
    }
    // Reflect and wrap pads of any width bounce or cycle through the cells (NumPy's `np.pad`), but need one.
    if mode != PadMode::Constant && n == 0 && low + high > 0 {
        let mode = format!("{mode:?}").to_lowercase();
        return Err(format!("a {mode} pad of dimension {dim} needs a cell to copy, and its extent is 0"));
    }
    with_extent(t, k, (n as u64).checked_add(low as u64).and_then(|e| e.checked_add(high as u64)))
}

/// How many cells `start`, `start + step`, ... before `stop` picks from a dimension of extent `n`, as NumPy's
/// `x[start:stop:step]` with explicit bounds: a positive step needs `0 <= start <= stop <= n`, a negative one
/// `-1 <= stop <= start <= n - 1` (`stop = -1` runs down to index 0).
fn slice_extent(start: i64, stop: i64, step: i64, n: i64, dim: &str) -> Result<u64, String> {
    let fits = match step {
        0 => return Err("slice step must not be 0".into()),
        1.. => 0 <= start && start <= stop && stop <= n,
        _ => -1 <= stop && stop <= start && start < n,
    };
    if !fits {
        return Err(format!("slice {start} to {stop} step {step} does not fit dimension {dim} of extent {n}"));
    }
    Ok(start.abs_diff(stop).div_ceil(step.unsigned_abs()))
}

/// Concat's operands, each over its own part of the concatenated dimension.
fn concat_maps(m: &mut Maps, operands: &[&TensorType], dim: &str) -> Option<()> {
    let i = m.pos(dim)?;
    let mut at = 0i64;
    for (t, name) in operands.iter().zip(numbered(operands.len())) {
        let n = t.dims[t.position(dim)?].1 as i64;
        let mut rows = m.by_name(t);
        rows[t.position(dim)?] = Row { terms: vec![(i, 1)], offset: -at, extent: 1 };
        let piece = Piece { domain: m.part(i, at, at + n), ipf: m.ipf(rows), affine: true };
        m.inputs.push((name, vec![piece]));
        at += n;
    }
    Some(())
}

/// Interleave and repeat: the dimension splits into an outer one, each operand's own, and an inner lane
/// (interleave: which operand) or copy (repeat: which repetition) dimension. Gives the result's IPF.
fn lanes(
    m: &mut Maps,
    operands: &[&TensorType],
    result: &TensorType,
    dim: &str,
    interleave: bool,
) -> Option<crate::zspace::Ipf> {
    let i = m.pos(dim)?;
    let x = operands[0];
    let n = x.dims[x.position(dim)?].1;
    let k = result.dims[i].1.checked_div(n).unwrap_or(0);
    m.index[i].1 = n;
    let lane = m.index.len();
    m.index.push((format!("{dim}.{}", if interleave { "lane" } else { "copy" }), k));
    let mut rows = m.by_name(result);
    rows[i] = match interleave {
        true => Row { terms: vec![(i, k as i64), (lane, 1)], offset: 0, extent: 1 },
        false => Row { terms: vec![(i, 1), (lane, n as i64)], offset: 0, extent: 1 },
    };
    let out = m.ipf(rows);
    let names: Vec<String> = if interleave { numbered(operands.len()) } else { vec!["x".into()] };
    for (j, (t, name)) in operands.iter().zip(names).enumerate() {
        let domain = if interleave { m.part(lane, j as i64, j as i64 + 1) } else { m.whole() };
        let piece = Piece { domain, ipf: m.ipf(m.by_name(t)), affine: true };
        m.inputs.push((name, vec![piece]));
    }
    Some(out)
}

/// A pad reads its operand shifted by `low` in the middle; a reflect or wrap border copies cells from anywhere in
/// the dimension (its box is the whole dimension, marked not affine).
fn pad_maps(m: &mut Maps, x: &TensorType, result: &TensorType, dim: &str, low: i64, mode: PadMode) -> Option<()> {
    let i = m.pos(dim)?;
    let (k, n) = (x.position(dim)?, x.dims[x.position(dim)?].1 as i64);
    let mut rows = m.by_name(x);
    rows[k] = Row { terms: vec![(i, 1)], offset: -low, extent: 1 };
    let mut pieces = vec![Piece { domain: m.part(i, low, low + n), ipf: m.ipf(rows), affine: true }];
    if mode != PadMode::Constant {
        let mut rows = m.by_name(x);
        rows[k] = Row::fixed(0, n as u64);
        let total = result.dims[i].1 as i64;
        for domain in [m.part(i, 0, low), m.part(i, low + n, total)] {
            pieces.push(Piece { domain, ipf: m.ipf(rows.clone()), affine: false });
        }
    }
    m.inputs.push(("x".into(), pieces));
    Some(())
}
