//! The value of `teg.reshard`: the result's box of the whole tensor, assembled from the operands' boxes (operands
//! holding the same box are partial results, combined first with the op's monoid, left to right). Every result
//! cell must come from exactly one distinct box: a cell no box covers, or two different boxes cover, is an error.

use super::broadcast::{for_each_offset, Read};
use super::cell::{binary, Broadcast};
use super::value::Strided;
use super::views::{assemble, region, Placement};
use super::{fail, EvalError};
use crate::array::alloc::zeroed;
use crate::array::Array;
use crate::dialects::teg::ops::{Binary, Monoid};
use std::collections::BTreeMap;

/// The result of extents `shape` at offset `at` of the whole tensor, from `operands` at offsets `from`.
pub fn apply(
    operands: &[&Array],
    from: &[Vec<i64>],
    at: &[i64],
    shape: &[u64],
    combine: Option<Monoid>,
) -> Result<Array, EvalError> {
    let (boxes, arrays) = combined(operands, from, combine)?;
    let out = Strided::dense(shape);
    let mut copies: Vec<Placement> = Vec::new();
    let mut covered = zeroed::<bool>(shape.iter().product::<u64>() as usize)?;
    for (i, (offset, array)) in boxes.iter().zip(&arrays).enumerate() {
        let (mut into, mut read) = (out.clone(), Strided::dense(array.shape()));
        for k in 0..shape.len() {
            let lo = offset[k].max(at[k]);
            let hi = (offset[k] + array.shape()[k] as i64).min(at[k] + shape[k] as i64);
            let n = (hi - lo).max(0) as u64;
            into = region(&into, k, (lo - at[k]).max(0) as u64, n, 1);
            read = region(&read, k, (lo - offset[k]).max(0) as u64, n, 1);
        }
        if into.shape.contains(&0) {
            continue;
        }
        let mut twice = false;
        for_each_offset(&into.shape, [&Read::of_layout(&into)], |[c]| {
            twice |= covered[c];
            covered[c] = true;
        });
        if twice {
            return fail(format!(
                "two different boxes of teg.reshard's operands cover one cell (the box at {offset:?})"
            ));
        }
        copies.push((into, i, read));
    }
    if let Some(c) = covered.iter().position(|&c| !c) {
        return fail(format!("cell {c} (row-major) of teg.reshard's result is in no operand's box"));
    }
    let refs: Vec<&Array> = arrays.iter().collect();
    assemble(&refs, shape, &copies, None)
}

/// The distinct boxes (offset, first operand with it) and their values: operands with the same offset and extents
/// combined with `combine`.
fn combined(
    operands: &[&Array],
    from: &[Vec<i64>],
    combine: Option<Monoid>,
) -> Result<(Vec<Vec<i64>>, Vec<Array>), EvalError> {
    let mut index: BTreeMap<(&[i64], &[u64]), usize> = BTreeMap::new();
    let (mut boxes, mut arrays): (Vec<Vec<i64>>, Vec<Array>) = (Vec::new(), Vec::new());
    for (x, offset) in operands.iter().zip(from) {
        match index.get(&(offset.as_slice(), x.shape())) {
            None => {
                index.insert((offset, x.shape()), arrays.len());
                boxes.push(offset.clone());
                arrays.push((*x).clone());
            }
            Some(&k) => {
                let op = match combine {
                    Some(Monoid::Sum) => Binary::Add,
                    Some(Monoid::Prod) => Binary::Mul,
                    Some(Monoid::Max) => Binary::Max,
                    Some(Monoid::Min) => Binary::Min,
                    _ => {
                        return fail(format!("two operands hold the box at {offset:?} and no combine monoid is given"))
                    }
                };
                let shape = x.shape().to_vec();
                let at = Broadcast { shape: &shape, reads: vec![Read::dense(&shape), Read::dense(&shape)] };
                arrays[k] = binary(op, &arrays[k], x, &at)?;
            }
        }
    }
    Ok((boxes, arrays))
}
