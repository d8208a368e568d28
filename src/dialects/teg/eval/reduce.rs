//! Reductions along named dimensions with a monoid, at memory speed: the input is read once in row-major order,
//! a row at a time, a row folding into one accumulator when its dimension is reduced (in eight interleaved
//! partial results, so that the loop vectorizes) or into a row of accumulators when it is kept. Floats accumulate
//! in `f64` (rounded once to the element type), integers in wrapping `i64`; `mean` is the sum divided by the
//! number of cells that took part. With a mask only the cells it marks take part; a result cell no cell takes
//! part in is the op's `default`, else the monoid's identity (`max` of floats −∞, of integers the type's minimum;
//! `mean` of nothing is NaN).

use super::broadcast::{for_each_offset, Read, Rows};
use super::EvalError;
use crate::array::alloc::{collect, filled};
use crate::array::{strides, Array, Data};
use crate::dialects::teg::ops::Monoid;
use rayon::prelude::*;
use std::borrow::Cow;

/// A reduction's mask: an `i1` array and the strides it is read through at the reduced tensor's coordinates.
pub type Mask<'a> = (&'a Array, Read);

/// Reduces `x` over the dimensions `axes`, only over the cells `mask` marks if there is one.
/// Its buffers are allocated fallibly: running out of memory is an error.
pub fn reduce(
    x: &Array,
    axes: &[usize],
    monoid: Monoid,
    mask: Option<Mask>,
    default: Option<f64>,
) -> Result<Array, EvalError> {
    let plan = Plan::new(x.shape(), axes);
    let counts = filled(if mask.is_some() { plan.out_len } else { 0 }, 0)?;
    let data = match widen(x.data())? {
        Wide::F32(v) => {
            Data::try_from_f64(x.dtype(), floats(&plan, &v, monoid, (mask.as_ref(), counts), default)?.into_iter())?
        }
        Wide::F64(v) => {
            Data::try_from_f64(x.dtype(), floats(&plan, v, monoid, (mask.as_ref(), counts), default)?.into_iter())?
        }
        Wide::Int(v) => {
            let mut acc = filled(plan.out_len, monoid.identity_int(x.dtype()))?;
            let combine = |a: i64, c: i64| monoid.combine_int(a, c);
            let counts = match &mask {
                None => plan.fold_rows(&v, &mut acc, |a, run| run.iter().fold(a, |a, &c| combine(a, c)), combine),
                Some(m) => plan.fold_masked(&v, &mut acc, (m, counts), combine),
            };
            // Verified: the default of an integer reduction is a value of its type.
            fill_empty(&mut acc, &counts, default.map(|d| d as i64));
            Data::try_from_i64(x.dtype(), &acc)?
        }
    };
    Ok(Array::new(plan.out_shape, data).expect("shape and count agree"))
}

/// A float reduction's results in `f64` (`mean` divided by its counts; of nothing, NaN). Each monoid gets its own
/// loops (the fold functions inline into them); `max` and `min` compare in the element type, which is exact.
/// `counts` has room for the per-cell counts of a masked reduction.
fn floats<T: Real>(
    plan: &Plan,
    v: &[T],
    monoid: Monoid,
    (mask, counts): (Option<&Mask>, Vec<u64>),
    default: Option<f64>,
) -> Result<Vec<f64>, EvalError> {
    let mut acc = filled(plan.out_len, monoid.identity_f64())?;
    // The whole fold in one vectorized call: the fold functions inline into it.
    let counts = super::simd::vectorized(
        #[inline(always)]
        || match (mask, monoid) {
            (Some(m), _) => plan.fold_masked(v, &mut acc, (m, counts), |a, c| monoid.combine_f64(a, c.into())),
            (None, Monoid::Sum | Monoid::Mean) => {
                plan.fold_rows(v, &mut acc, |a, run| a + lanes(run, 0.0, |x, y| x + y), |a, c| a + c.into())
            }
            (None, Monoid::Prod) => {
                plan.fold_rows(v, &mut acc, |a, run| a * lanes(run, 1.0, |x, y| x * y), |a, c| a * c.into())
            }
            (None, Monoid::Max) => plan.fold_rows(
                v,
                &mut acc,
                |a, run| monoid.combine_f64(a, extreme(run, T::LOWEST, |c, m| c > m)),
                |a, c| if a.is_nan() || c.into() <= a { a } else { c.into() },
            ),
            (None, Monoid::Min) => plan.fold_rows(
                v,
                &mut acc,
                |a, run| monoid.combine_f64(a, extreme(run, T::HIGHEST, |c, m| c < m)),
                |a, c| if a.is_nan() || c.into() >= a { a } else { c.into() },
            ),
        },
    );
    if monoid == Monoid::Mean {
        acc.iter_mut().enumerate().for_each(|(i, a)| *a /= counts.at(i) as f64);
    }
    fill_empty(&mut acc, &counts, default);
    Ok(acc)
}

/// Sets the result cells no input cell took part in to `default`, if there is one.
fn fill_empty<A: Copy>(acc: &mut [A], counts: &Counts, default: Option<A>) {
    if let Some(d) = default {
        acc.iter_mut().enumerate().filter(|(i, _)| counts.at(*i) == 0).for_each(|(_, a)| *a = d);
    }
}

/// How many input cells took part in each result cell.
enum Counts {
    /// The same number in every cell (no mask).
    All(u64),
    /// Per result cell (a mask).
    PerCell(Vec<u64>),
}

impl Counts {
    fn at(&self, i: usize) -> u64 {
        match self {
            Counts::All(n) => *n,
            Counts::PerCell(v) => v[i],
        }
    }
}

/// Float cells, read as `f64` by sums and products and compared as they are by `max` and `min`.
trait Real: Copy + Into<f64> + PartialOrd + Sync {
    /// −∞.
    const LOWEST: Self;
    /// +∞.
    const HIGHEST: Self;
}

impl Real for f32 {
    const LOWEST: Self = f32::NEG_INFINITY;
    const HIGHEST: Self = f32::INFINITY;
}

impl Real for f64 {
    const LOWEST: Self = f64::NEG_INFINITY;
    const HIGHEST: Self = f64::INFINITY;
}

/// The cells of an input in what reductions read (`f16` and `bf16` through `f32`, integers as `i64`).
enum Wide<'a> {
    F32(Cow<'a, [f32]>),
    F64(&'a [f64]),
    Int(Vec<i64>),
}

fn widen(d: &Data) -> Result<Wide<'_>, EvalError> {
    Ok(match d {
        Data::F32(v) => Wide::F32(Cow::Borrowed(v)),
        Data::F64(v) => Wide::F64(v),
        d if d.dtype().is_float() => Wide::F32(Cow::Owned(collect((0..d.len()).map(|i| d.get_f64(i) as f32))?)),
        d => Wide::Int(collect((0..d.len()).map(|i| d.get_i64(i)))?),
    })
}

/// Where each input cell goes: the result's shape and, per input dimension, its stride in the result (0 for a
/// reduced one).
struct Plan {
    shape: Vec<u64>,
    out_shape: Vec<u64>,
    out_len: usize,
    step: Vec<usize>,
    /// Input cells per result cell.
    count: u64,
}

impl Plan {
    fn new(shape: &[u64], axes: &[usize]) -> Plan {
        let kept: Vec<usize> = (0..shape.len()).filter(|k| !axes.contains(k)).collect();
        let out_shape: Vec<u64> = kept.iter().map(|&k| shape[k]).collect();
        let out_strides = strides(&out_shape);
        let mut step = vec![0usize; shape.len()];
        for (j, &k) in kept.iter().enumerate() {
            step[k] = out_strides[j];
        }
        let out_len = out_shape.iter().product::<u64>() as usize;
        Plan { shape: shape.to_vec(), out_shape, out_len, step, count: axes.iter().map(|&k| shape[k]).product() }
    }

    /// Folds every input row into the accumulators: a row along a reduced dimension with `run`, one along a kept
    /// dimension cell by cell into a row of accumulators with `cell`.
    #[inline(always)] // Into the vectorized copy of `floats`.
    fn fold_rows<T: Copy + Sync, A: Copy + Send + Sync>(
        &self,
        x: &[T],
        acc: &mut [A],
        run: impl Fn(A, &[T]) -> A + Sync,
        cell: impl Fn(A, T) -> A + Sync,
    ) -> Counts {
        let inner = self.shape.last().map_or(1, |&n| n as usize);
        if x.is_empty() {
            return Counts::All(self.count);
        }
        // The reduced dimensions are the innermost ones: each result cell folds its own run of input rows, and
        // runs split between threads.
        let suffix = self.step.iter().skip_while(|&&s| s != 0).all(|&s| s == 0);
        match self.step.last().copied().unwrap_or(0) {
            0 if suffix && x.len() >= PARALLEL_CELLS && inner > 0 => {
                let per = self.count as usize;
                let outputs = (PARALLEL_CELLS / per.max(1)).max(1);
                acc.par_chunks_mut(outputs).zip(x.par_chunks(outputs * per)).for_each(|(acc, x)| {
                    super::simd::vectorized(
                        #[inline(always)]
                        || {
                            for (a, run_of) in acc.iter_mut().zip(x.chunks(per)) {
                                *a = run_of.chunks(inner).fold(*a, &run);
                            }
                        },
                    )
                });
            }
            1 if x.len() >= PARALLEL_CELLS && inner >= 2 * STRIP => self.fold_strips(x, acc, inner, &cell),
            1 => self.fold_strip(x, acc, (0, inner), &cell),
            s => {
                let outer = &self.shape[..self.shape.len() - 1];
                let step = Read::with_strides(&self.step);
                let mut rows = Rows::at(outer, 0, [&step]);
                for row in x.chunks_exact(inner) {
                    let [o] = rows.offsets;
                    match s {
                        0 => acc[o] = run(acc[o], row),
                        _ => acc[o..].iter_mut().step_by(s).zip(row).for_each(|(a, &c)| *a = cell(*a, c)),
                    }
                    rows.next();
                }
            }
        }
        Counts::All(self.count)
    }

    /// [`Plan::fold_rows`] when the innermost dimension is kept, on all threads: each task folds a strip of its
    /// columns (disjoint accumulators, so each still takes its cells in index order) into accumulators of its own,
    /// copied back at the end.
    fn fold_strips<T: Copy + Sync, A: Copy + Send + Sync>(
        &self,
        x: &[T],
        acc: &mut [A],
        inner: usize,
        cell: &(impl Fn(A, T) -> A + Sync),
    ) {
        let width = inner.div_ceil(rayon::current_num_threads()).next_multiple_of(STRIP);
        let starts: Vec<usize> = (0..inner).step_by(width).collect();
        let parts: Vec<Vec<A>> = starts
            .par_iter()
            .map(|&c0| {
                let w = width.min(inner - c0);
                let mut part: Vec<A> = acc.chunks(inner).flat_map(|row| row[c0..c0 + w].iter().copied()).collect();
                super::simd::vectorized(
                    #[inline(always)]
                    || self.fold_strip(x, &mut part, (c0, w), cell),
                );
                part
            })
            .collect();
        for (&c0, part) in starts.iter().zip(parts) {
            let w = width.min(inner - c0);
            for (row, p) in acc.chunks_mut(inner).zip(part.chunks(w)) {
                row[c0..c0 + w].copy_from_slice(p);
            }
        }
    }

    /// Folds the columns `[c0, c0 + w)` of every row into `acc`, which holds those columns of each row of
    /// accumulators (`w` each). Consecutive rows into the same accumulators (a reduced dimension just outside the
    /// innermost) fold together.
    #[inline(always)] // Into the vectorized copy of its caller.
    fn fold_strip<T: Copy, A: Copy>(&self, x: &[T], acc: &mut [A], (c0, w): (usize, usize), cell: &impl Fn(A, T) -> A) {
        let inner = self.shape.last().map_or(1, |&n| n as usize);
        let outer = &self.shape[..self.shape.len() - 1];
        let step = Read::with_strides(&self.step);
        let mut rows = Rows::at(outer, 0, [&step]);
        let count = x.len() / inner;
        let mut r = 0;
        while r < count {
            let [o] = rows.offsets;
            rows.next();
            let mut group = 1;
            while group < GROUP && r + group < count && rows.offsets[0] == o {
                rows.next();
                group += 1;
            }
            let at = o / inner * w;
            fold_group(&mut acc[at..at + w], &x[r * inner..(r + group) * inner], (inner, c0), cell);
            r += group;
        }
    }

    /// Folds the input cells the mask marks, one by one, and counts them per result cell (in `counts`, zeros, one
    /// per result cell).
    #[inline(always)] // Into the vectorized copy of `floats`.
    fn fold_masked<T: Copy, A: Copy>(
        &self,
        x: &[T],
        acc: &mut [A],
        (mask, mut counts): (&Mask, Vec<u64>),
        cell: impl Fn(A, T) -> A,
    ) -> Counts {
        let Data::I1(m) = mask.0.data() else { unreachable!("verified: the mask is i1") };
        let mut i = 0;
        for_each_offset(&self.shape, [&Read::with_strides(&self.step), &mask.1], |[o, at]| {
            if m[at] {
                acc[o] = cell(acc[o], x[i]);
                counts[o] += 1;
            }
            i += 1;
        });
        Counts::PerCell(counts)
    }
}

/// Rows folded together into one row of accumulators.
const GROUP: usize = 16;

/// Columns per strip: a multiple of any vector width.
const STRIP: usize = 16;

/// Inputs at least this large fold on all threads.
const PARALLEL_CELLS: usize = 1 << 18;

/// Folds the rows of `rows` (each `inner` cells) into `acc`, eight rows per pass over the accumulators (a loop
/// LLVM vectorizes, with a fraction of the accumulator traffic); each accumulator still takes its cells in index
/// order.
#[inline(always)] // Into the vectorized copy of `floats`.
fn fold_group<T: Copy, A: Copy>(acc: &mut [A], rows: &[T], (inner, c0): (usize, usize), cell: &impl Fn(A, T) -> A) {
    let mut eights = rows.chunks_exact(8 * inner);
    for block in &mut eights {
        // Each row cut to the accumulators' length, so that the loop needs no bounds checks.
        let r: [&[T]; 8] = std::array::from_fn(|k| &block[k * inner + c0..(k + 1) * inner][..acc.len()]);
        for (j, a) in acc.iter_mut().enumerate() {
            let mut v = *a;
            for row in r {
                v = cell(v, row[j]);
            }
            *a = v;
        }
    }
    for row in eights.remainder().chunks_exact(inner) {
        acc.iter_mut().zip(&row[c0..]).for_each(|(a, &c)| *a = cell(*a, c));
    }
}

/// The largest (or, with `better` as `<`, the smallest) cell of a row in eight interleaved lanes, NaN if any
/// cell is NaN.
#[inline(always)] // Into the vectorized copy of `floats`.
fn extreme<T: Real>(run: &[T], start: T, better: impl Fn(T, T) -> bool) -> f64 {
    const LANES: usize = 8;
    let mut lanes = [start; LANES];
    let mut nan = false;
    let chunks = run.chunks_exact(LANES);
    let rest = chunks.remainder();
    for c in chunks {
        for k in 0..LANES {
            lanes[k] = if better(c[k], lanes[k]) { c[k] } else { lanes[k] };
            #[allow(clippy::eq_op)] // NaN is the one value unequal to itself.
            {
                nan |= c[k] != c[k];
            }
        }
    }
    let mut best = start;
    for &c in lanes.iter().chain(rest) {
        best = if better(c, best) { c } else { best };
        #[allow(clippy::eq_op)]
        {
            nan |= c != c;
        }
    }
    if nan {
        f64::NAN
    } else {
        best.into()
    }
}

/// `f` over a row in eight interleaved partial results, combined in a fixed order (generic in `f`, so the loop
/// vectorizes).
#[inline(always)] // Into the vectorized copy of `floats`.
fn lanes<T: Real>(run: &[T], start: f64, f: impl Fn(f64, f64) -> f64) -> f64 {
    const LANES: usize = 8;
    let mut lanes = [start; LANES];
    let chunks = run.chunks_exact(LANES);
    let rest = chunks.remainder();
    for c in chunks {
        for k in 0..LANES {
            lanes[k] = f(lanes[k], c[k].into());
        }
    }
    let total = lanes.into_iter().fold(start, &f);
    rest.iter().fold(total, |a, &c| f(a, c.into()))
}
