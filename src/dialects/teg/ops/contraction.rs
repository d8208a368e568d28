//! Contractions by dimension name: `teg.contract` (einsum: dimensions of both operands not in the result are
//! summed) and its cases `matmul` and `linear`, and `prod` (matmul before its sum). Block operators: their index
//! maps are their signatures. Their kernel is the batched GEMM of `eval/contract.rs`.

use super::rules::{not_i1, unique_names};
use super::syntax::{fixed, value_op, TYPED};
use super::{Entry, Monoid, OpFamily, OpKind};
use crate::array::{Array, DType};
use crate::dialects::teg::eval::{block as kernels, contract, Args, EvalError};
use crate::dialects::teg::signature::{ipf, Signature};
use crate::dialects::teg::tensor_type::TensorType;
use crate::ir::Arity;
use crate::zspace::Ipf;

/// A contraction.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Contraction {
    /// `x · w` over named dimensions: those in both operands and not in the result are summed (einsum).
    Contract,
    /// `x[..., k] · w[k, n]`.
    Matmul,
    /// `x[..., in] · w[in, out] + b[out]`.
    Linear,
    /// `x[..., in] · w[in, out]` kept per `in`.
    Prod,
}

const fn op(name: &'static str, summary: &'static str, operands: u32, c: Contraction) -> Entry {
    fixed(value_op(name, summary, Arity::Exact(operands), &[], TYPED), OpKind::Contraction(c))
}

/// The contractions.
pub const OPS: &[Entry] = &[
    op(
        "teg.contract",
        "x · w over named dimensions: those in both operands and not in the result are summed (einsum)",
        2,
        Contraction::Contract,
    ),
    op("teg.matmul", "x[..., k] · w[k, n] summed over k", 2, Contraction::Matmul),
    op("teg.linear", "x[..., in] · w[in, out] + b[out]", 3, Contraction::Linear),
    op("teg.prod", "p[..., in, out] = x[..., in] · w[in, out] (matmul before its sum)", 2, Contraction::Prod),
];

impl OpFamily for Contraction {
    fn result_type(&self, operands: &[&TensorType], declared: &TensorType) -> Result<TensorType, String> {
        match self {
            Contraction::Contract => contract(operands[0], operands[1], declared),
            _ => self.matmul(operands),
        }
    }

    fn infers(&self) -> bool {
        *self != Contraction::Contract
    }

    /// A contraction by names: the index space is the result's dimensions, then the summed ones (in both
    /// operands, not in the result) in `x`'s order, which are `sum` reductions; every tensor reads its dimensions
    /// at their index positions. For `x[b.., k] · w[k, n]` that is index `(b.., n, k)`. `prod`: every index
    /// dimension parallel.
    fn signature(&self, operands: &[&TensorType], result: &TensorType) -> Option<Signature> {
        let (x, w) = (operands[0], operands[1]);
        let mut index = result.dims.clone();
        if *self == Contraction::Prod {
            return Some(prod(x, index));
        }
        let summed = x.dims.iter().filter(|d| w.position(&d.0).is_some() && result.position(&d.0).is_none());
        index.extend(summed.cloned());
        let rank = index.len();
        let at = |t: &TensorType| -> Ipf {
            let rows: Vec<_> = t.dims.iter().map(|d| (index.iter().position(|i| i.0 == d.0), 1, 0, 1)).collect();
            ipf(rank, &rows)
        };
        let mut inputs = vec![("x".to_string(), at(x)), ("w".to_string(), at(w))];
        if *self == Contraction::Linear {
            inputs.push(("b".to_string(), at(operands[2])));
        }
        let reductions = (result.dims.len()..rank).map(|i| (i, Monoid::Sum)).collect();
        let outputs = vec![("y".into(), at(result))];
        Some(Signature { index, inputs, outputs, reductions })
    }

    fn eval(&self, a: &Args) -> Result<Array, EvalError> {
        let (x, w) = (a.dense(0)?, a.dense(1)?);
        if a.shape.contains(&0) {
            // Nothing to compute (and the loops over the other extents could be long).
            return crate::dialects::teg::eval::generate::full(x.dtype(), a.shape, 0.0);
        }
        match self {
            Contraction::Prod => kernels::prod(&x, &w, a.shape),
            _ => {
                let bias = if a.len() > 2 { Some(a.dense(2)?) } else { None };
                contract::apply(
                    (&x, a.names[0].as_slice()),
                    (&w, a.names[1].as_slice()),
                    bias.as_deref(),
                    a.shape,
                    a.out_names,
                )
            }
        }
    }
}

impl Contraction {
    /// `matmul`, `linear` and `prod`: `x[..., k]` against `w[k, n]` (and `b[n]`).
    fn matmul(self, operands: &[&TensorType]) -> Result<TensorType, String> {
        let (x, w) = (operands[0], operands[1]);
        let (Some(k), 2) = (x.dims.last(), w.dims.len()) else {
            return Err(format!("needs x with at least one dimension and w with two, not {x} and {w}"));
        };
        if *k != w.dims[0] {
            return Err(format!("contracts {}={} of x with {}={} of w", k.0, k.1, w.dims[0].0, w.dims[0].1));
        }
        if x.dtype != w.dtype {
            return Err(format!("x is {} but w is {}", x.dtype, w.dtype));
        }
        not_i1(x.dtype)?;
        let n = w.dims[1].clone();
        let mut dims = x.dims.clone();
        match self {
            Contraction::Prod => dims.push(n),
            _ => *dims.last_mut().unwrap() = n,
        }
        if self == Contraction::Linear {
            let b = operands[2];
            if b.dims != [w.dims[1].clone()] || b.dtype != x.dtype {
                return Err(format!("the bias must be [{}={}] x {}, not {b}", w.dims[1].0, w.dims[1].1, x.dtype));
            }
        }
        unique_names(&dims)?;
        Ok(TensorType { dims, dtype: x.dtype })
    }
}

/// `teg.contract`: every result dimension is a dimension of `x` or `w`; a dimension of both has one extent and is
/// summed unless the result has it; a dimension of one operand only must be in the result (reduce it first).
fn contract(x: &TensorType, w: &TensorType, declared: &TensorType) -> Result<TensorType, String> {
    if x.dtype != w.dtype || x.dtype == DType::I1 {
        return Err(format!("contracts x and w of one element type other than i1, not {} and {}", x.dtype, w.dtype));
    }
    for (name, extent) in &declared.dims {
        let from = x.position(name).map(|k| &x.dims[k]).or_else(|| w.position(name).map(|k| &w.dims[k]));
        match from {
            None => return Err(format!("result dimension {name} is in neither x nor w")),
            Some((_, e)) if e != extent => {
                return Err(format!("result dimension {name} is {extent}, the operands' {e}"))
            }
            Some(_) => {}
        }
    }
    for (name, extent) in &x.dims {
        match w.position(name).map(|k| w.dims[k].1) {
            Some(e) if e != *extent => return Err(format!("dimension {name} is {extent} in x but {e} in w")),
            None if declared.position(name).is_none() => {
                return Err(format!("dimension {name} of x is in neither w nor the result (reduce it first)"))
            }
            _ => {}
        }
    }
    if let Some((name, _)) = w.dims.iter().find(|d| x.position(&d.0).is_none() && declared.position(&d.0).is_none()) {
        return Err(format!("dimension {name} of w is in neither x nor the result (reduce it first)"));
    }
    Ok(TensorType { dims: declared.dims.clone(), dtype: x.dtype })
}

/// `p[b.., in, out] = x[b.., in] · w[in, out]` over the result's dimensions: every index dimension parallel.
fn prod(x: &TensorType, index: Vec<(String, u64)>) -> Signature {
    let rank = index.len();
    let unit = |d: usize| (Some(d), 1, 0, 1);
    let x_rows: Vec<_> = (0..x.dims.len()).map(unit).collect();
    let w_rows = [unit(rank - 2), unit(rank - 1)];
    let p_rows: Vec<_> = (0..rank).map(unit).collect();
    Signature {
        index,
        inputs: vec![("x".into(), ipf(rank, &x_rows)), ("w".into(), ipf(rank, &w_rows))],
        outputs: vec![("p".into(), ipf(rank, &p_rows))],
        reductions: Vec::new(),
    }
}
