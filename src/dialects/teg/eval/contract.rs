//! Contractions over named dimensions, `teg.contract` and its cases `matmul` and `linear`, run as a batched GEMM:
//! dimensions in the result and both operands are the batch, in the result and one operand the rows (`x`) or
//! columns (`w`), in both operands only the summed `k`. Each operand is laid out as `[batch, rows, k]` and
//! `[batch, k, columns]` (borrowed when it already is), and the result `[batch, rows, columns]` is permuted to the
//! result's order when that differs.

use super::block::{contract, Lhs};
use super::broadcast::{for_each_offset, strides_in};

use super::EvalError;
use crate::array::alloc::room;
use crate::array::{Array, Data};
use crate::map_data;
use std::borrow::Cow;

/// The dimension names of each role, in the order the GEMM reads them.
struct Roles {
    batch: Vec<String>,
    rows: Vec<String>,
    columns: Vec<String>,
    summed: Vec<String>,
}

impl Roles {
    fn new(x: &[String], w: &[String], out: &[String]) -> Roles {
        let in_x = |d: &String| x.contains(d);
        let in_w = |d: &String| w.contains(d);
        let pick = |f: &dyn Fn(&String) -> bool| out.iter().filter(|d| f(d)).cloned().collect::<Vec<_>>();
        Roles {
            batch: pick(&|d| in_x(d) && in_w(d)),
            rows: pick(&|d| in_x(d) && !in_w(d)),
            columns: pick(&|d| !in_x(d) && in_w(d)),
            summed: x.iter().filter(|d| in_w(d) && !out.contains(d)).cloned().collect(),
        }
    }
}

/// `x · w` (+ `bias` on every row, for `linear`), each operand with its dimension names, with the result's extents
/// `shape` and dimension `names`.
pub fn apply(
    (x, xn): (&Array, &[String]),
    (w, wn): (&Array, &[String]),
    bias: Option<&Array>,
    shape: &[u64],
    names: &[String],
) -> Result<Array, EvalError> {
    let r = Roles::new(xn, wn, names);
    let extent = |d: &String| {
        let (names, shape) = if xn.contains(d) { (xn, x.shape()) } else { (wn, w.shape()) };
        shape[names.iter().position(|n| n == d).expect("a dimension of an operand")]
    };
    let size = |dims: &[String]| dims.iter().map(extent).product::<u64>() as usize;
    let a = laid_out(x, xn, &[&r.batch[..], &r.rows, &r.summed].concat())?;
    let b = laid_out(w, wn, &[&r.batch[..], &r.summed, &r.columns].concat())?;
    let (nb, m, k, n) = (size(&r.batch), size(&r.rows), size(&r.summed), size(&r.columns));
    let c = contract(x.dtype(), (&a, Lhs::PerBatch), &b, bias.map(Array::data), [nb, m, k, n])?;
    let gemm_order = [&r.batch[..], &r.rows, &r.columns].concat();
    if gemm_order == names {
        // The GEMM wrote the result in its order: no copy.
        return Ok(Array::new(shape.to_vec(), c).expect("the result's shape"));
    }
    let gemm_shape: Vec<u64> = gemm_order.iter().map(extent).collect();
    let out = Array::new(gemm_shape, c).expect("the GEMM's shape");
    Ok(Array::new(shape.to_vec(), laid_out(&out, &gemm_order, names)?.into_owned()).expect("the result's shape"))
}

/// The cells of `a` (dimension `names`) in row-major order of the dimensions `order` (a permutation of `names`):
/// borrowed when that is already their order.
fn laid_out<'a>(a: &'a Array, names: &[String], order: &[String]) -> Result<Cow<'a, Data>, EvalError> {
    if names == order {
        return Ok(Cow::Borrowed(a.data()));
    }
    let strides = strides_in(order, names, a.shape());
    let shape: Vec<u64> =
        order.iter().map(|d| a.shape()[names.iter().position(|n| n == d).expect("a permutation")]).collect();
    Ok(Cow::Owned(map_data!(a.data(), v => {
        let mut out = room(a.len())?;
        for_each_offset(&shape, [&strides], |[i]| out.push(v[i]));
        out
    })))
}
