//! Reductions along named dimensions with a monoid. Floats accumulate in `f64` (rounded once to the element
//! type), integers in wrapping `i64`; `mean` is the sum divided by the number of cells reduced. An empty
//! reduction gives the monoid's identity (`max` of floats −∞, of integers the type's minimum).

use super::EvalError;
use crate::array::{strides, Array, Data};
use crate::dialects::teg::kind::Monoid;

/// Reduces `x` over the dimensions `axes`.
pub fn reduce(x: &Array, axes: &[usize], monoid: Monoid) -> Result<Array, EvalError> {
    let shape = x.shape();
    let kept: Vec<usize> = (0..shape.len()).filter(|k| !axes.contains(k)).collect();
    let out_shape: Vec<u64> = kept.iter().map(|&k| shape[k]).collect();
    let out_strides = strides(&out_shape);
    // The output stride of each input dimension (0 for the reduced ones).
    let mut step = vec![0usize; shape.len()];
    for (j, &k) in kept.iter().enumerate() {
        step[k] = out_strides[j];
    }
    let out_len = out_shape.iter().product::<u64>() as usize;
    let count = axes.iter().map(|&k| shape[k]).product::<u64>();
    let targets = output_index(shape, &step);
    let dtype = x.dtype();
    let data = if dtype.is_float() {
        let mut acc = vec![monoid.identity_f64(); out_len];
        let d = x.data();
        for (i, &o) in targets.iter().enumerate() {
            acc[o] = monoid.combine_f64(acc[o], d.get_f64(i));
        }
        if monoid == Monoid::Mean {
            acc.iter_mut().for_each(|a| *a /= count as f64);
        }
        Data::from_f64(dtype, acc.into_iter())
    } else {
        let mut acc = vec![monoid.identity_int(dtype); out_len];
        let d = x.data();
        for (i, &o) in targets.iter().enumerate() {
            acc[o] = monoid.combine_int(acc[o], d.get_i64(i));
        }
        Data::from_i64(dtype, &acc)
    };
    Ok(Array::new(out_shape, data).expect("shape and count agree"))
}

/// For every input cell (row-major), the output cell it reduces into.
fn output_index(shape: &[u64], step: &[usize]) -> Vec<usize> {
    let total = shape.iter().product::<u64>() as usize;
    let mut out = Vec::with_capacity(total);
    let mut coord = vec![0u64; shape.len()];
    let mut at = 0usize;
    for _ in 0..total {
        out.push(at);
        for k in (0..shape.len()).rev() {
            coord[k] += 1;
            at += step[k];
            if coord[k] < shape[k] {
                break;
            }
            at -= step[k] * shape[k] as usize;
            coord[k] = 0;
        }
    }
    out
}
