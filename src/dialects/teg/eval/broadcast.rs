//! Reading operands through a broadcast without materializing it: each operand is read at a result coordinate
//! through strides, 0 along a dimension it lacks or has with extent 1 (the type rule is `infer::broadcast`).
//! Float kernels run a tight loop along the innermost dimension, on all of rayon's threads for large results.

use super::simd::vectorized;
use super::EvalError;
use crate::array::alloc::Zeroable;
use rayon::prelude::*;

/// Cells per task when a kernel runs on several threads: big enough to amortize a task, small enough that two
/// cores share a 16M-cell op evenly.
pub const CHUNK: usize = 1 << 16;

/// The strides with which an operand (dimension `names`, extents `shape`, row-major) is read at each coordinate
/// of a result with dimensions `out_names`: its own stride for a dimension it has with extent above 1, else 0.
pub fn strides_in(out_names: &[String], names: &[String], shape: &[u64]) -> Vec<usize> {
    let own = crate::array::strides(shape);
    out_names
        .iter()
        .map(|n| match names.iter().position(|m| m == n) {
            Some(k) if shape[k] > 1 => own[k],
            _ => 0,
        })
        .collect()
}

/// True if `strides` read a tensor of `shape` in plain row-major order (no broadcast).
fn is_dense(shape: &[u64], strides: &[usize]) -> bool {
    crate::array::strides(shape).iter().zip(shape).zip(strides).all(|((&d, &n), &s)| n <= 1 || d == s)
}

/// Visits the cells of a result of `shape` in row-major order, with the offset of each operand (read through
/// `strides`, one list per operand) at that cell.
pub fn for_each_offset<const N: usize>(shape: &[u64], strides: [&[usize]; N], mut f: impl FnMut([usize; N])) {
    let total: u64 = shape.iter().product();
    let mut coord = vec![0u64; shape.len()];
    let mut at = [0usize; N];
    for _ in 0..total {
        f(at);
        for k in (0..shape.len()).rev() {
            coord[k] += 1;
            at.iter_mut().zip(&strides).for_each(|(a, s)| *a += s[k]);
            if coord[k] < shape[k] {
                break;
            }
            at.iter_mut().zip(&strides).for_each(|(a, s)| *a -= s[k] * shape[k] as usize);
            coord[k] = 0;
        }
    }
}

/// `f` of the cells of `a` and `b` read through `sa` and `sb` at each cell of a result of `shape`: generic in `f`,
/// so each op compiles to its own vectorized loop; the innermost dimension runs as a slice or a repeated cell.
pub fn zip<T: Copy + Send + Sync + Zeroable>(
    shape: &[u64],
    (a, sa): (&[T], &[usize]),
    (b, sb): (&[T], &[usize]),
    f: impl Fn(T, T) -> T + Sync,
) -> Result<Vec<T>, EvalError> {
    let total = shape.iter().product::<u64>() as usize;
    // Both read in plain order, cell for cell (an extent-1 dimension may stretch to 0: then the counts differ).
    if a.len() == total && b.len() == total && is_dense(shape, sa) && is_dense(shape, sb) {
        return dense(a, b, &f);
    }
    let inner = shape.last().map_or(1, |&n| n as usize);
    let mut out = super::cells(total)?;
    if total == 0 {
        return Ok(out);
    }
    let rows_per_task = (CHUNK / inner).max(1);
    let outer = &shape[..shape.len().saturating_sub(1)];
    let (ia, ib) = (sa.last().copied().unwrap_or(0), sb.last().copied().unwrap_or(0));
    out.par_chunks_mut(rows_per_task * inner).enumerate().for_each(|(task, chunk)| {
        let mut rows = Rows::at(outer, task * rows_per_task, [sa, sb]);
        vectorized(|| {
            for row in chunk.chunks_mut(inner) {
                let [oa, ob] = rows.offsets;
                match (ia, ib) {
                    (1, 1) => {
                        for ((o, &x), &y) in row.iter_mut().zip(&a[oa..oa + inner]).zip(&b[ob..ob + inner]) {
                            *o = f(x, y);
                        }
                    }
                    (1, 0) => row.iter_mut().zip(&a[oa..oa + inner]).for_each(|(o, &x)| *o = f(x, b[ob])),
                    (0, 1) => row.iter_mut().zip(&b[ob..ob + inner]).for_each(|(o, &y)| *o = f(a[oa], y)),
                    _ => row.iter_mut().enumerate().for_each(|(i, o)| *o = f(a[oa + i * ia], b[ob + i * ib])),
                }
                rows.next();
            }
        });
    });
    Ok(out)
}

/// [`zip`] into `a` itself (dense, of the result's `shape`): `a[i] = f(a[i], b at i)`, for an operand whose
/// value dies with the op, so that no result buffer is allocated.
pub fn zip_into<T: Copy + Send + Sync>(
    shape: &[u64],
    a: &mut [T],
    (b, sb): (&[T], &[usize]),
    f: impl Fn(T, T) -> T + Sync,
) {
    let inner = shape.last().map_or(1, |&n| n as usize);
    if a.is_empty() || inner == 0 {
        return;
    }
    let rows_per_task = (CHUNK / inner).max(1);
    let outer = &shape[..shape.len().saturating_sub(1)];
    let ib = sb.last().copied().unwrap_or(0);
    a.par_chunks_mut(rows_per_task * inner).enumerate().for_each(|(task, chunk)| {
        let mut rows = Rows::at(outer, task * rows_per_task, [sb]);
        vectorized(|| {
            for row in chunk.chunks_mut(inner) {
                let [ob] = rows.offsets;
                match ib {
                    1 => row.iter_mut().zip(&b[ob..ob + inner]).for_each(|(x, &y)| *x = f(*x, y)),
                    0 => row.iter_mut().for_each(|x| *x = f(*x, b[ob])),
                    _ => row.iter_mut().enumerate().for_each(|(i, x)| *x = f(*x, b[ob + i * ib])),
                }
                rows.next();
            }
        })
    });
}

/// `f` cell by cell over operands of one shape, on all threads when there is more than one chunk. The output
/// starts as zeroed pages that are only written, never read.
fn dense<T: Copy + Send + Sync + Zeroable>(
    a: &[T],
    b: &[T],
    f: &(impl Fn(T, T) -> T + Sync),
) -> Result<Vec<T>, EvalError> {
    let mut out = super::cells(a.len())?;
    out.par_chunks_mut(CHUNK)
        .zip(a.par_chunks(CHUNK).zip(b.par_chunks(CHUNK)))
        .for_each(|(o, (x, y))| vectorized(|| o.iter_mut().zip(x).zip(y).for_each(|((o, &x), &y)| *o = f(x, y))));
    Ok(out)
}

/// An odometer over the rows of a result (its coordinates but the innermost), with the offset of each operand's
/// row.
pub struct Rows<'s, const N: usize> {
    outer: &'s [u64],
    strides: [&'s [usize]; N],
    coord: Vec<u64>,
    /// Each operand's offset at the start of the current row.
    pub offsets: [usize; N],
}

impl<'s, const N: usize> Rows<'s, N> {
    /// Positioned at row number `row` of a result whose dimensions but the innermost are `outer`.
    pub fn at(outer: &'s [u64], row: usize, strides: [&'s [usize]; N]) -> Self {
        let mut coord = vec![0u64; outer.len()];
        let mut rest = row as u64;
        for k in (0..outer.len()).rev() {
            coord[k] = rest % outer[k];
            rest /= outer[k];
        }
        let offsets = strides.map(|s| coord.iter().zip(s).map(|(&c, &s)| c as usize * s).sum());
        Rows { outer, strides, coord, offsets }
    }

    /// Moves to the next row.
    pub fn next(&mut self) {
        for k in (0..self.outer.len()).rev() {
            self.coord[k] += 1;
            self.offsets.iter_mut().zip(&self.strides).for_each(|(a, s)| *a += s[k]);
            if self.coord[k] < self.outer[k] {
                return;
            }
            let n = self.outer[k] as usize;
            self.offsets.iter_mut().zip(&self.strides).for_each(|(a, s)| *a -= s[k] * n);
            self.coord[k] = 0;
        }
    }
}
