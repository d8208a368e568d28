//! `teg.reduce`: a reduction along named dimensions with a monoid, optionally masked, with a default for the cells
//! no element takes part in. Its kernels are `eval/reduce.rs`.

use super::attrs::Attrs;
use super::maps::Maps;
use super::rules::{broadcast, distinct_dims, holds_value};
use super::syntax::{attr, optional, value_op, with};
use super::{Entry, Monoid, OpFamily, OpKind};
use crate::array::{Array, DType};
use crate::dialects::teg::eval::{reduce as kernels, Args, EvalError};
use crate::dialects::teg::tensor_type::TensorType;
use crate::interfaces::sharding::IndexMaps;
use crate::ir::{Arity, AttrKind};

/// A reduction of the named dimensions; with a mask (a second operand), only the cells it marks take part, and a
/// result cell none takes part in is `default` (else the monoid's identity).
#[derive(Clone, Debug, PartialEq)]
pub struct Reduce {
    /// The reduced dimensions.
    pub dims: Vec<String>,
    /// How cells combine.
    pub monoid: Monoid,
    /// The value of a result cell no cell takes part in.
    pub default: Option<f64>,
}

/// The reduction.
pub const OPS: &[Entry] = &[with(
    value_op(
        "teg.reduce",
        "reduction along named dimensions with a monoid (sum, prod, max, min; mean = sum then scale), optionally masked",
        Arity::AtLeast(1),
        &[attr("dims", AttrKind::Array), attr("monoid", AttrKind::Any), optional("default", AttrKind::Float)],
        "$operands `along` $dims `by` $monoid (`default` $default^)? attr-dict `:` type($operands) (`->` type($results)^)?",
    ),
    decode,
)];

fn decode(a: &Attrs) -> Result<OpKind, String> {
    let monoid = a.string("monoid")?;
    let monoid =
        Monoid::from_name(&monoid).ok_or_else(|| format!("unknown monoid '{monoid}' (sum, prod, max, min, mean)"))?;
    let default = a.optional_float("default")?;
    Ok(OpKind::Reduce(Reduce { dims: a.strings("dims")?, monoid, default }))
}

impl OpFamily for Reduce {
    fn result_type(&self, operands: &[&TensorType], _: &TensorType) -> Result<TensorType, String> {
        let t = operands[0];
        if let Some(mask) = operands.get(1) {
            if mask.dtype != DType::I1 || broadcast(&[t, mask]).ok().as_ref() != Some(&t.dims) {
                return Err(format!("the mask must be i1 and broadcast to the reduced tensor {t}, not {mask}"));
            }
        }
        if operands.len() > 2 {
            return Err(format!("takes the tensor and at most a mask, not {} operands", operands.len()));
        }
        if let Some(d) = self.default {
            holds_value(d, t.dtype, "default")?;
        }
        distinct_dims(t, &self.dims)?;
        if t.dtype == DType::I1 || (self.monoid == Monoid::Mean && !t.dtype.is_float()) {
            return Err(format!("{} does not reduce {} elements", self.monoid.name(), t.dtype));
        }
        let kept = t.dims.iter().filter(|d| !self.dims.contains(&d.0)).cloned().collect();
        Ok(TensorType { dims: kept, dtype: t.dtype })
    }

    /// The index space is the result's dimensions, then the reduced ones (reductions by the monoid); the tensor
    /// and the mask are read by name.
    fn index_maps(&self, operands: &[&TensorType], result: Option<&TensorType>) -> Option<IndexMaps> {
        let mut m = Maps::over(result?.dims.clone());
        let mut reductions = Vec::new();
        for (name, extent) in operands[0].dims.iter().filter(|d| self.dims.contains(&d.0)) {
            reductions.push((m.index.len(), self.monoid));
            m.index.push((name.clone(), *extent));
        }
        let out = m.ipf(m.by_name(result?));
        for (t, name) in operands.iter().zip(["x", "mask"]) {
            m.read(name, m.by_name(t));
        }
        Some(m.done(vec![("result".into(), out)], reductions))
    }

    fn eval(&self, a: &Args) -> Result<Array, EvalError> {
        let axes = self.dims.iter().map(|d| a.dim(0, d)).collect::<Result<Vec<_>, _>>()?;
        let x = a.dense(0)?;
        let mask = if a.len() > 1 { Some(a.dense(1)?) } else { None };
        let mask = mask.as_deref().map(|m| (m, a.strides_of(1, 0)));
        kernels::reduce(&x, &axes, self.monoid, mask, self.default)
    }
}
