//! View selectors: every output cell is one input cell (or, for constant padding, the pad value). The strided ones
//! (permute, reverse, slice, squeeze, select, unsqueeze, broadcasts) make a new layout over their operand's cells
//! and copy nothing ([`strided`]); the others (concat, interleave, repeat, pad) gather from the operands' cells.

use super::value::{Strided, Value};
use super::{fail, EvalError, Operands};
use crate::array::{strides, Array, Data};
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

/// Where one output cell comes from: operand and input coordinate, or the pad value.
enum From {
    Cell(usize, Vec<u64>),
    Pad,
}

/// For an output coordinate, where its value comes from.
type SourceFn = Box<dyn Fn(&[u64]) -> From>;

/// Evaluates a view selector whose result has `shape` (dimension `names`).
pub fn apply(kind: &OpKind, ops: &Operands, shape: &[u64], names: &[String]) -> Result<Array, EvalError> {
    let x = ops.array(0);
    if let Some(layout) = strided(kind, &Strided::dense(x.shape()), &ops.names[0], names, shape) {
        return Ok(Value::borrowed(x).view(layout).dense().into_owned());
    }
    let in_shape = x.shape().to_vec();
    let source: SourceFn = match kind {
        OpKind::Concat { dim } => {
            let k = ops.dim(0, dim)?;
            let ends: Vec<u64> = ops
                .arrays
                .iter()
                .scan(0, |acc, a| {
                    *acc += a.shape()[k];
                    Some(*acc)
                })
                .collect();
            Box::new(move |c: &[u64]| {
                let i = ends.iter().position(|&e| c[k] < e).expect("inside the result");
                let mut ic = c.to_vec();
                ic[k] -= if i == 0 { 0 } else { ends[i - 1] };
                From::Cell(i, ic)
            })
        }
        OpKind::Interleave { dim } => {
            let (k, count) = (ops.dim(0, dim)?, ops.arrays.len() as u64);
            Box::new(move |c: &[u64]| {
                let mut ic = c.to_vec();
                ic[k] = c[k] / count;
                From::Cell((c[k] % count) as usize, ic)
            })
        }
        OpKind::Repeat { dim, .. } => {
            let k = ops.dim(0, dim)?;
            Box::new(move |c: &[u64]| {
                let mut ic = c.to_vec();
                ic[k] = c[k] % in_shape[k];
                From::Cell(0, ic)
            })
        }
        OpKind::Pad { dim, low, mode, .. } => {
            let (k, low, mode) = (ops.dim(0, dim)?, *low, *mode);
            Box::new(move |c: &[u64]| {
                let n = in_shape[k] as i64;
                let at = c[k] as i64 - low;
                let inside = match mode {
                    _ if (0..n).contains(&at) => at,
                    PadMode::Constant => return From::Pad,
                    // Mirrored at each edge, the edge cell not repeated: a period of 2(n - 1) (one cell: itself).
                    PadMode::Reflect if n == 1 => 0,
                    PadMode::Reflect => {
                        let (period, m) = (2 * (n - 1), at.rem_euclid(2 * (n - 1)));
                        if m < n {
                            m
                        } else {
                            period - m
                        }
                    }
                    PadMode::Wrap => at.rem_euclid(n),
                };
                let mut ic = c.to_vec();
                ic[k] = inside as u64;
                From::Cell(0, ic)
            })
        }
        other => return fail(format!("{other:?} is not a view")),
    };
    gather(ops, shape, kind, &*source)
}

/// Builds the result by visiting its cells in row-major order.
fn gather(ops: &Operands, shape: &[u64], kind: &OpKind, source: &dyn Fn(&[u64]) -> From) -> Result<Array, EvalError> {
    let offsets: Vec<usize> = ops
        .arrays
        .iter()
        .scan(0, |acc, a| {
            let o = *acc;
            *acc += a.len();
            Some(o)
        })
        .collect();
    let all_strides: Vec<Vec<usize>> = ops.arrays.iter().map(|a| strides(a.shape())).collect();
    let mut pool: Data = ops.arrays[0].data().clone();
    for a in &ops.arrays[1..] {
        pool = pool.concat(a.data());
    }
    let pad_at = pool.len();
    if let OpKind::Pad { value, .. } = kind {
        pool = pool.concat(&Data::from_f64(pool.dtype(), std::iter::once(*value)));
    }
    let total = shape.iter().product::<u64>() as usize;
    let out_strides = strides(shape);
    let mut picks = Vec::with_capacity(total);
    let mut coord = vec![0u64; shape.len()];
    for i in 0..total {
        for (k, c) in coord.iter_mut().enumerate() {
            *c = ((i / out_strides[k]) as u64) % shape[k];
        }
        picks.push(match source(&coord) {
            From::Cell(o, ic) => {
                offsets[o] + ic.iter().zip(&all_strides[o]).map(|(&c, &s)| c as usize * s).sum::<usize>()
            }
            From::Pad => pad_at,
        });
    }
    Ok(Array::new(shape.to_vec(), pool.gather(&picks)).expect("shape and count agree"))
}
