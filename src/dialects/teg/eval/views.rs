//! View selectors: every output cell is one input cell (or, for constant padding, the pad value), so each view is
//! a gather from the operands' cells laid end to end.

use super::{fail, EvalError, Operands};
use crate::array::{strides, Array, Data};
use crate::dialects::teg::infer::select_index;
use crate::dialects::teg::kind::{OpKind, PadMode};

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
    let in_shape = x.shape().to_vec();
    let source: SourceFn = match kind {
        OpKind::Permute { dims } => {
            let p: Vec<usize> = dims.iter().map(|d| ops.dim(0, d)).collect::<Result<_, _>>()?;
            Box::new(move |c: &[u64]| {
                let mut ic = vec![0; c.len()];
                for (j, &k) in p.iter().enumerate() {
                    ic[k] = c[j];
                }
                From::Cell(0, ic)
            })
        }
        OpKind::Reverse { dims } => {
            let ks: Vec<usize> = dims.iter().map(|d| ops.dim(0, d)).collect::<Result<_, _>>()?;
            Box::new(move |c: &[u64]| {
                let mut ic = c.to_vec();
                ks.iter().for_each(|&k| ic[k] = in_shape[k] - 1 - c[k]);
                From::Cell(0, ic)
            })
        }
        OpKind::Slice { dim, start, step, .. } => {
            // Verified: every picked index lies in the dimension, also for a negative step.
            let (k, start, step) = (ops.dim(0, dim)?, *start, *step);
            Box::new(move |c: &[u64]| {
                let mut ic = c.to_vec();
                ic[k] = (start + c[k] as i64 * step) as u64;
                From::Cell(0, ic)
            })
        }
        OpKind::Squeeze { dim } => {
            let k = ops.dim(0, dim)?;
            Box::new(move |c: &[u64]| {
                let mut ic = c.to_vec();
                ic.insert(k, 0);
                From::Cell(0, ic)
            })
        }
        OpKind::Select { dim, index } => {
            let k = ops.dim(0, dim)?;
            let n = ops.arrays[0].shape()[k];
            let at = select_index(*index, n, dim).or_else(fail)?;
            Box::new(move |c: &[u64]| {
                let mut ic = c.to_vec();
                ic.insert(k, at);
                From::Cell(0, ic)
            })
        }
        OpKind::Unsqueeze { index, .. } => {
            let k = *index as usize;
            Box::new(move |c: &[u64]| {
                let mut ic = c.to_vec();
                ic.remove(k);
                From::Cell(0, ic)
            })
        }
        OpKind::BroadcastTo => {
            // Each input dimension at its place in the result (verified: in order), read at 0 if it stretches.
            let at: Vec<(usize, bool)> = (0..in_shape.len())
                .map(|k| (names.iter().position(|n| *n == ops.names[0][k]).unwrap_or(0), in_shape[k] == 1))
                .collect();
            Box::new(move |c: &[u64]| From::Cell(0, at.iter().map(|&(j, one)| if one { 0 } else { c[j] }).collect()))
        }
        OpKind::Broadcast { dim, .. } => {
            let k = ops.dim(0, dim)?;
            Box::new(move |c: &[u64]| {
                let mut ic = c.to_vec();
                ic[k] = 0;
                From::Cell(0, ic)
            })
        }
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
