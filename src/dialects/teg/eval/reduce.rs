//! Reductions along named dimensions with a monoid, at memory speed: the input is read once in row-major order,
//! a row at a time, a row folding into one accumulator when its dimension is reduced (in eight interleaved
//! partial results, so that the loop vectorizes) or into a row of accumulators when it is kept. Floats accumulate
//! in `f64` (rounded once to the element type), integers in wrapping `i64`; `mean` is the sum divided by the
//! number of cells that took part. With a mask only the cells it marks take part; a result cell no cell takes
//! part in is the op's `default`, else the monoid's identity (`max` of floats −∞, of integers the type's minimum;
//! `mean` of nothing is NaN).

use super::broadcast::{for_each_offset, Rows};
use crate::array::{strides, Array, Data};
use crate::dialects::teg::kind::Monoid;
use std::borrow::Cow;

/// A reduction's mask: an `i1` array and the strides it is read through at the reduced tensor's coordinates.
pub type Mask<'a> = (&'a Array, Vec<usize>);

/// Reduces `x` over the dimensions `axes`, only over the cells `mask` marks if there is one.
pub fn reduce(x: &Array, axes: &[usize], monoid: Monoid, mask: Option<Mask>, default: Option<f64>) -> Array {
    let plan = Plan::new(x.shape(), axes);
    let data = match widen(x.data()) {
        Wide::F32(v) => Data::from_f64(x.dtype(), floats(&plan, &v, monoid, mask.as_ref(), default).into_iter()),
        Wide::F64(v) => Data::from_f64(x.dtype(), floats(&plan, v, monoid, mask.as_ref(), default).into_iter()),
        Wide::Int(v) => {
            let mut acc = vec![monoid.identity_int(x.dtype()); plan.out_len];
            let combine = |a: i64, c: i64| monoid.combine_int(a, c);
            let counts = match &mask {
                None => plan.fold_rows(&v, &mut acc, |a, run| run.iter().fold(a, |a, &c| combine(a, c)), combine),
                Some(m) => plan.fold_masked(&v, &mut acc, m, combine),
            };
            // Verified: the default of an integer reduction is a value of its type.
            fill_empty(&mut acc, &counts, default.map(|d| d as i64));
            Data::from_i64(x.dtype(), &acc)
        }
    };
    Array::new(plan.out_shape, data).expect("shape and count agree")
}

/// A float reduction's results in `f64` (`mean` divided by its counts; of nothing, NaN).
fn floats<T: Real>(plan: &Plan, v: &[T], monoid: Monoid, mask: Option<&Mask>, default: Option<f64>) -> Vec<f64> {
    let mut acc = vec![monoid.identity_f64(); plan.out_len];
    let cell = |a: f64, c: T| monoid.combine_f64(a, c.into());
    let counts = match mask {
        None => plan.fold_rows(v, &mut acc, |a, run| fold_run(monoid, a, run), cell),
        Some(m) => plan.fold_masked(v, &mut acc, m, cell),
    };
    if monoid == Monoid::Mean {
        acc.iter_mut().enumerate().for_each(|(i, a)| *a /= counts.at(i) as f64);
    }
    fill_empty(&mut acc, &counts, default);
    acc
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

/// Float cells read as `f64`.
trait Real: Copy + Into<f64> {}
impl Real for f32 {}
impl Real for f64 {}

/// The cells of an input in what reductions read (`f16` and `bf16` through `f32`, integers as `i64`).
enum Wide<'a> {
    F32(Cow<'a, [f32]>),
    F64(&'a [f64]),
    Int(Vec<i64>),
}

fn widen(d: &Data) -> Wide<'_> {
    match d {
        Data::F32(v) => Wide::F32(Cow::Borrowed(v)),
        Data::F64(v) => Wide::F64(v),
        d if d.dtype().is_float() => Wide::F32(Cow::Owned((0..d.len()).map(|i| d.get_f64(i) as f32).collect())),
        d => Wide::Int((0..d.len()).map(|i| d.get_i64(i)).collect()),
    }
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
    fn fold_rows<T: Copy, A: Copy>(
        &self,
        x: &[T],
        acc: &mut [A],
        run: impl Fn(A, &[T]) -> A,
        cell: impl Fn(A, T) -> A,
    ) -> Counts {
        let inner = self.shape.last().map_or(1, |&n| n as usize);
        if x.is_empty() {
            return Counts::All(self.count);
        }
        let (outer, s) = (&self.shape[..self.shape.len().saturating_sub(1)], self.step.last().copied().unwrap_or(0));
        let mut rows = Rows::at(outer, 0, [&self.step[..]]);
        for row in x.chunks_exact(inner) {
            let [o] = rows.offsets;
            if s == 0 {
                acc[o] = run(acc[o], row);
            } else {
                for (a, &c) in acc[o..].iter_mut().step_by(s).zip(row) {
                    *a = cell(*a, c);
                }
            }
            rows.next();
        }
        Counts::All(self.count)
    }

    /// Folds the input cells the mask marks, one by one, and counts them per result cell.
    fn fold_masked<T: Copy, A: Copy>(&self, x: &[T], acc: &mut [A], mask: &Mask, cell: impl Fn(A, T) -> A) -> Counts {
        let Data::I1(m) = mask.0.data() else { unreachable!("verified: the mask is i1") };
        let mut counts = vec![0u64; self.out_len];
        let mut i = 0;
        for_each_offset(&self.shape, [&self.step[..], &mask.1[..]], |[o, at]| {
            if m[at] {
                acc[o] = cell(acc[o], x[i]);
                counts[o] += 1;
            }
            i += 1;
        });
        Counts::PerCell(counts)
    }
}

/// Folds a row of floats into `acc` (NaN wins `max` and `min`).
fn fold_run<T: Real>(monoid: Monoid, acc: f64, run: &[T]) -> f64 {
    let total = match monoid {
        Monoid::Sum | Monoid::Mean => lanes(run, 0.0, |a, b| a + b),
        Monoid::Prod => lanes(run, 1.0, |a, b| a * b),
        Monoid::Max => lanes(run, f64::NEG_INFINITY, f64::max),
        Monoid::Min => lanes(run, f64::INFINITY, f64::min),
    };
    let nan = matches!(monoid, Monoid::Max | Monoid::Min) && run.iter().any(|&c| c.into().is_nan());
    if nan {
        f64::NAN
    } else {
        monoid.combine_f64(acc, total)
    }
}

/// `f` over a row in eight interleaved partial results, combined in a fixed order (generic in `f`, so the loop
/// vectorizes).
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
