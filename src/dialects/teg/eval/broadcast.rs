//! Reading operands in place at a result's coordinates: a broadcast (stride 0 along a dimension the operand lacks
//! or has with extent 1; the type rule is `infer::broadcast`) or a strided view (any signed stride) is never
//! materialized. Float kernels run a tight loop along the innermost dimension, on all of rayon's threads for
//! large results.

use super::simd::vectorized;
use super::value::Strided;
use super::EvalError;
use crate::array::alloc::Zeroable;
use rayon::prelude::*;

/// Cells per task when a kernel runs on several threads: big enough to amortize a task, small enough that two
/// cores share a 16M-cell op evenly.
pub const CHUNK: usize = 1 << 16;

/// How an operand is read at the coordinates of a result: its cell at coordinate 0, and a signed stride per
/// result dimension.
#[derive(Clone, Debug, PartialEq)]
pub struct Read {
    /// The cell of coordinate 0.
    pub offset: usize,
    /// Per result dimension, how far one step moves in the operand's cells.
    pub strides: Vec<isize>,
}

impl Read {
    /// A row-major array of `shape`, read at its own coordinates.
    pub fn dense(shape: &[u64]) -> Read {
        let strides = crate::array::strides(shape).into_iter().map(|s| s as isize).collect();
        Read { offset: 0, strides }
    }

    /// A layout read at its own coordinates.
    pub fn of_layout(layout: &Strided) -> Read {
        Read { offset: layout.offset, strides: layout.strides.clone() }
    }

    /// Strides taken as they are (a reduction's output strides per input dimension).
    pub fn with_strides(strides: &[usize]) -> Read {
        Read { offset: 0, strides: strides.iter().map(|&s| s as isize).collect() }
    }

    /// An operand with dimension `names` laid out as `layout`, read at the coordinates of a result with dimensions
    /// `out_names`: its own stride along a dimension it has with extent above 1, else 0.
    pub fn of(out_names: &[String], names: &[String], layout: &Strided) -> Read {
        let strides = out_names
            .iter()
            .map(|n| match names.iter().position(|m| m == n) {
                Some(k) if layout.shape[k] > 1 => layout.strides[k],
                _ => 0,
            })
            .collect();
        Read { offset: layout.offset, strides }
    }

    /// The stride along the innermost result dimension.
    fn inner(&self) -> isize {
        self.strides.last().copied().unwrap_or(0)
    }

    /// Whether it reads `len` cells of a result of `shape` in plain row-major order.
    fn is_plain(&self, shape: &[u64], len: usize) -> bool {
        let total = shape.iter().product::<u64>() as usize;
        let dense = Read::dense(shape);
        self.offset == 0
            && len == total
            && dense.strides.iter().zip(shape).zip(&self.strides).all(|((&d, &n), &s)| n <= 1 || d == s)
    }
}

/// The strides with which an operand (dimension `names`, extents `shape`, row-major) is read at each coordinate
/// of a result with dimensions `out_names`.
pub fn strides_in(out_names: &[String], names: &[String], shape: &[u64]) -> Read {
    Read::of(out_names, names, &Strided::dense(shape))
}

/// Visits the cells of a result of `shape` in row-major order, with the offset of each operand at that cell.
pub fn for_each_offset<const N: usize>(shape: &[u64], reads: [&Read; N], mut f: impl FnMut([usize; N])) {
    let total: u64 = shape.iter().product();
    let mut coord = vec![0u64; shape.len()];
    let mut at: [isize; N] = reads.map(|r| r.offset as isize);
    for _ in 0..total {
        f(at.map(|a| a as usize));
        for k in (0..shape.len()).rev() {
            coord[k] += 1;
            at.iter_mut().zip(&reads).for_each(|(a, r)| *a += r.strides[k]);
            if coord[k] < shape[k] {
                break;
            }
            at.iter_mut().zip(&reads).for_each(|(a, r)| *a -= r.strides[k] * shape[k] as isize);
            coord[k] = 0;
        }
    }
}

/// `f` of the cells of `a` and `b` read through `ra` and `rb` at each cell of a result of `shape`: generic in `f`,
/// so each op compiles to its own vectorized loop; the innermost dimension runs as a slice, a repeated cell or a
/// strided walk.
pub fn zip<T: Copy + Send + Sync + Zeroable>(
    shape: &[u64],
    (a, ra): (&[T], &Read),
    (b, rb): (&[T], &Read),
    f: impl Fn(T, T) -> T + Sync,
) -> Result<Vec<T>, EvalError> {
    let total = shape.iter().product::<u64>() as usize;
    // Both read in plain order, cell for cell (an extent-1 dimension may stretch to 0: then the counts differ).
    if ra.is_plain(shape, a.len()) && rb.is_plain(shape, b.len()) {
        return dense(a, b, &f);
    }
    let inner = shape.last().map_or(1, |&n| n as usize);
    let mut out = super::cells(total)?;
    if total == 0 {
        return Ok(out);
    }
    let rows_per_task = (CHUNK / inner).max(1);
    let outer = &shape[..shape.len().saturating_sub(1)];
    let (ia, ib) = (ra.inner(), rb.inner());
    out.par_chunks_mut(rows_per_task * inner).enumerate().for_each(|(task, chunk)| {
        let mut rows = Rows::at(outer, task * rows_per_task, [ra, rb]);
        vectorized(
            #[inline(always)]
            || {
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
                        _ => row.iter_mut().enumerate().for_each(|(i, o)| {
                            *o = f(a[step(oa, i, ia)], b[step(ob, i, ib)]);
                        }),
                    }
                    rows.next();
                }
            },
        );
    });
    Ok(out)
}

/// The cell `i` strides of `stride` after `from`.
#[inline(always)]
fn step(from: usize, i: usize, stride: isize) -> usize {
    (from as isize + i as isize * stride) as usize
}

/// [`zip`] into `a` itself (dense, of the result's `shape`): `a[i] = f(a[i], b at i)`, for an operand whose
/// value dies with the op, so that no result buffer is allocated.
pub fn zip_into<T: Copy + Send + Sync>(
    shape: &[u64],
    a: &mut [T],
    (b, rb): (&[T], &Read),
    f: impl Fn(T, T) -> T + Sync,
) {
    let inner = shape.last().map_or(1, |&n| n as usize);
    if a.is_empty() || inner == 0 {
        return;
    }
    let rows_per_task = (CHUNK / inner).max(1);
    let outer = &shape[..shape.len().saturating_sub(1)];
    let ib = rb.inner();
    a.par_chunks_mut(rows_per_task * inner).enumerate().for_each(|(task, chunk)| {
        let mut rows = Rows::at(outer, task * rows_per_task, [rb]);
        vectorized(
            #[inline(always)]
            || {
                for row in chunk.chunks_mut(inner) {
                    let [ob] = rows.offsets;
                    match ib {
                        1 => row.iter_mut().zip(&b[ob..ob + inner]).for_each(|(x, &y)| *x = f(*x, y)),
                        0 => row.iter_mut().for_each(|x| *x = f(*x, b[ob])),
                        _ => row.iter_mut().enumerate().for_each(|(i, x)| *x = f(*x, b[step(ob, i, ib)])),
                    }
                    rows.next();
                }
            },
        )
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
    out.par_chunks_mut(CHUNK).zip(a.par_chunks(CHUNK).zip(b.par_chunks(CHUNK))).for_each(|(o, (x, y))| {
        vectorized(
            #[inline(always)]
            || o.iter_mut().zip(x).zip(y).for_each(|((o, &x), &y)| *o = f(x, y)),
        )
    });
    Ok(out)
}

/// An odometer over the rows of a result (its coordinates but the innermost), with the offset of each operand's
/// row.
pub struct Rows<'s, const N: usize> {
    outer: &'s [u64],
    reads: [&'s Read; N],
    coord: Vec<u64>,
    at: [isize; N],
    /// Each operand's offset at the start of the current row.
    pub offsets: [usize; N],
}

impl<'s, const N: usize> Rows<'s, N> {
    /// Positioned at row number `row` of a result whose dimensions but the innermost are `outer`.
    pub fn at(outer: &'s [u64], row: usize, reads: [&'s Read; N]) -> Self {
        let mut coord = vec![0u64; outer.len()];
        let mut rest = row as u64;
        for k in (0..outer.len()).rev() {
            coord[k] = rest % outer[k];
            rest /= outer[k];
        }
        let at = reads
            .map(|r| r.offset as isize + coord.iter().zip(&r.strides).map(|(&c, &s)| c as isize * s).sum::<isize>());
        Rows { outer, reads, coord, at, offsets: at.map(|a| a as usize) }
    }

    /// Moves to the next row.
    pub fn next(&mut self) {
        for k in (0..self.outer.len()).rev() {
            self.coord[k] += 1;
            self.at.iter_mut().zip(&self.reads).for_each(|(a, r)| *a += r.strides[k]);
            if self.coord[k] < self.outer[k] {
                break;
            }
            let n = self.outer[k] as isize;
            self.at.iter_mut().zip(&self.reads).for_each(|(a, r)| *a -= r.strides[k] * n);
            self.coord[k] = 0;
        }
        self.offsets = self.at.map(|a| a as usize);
    }
}
