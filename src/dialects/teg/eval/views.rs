//! View selectors: every output cell is one input cell (or, for constant padding, the pad value). The strided ones
//! (permute, reverse, slice, squeeze, select, unsqueeze, broadcasts) make a new layout over their operand's cells
//! and copy nothing ([`strided`]); the others (concat, interleave, repeat, pad) gather from the operands' cells.

use super::broadcast::{for_each_offset, Read};
use super::value::{Strided, Value};
use super::{fail, EvalError, Operands};
use crate::array::alloc::Zeroable;
use crate::array::{Array, Data};
use crate::dialects::teg::infer::select_index;
use crate::dialects::teg::kind::{OpKind, PadMode};

/// The layout of a strided view of `x` (laid out as `x`, dimension `names`), or `None` for a view that is not a
/// strided access of one operand. `out` is the result's dimension names and `shape` its extents.
pub fn strided(kind: &OpKind, x: &Strided, names: &[String], out: &[String], shape: &[u64]) -> Option<Strided> {
    let pos = |d: &str| names.iter().position(|n| n == d);
    let mut l = x.clone();
    match kind {
        OpKind::Permute { dims } => {
            let p: Vec<usize> = dims.iter().map(|d| pos(d)).collect::<Option<_>>()?;
            l.shape = p.iter().map(|&k| x.shape[k]).collect();
            l.strides = p.iter().map(|&k| x.strides[k]).collect();
        }
        OpKind::Reverse { dims } => {
            for d in dims {
                let k = pos(d)?;
                l.offset = (l.offset as isize + (x.shape[k] as isize - 1).max(0) * x.strides[k]) as usize;
                l.strides[k] = -x.strides[k];
            }
        }
        OpKind::Slice { dim, start, step, .. } => {
            let k = pos(dim)?;
            if shape[k] > 0 {
                l.offset = (l.offset as isize + *start as isize * x.strides[k]) as usize;
            }
            l.strides[k] = x.strides[k] * *step as isize;
            l.shape[k] = shape[k];
        }
        OpKind::Squeeze { dim } => {
            let k = pos(dim)?;
            l.shape.remove(k);
            l.strides.remove(k);
        }
        OpKind::Select { dim, index } => {
            let k = pos(dim)?;
            let at = select_index(*index, x.shape[k], dim).ok()?;
            l.offset = (l.offset as isize + at as isize * x.strides[k]) as usize;
            l.shape.remove(k);
            l.strides.remove(k);
        }
        OpKind::Unsqueeze { index, .. } => {
            l.shape.insert(*index as usize, 1);
            l.strides.insert(*index as usize, 0);
        }
        OpKind::Broadcast { dim, extent } => {
            let k = pos(dim)?;
            (l.shape[k], l.strides[k]) = (*extent as u64, 0);
        }
        OpKind::BroadcastTo => {
            let read = super::broadcast::Read::of(out, names, x);
            l = Strided { shape: shape.to_vec(), offset: read.offset, strides: read.strides };
        }
        _ => return None,
    }
    Some(l)
}

/// Evaluates a view selector whose result has `shape` (dimension `names`): a strided view copied out, or the
/// result assembled from strided copies of its operands (concat, interleave, repeat and pad place each operand,
/// or each slab of it, at a strided region of the result; a constant pad fills its border).
pub fn apply(kind: &OpKind, ops: &Operands, shape: &[u64], names: &[String]) -> Result<Array, EvalError> {
    let x = ops.array(0);
    if let Some(layout) = strided(kind, &Strided::dense(x.shape()), &ops.names[0], names, shape) {
        return Ok(Value::borrowed(x).view(layout).dense().into_owned());
    }
    let out = Strided::dense(shape);
    let mut copies = Vec::new();
    let mut fill = None;
    match kind {
        OpKind::Concat { dim } => {
            let k = ops.dim(0, dim)?;
            let mut at = 0;
            for (i, a) in ops.arrays.iter().enumerate() {
                let n = a.shape()[k];
                copies.push((region(&out, k, at, n, 1), i, Strided::dense(a.shape())));
                at += n;
            }
        }
        OpKind::Interleave { dim } => {
            let (k, count) = (ops.dim(0, dim)?, ops.arrays.len() as u64);
            for (i, a) in ops.arrays.iter().enumerate() {
                copies.push((region(&out, k, i as u64, a.shape()[k], count), i, Strided::dense(a.shape())));
            }
        }
        OpKind::Repeat { dim, times } => {
            let (k, n) = (ops.dim(0, dim)?, x.shape()[ops.dim(0, dim)?]);
            for r in 0..*times as u64 {
                copies.push((region(&out, k, r * n, n, 1), 0, Strided::dense(x.shape())));
            }
        }
        OpKind::Pad { dim, low, mode, value, .. } => {
            let (k, n) = (ops.dim(0, dim)?, x.shape()[ops.dim(0, dim)?] as i64);
            copies.push((region(&out, k, *low as u64, n as u64, 1), 0, Strided::dense(x.shape())));
            let border = (0..*low).chain(low + n..shape[k] as i64);
            match mode {
                PadMode::Constant => fill = Some((*value, border.map(|j| region(&out, k, j as u64, 1, 1)).collect())),
                _ => {
                    for j in border {
                        let from = region(&Strided::dense(x.shape()), k, pad_source(*mode, j - low, n), 1, 1);
                        copies.push((region(&out, k, j as u64, 1, 1), 0, from));
                    }
                }
            }
        }
        other => return fail(format!("{other:?} is not a view")),
    }
    assemble(ops.arrays, shape, &copies, fill)
}

/// The cells `at, at + step, ...` (`n` of them) of dimension `k` of a layout.
fn region(l: &Strided, k: usize, at: u64, n: u64, step: u64) -> Strided {
    let mut r = l.clone();
    r.offset = (l.offset as isize + at as isize * l.strides[k]) as usize;
    r.shape[k] = n;
    r.strides[k] = l.strides[k] * step as isize;
    r
}

/// The input index a reflect or wrap pad copies to position `at` (relative to the input's first cell) of a
/// dimension of extent `n` (verified non-empty): reflect bounces with a period of 2(n − 1), the edge cell not
/// repeated (one cell: itself), as `np.pad`; wrap cycles.
fn pad_source(mode: PadMode, at: i64, n: i64) -> u64 {
    (match mode {
        _ if (0..n).contains(&at) => at,
        PadMode::Reflect if n == 1 => 0,
        PadMode::Reflect => {
            let (period, m) = (2 * (n - 1), at.rem_euclid(2 * (n - 1)));
            if m < n {
                m
            } else {
                period - m
            }
        }
        _ => at.rem_euclid(n),
    }) as u64
}

/// The result: each `(region, operand, layout)` copies the operand's cells (laid out as `layout`) to the
/// result's cells in `region`; `fill` sets the regions it lists to one value.
fn assemble(
    arrays: &[&Array],
    shape: &[u64],
    copies: &[(Strided, usize, Strided)],
    fill: Option<(f64, Vec<Strided>)>,
) -> Result<Array, EvalError> {
    let total = shape.iter().product::<u64>() as usize;
    let dtype = arrays[0].dtype();
    let value = Data::from_f64(dtype, std::iter::once(fill.as_ref().map_or(0.0, |f| f.0)));
    let regions = fill.map_or(Vec::new(), |f| f.1);
    macro_rules! typed {
        ($($variant:ident),*) => {
            match (arrays[0].data(), &value) {
                $((Data::$variant(_), Data::$variant(v)) => {
                    let cells: Vec<&[_]> = arrays
                        .iter()
                        .map(|a| match a.data() {
                            Data::$variant(c) => Ok(c.as_slice()),
                            _ => fail("operands of different element types"),
                        })
                        .collect::<Result<_, _>>()?;
                    Data::$variant(place(total, copies, &cells, &regions, v[0])?)
                })*
                _ => return fail("operands of different element types"),
            }
        };
    }
    let data = typed!(F32, F64, BF16, F16, I8, I32, I64, I1);
    Ok(Array::new(shape.to_vec(), data).expect("shape and count agree"))
}

/// A zeroed buffer of `total` cells with each copy and fill applied.
fn place<T: Zeroable>(
    total: usize,
    copies: &[(Strided, usize, Strided)],
    cells: &[&[T]],
    fills: &[Strided],
    value: T,
) -> Result<Vec<T>, EvalError> {
    let mut out = super::cells::<T>(total)?;
    for (to, i, from) in copies {
        let (dst, src) = (Read::of_layout(to), Read::of_layout(from));
        for_each_offset(&to.shape, [&dst, &src], |[d, s]| out[d] = cells[*i][s]);
    }
    for to in fills {
        for_each_offset(&to.shape, [&Read::of_layout(to)], |[d]| out[d] = value);
    }
    Ok(out)
}
