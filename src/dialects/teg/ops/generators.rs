//! Generators: tensors made from nothing but their coordinates (and their attributes). Their result type is the
//! written one, checked. Their kernels are `eval/generate.rs`.

use super::maps::Maps;
use super::rules::{dim_of, holds_coordinates};
use super::syntax::{attr, fixed, value_op, with, GENERATOR};
use super::{Entry, OpFamily, OpKind};
use crate::array::Array;
use crate::dialects::teg::eval::{generate as kernels, Args, EvalError};
use crate::dialects::teg::tensor_type::TensorType;
use crate::interfaces::sharding::IndexMaps;
use crate::ir::{Arity, AttrKind, AttrSpec, OpInfo};

/// A generator; its fields are the op's attributes.
#[derive(Clone, Debug, PartialEq)]
pub enum Generator {
    /// All zeros.
    Zeros,
    /// All ones.
    Ones,
    /// All `value`.
    Full(f64),
    /// Each cell's coordinate along `dim`.
    Iota {
        /// The dimension whose coordinate each cell holds.
        dim: String,
    },
    /// Uniform `[0, 1)` values from `seed` and the coordinates.
    Random {
        /// The seed.
        seed: i64,
    },
    /// The coordinates of the leading dimensions.
    Index,
}

impl Generator {
    /// Whether every cell holds the same value (any box of it is the same generator over that box).
    pub fn is_constant(&self) -> bool {
        matches!(self, Generator::Zeros | Generator::Ones | Generator::Full(_))
    }
}

impl From<Generator> for OpKind {
    fn from(g: Generator) -> OpKind {
        OpKind::Generate(g)
    }
}

const fn generator(
    name: &'static str,
    summary: &'static str,
    attrs: &'static [AttrSpec],
    format: &'static str,
) -> OpInfo {
    value_op(name, summary, Arity::Exact(0), attrs, format)
}

/// The generators.
pub const OPS: &[Entry] = &[
    fixed(generator("teg.zeros", "a tensor of zeros", &[], GENERATOR), OpKind::Generate(Generator::Zeros)),
    fixed(generator("teg.ones", "a tensor of ones", &[], GENERATOR), OpKind::Generate(Generator::Ones)),
    with(
        generator(
            "teg.full",
            "a tensor of one value",
            &[attr("value", AttrKind::Float)],
            "$value attr-dict `:` type($results)",
        ),
        |a| Ok(Generator::Full(a.float("value")?).into()),
    ),
    with(
        generator(
            "teg.iota",
            "each cell's coordinate along a dimension",
            &[attr("dim", AttrKind::Any)],
            "`along` $dim attr-dict `:` type($results)",
        ),
        |a| Ok(Generator::Iota { dim: a.string("dim")? }.into()),
    ),
    with(
        generator(
            "teg.random",
            "uniform values in [0, 1), a function of the seed and the coordinates only",
            &[attr("seed", AttrKind::Int)],
            "`seed` $seed attr-dict `:` type($results)",
        ),
        |a| Ok(Generator::Random { seed: a.int("seed")? }.into()),
    ),
    fixed(
        generator(
            "teg.index",
            "an index tensor: the coordinates of the leading dimensions' cells, the last dimension naming the axis",
            &[],
            GENERATOR,
        ),
        OpKind::Generate(Generator::Index),
    ),
];

impl OpFamily for Generator {
    fn result_type(&self, _: &[&TensorType], declared: &TensorType) -> Result<TensorType, String> {
        match self {
            Generator::Iota { dim } => {
                let (t, k) = dim_of(declared, dim)?;
                holds_coordinates(t, t.dims[k].1)?;
            }
            Generator::Random { .. } if !declared.dtype.is_float() => {
                return Err(format!("random values are floats, not {}", declared.dtype));
            }
            Generator::Index => index(declared)?,
            _ => {}
        }
        Ok(declared.clone())
    }

    fn infers(&self) -> bool {
        false
    }

    /// Reads nothing; writes its result cell by cell.
    fn index_maps(&self, _: &[&TensorType], result: Option<&TensorType>) -> Option<IndexMaps> {
        let m = Maps::over(result?.dims.clone());
        let out = m.ipf(m.by_name(result?));
        Some(m.done(vec![("result".into(), out)], Vec::new()))
    }

    fn elementwise(&self) -> bool {
        matches!(self, Generator::Zeros | Generator::Ones | Generator::Full(_))
    }

    fn eval(&self, a: &Args) -> Result<Array, EvalError> {
        let (dtype, shape) = (a.dtype, a.shape);
        match self {
            Generator::Zeros => kernels::full(dtype, shape, 0.0),
            Generator::Ones => kernels::full(dtype, shape, 1.0),
            Generator::Full(v) => kernels::full(dtype, shape, *v),
            Generator::Iota { dim } => {
                kernels::iota(dtype, shape, a.out_names.iter().position(|n| n == dim).unwrap_or(0))
            }
            Generator::Random { seed } => kernels::random(dtype, shape, *seed),
            Generator::Index => kernels::index(dtype, shape),
        }
    }
}

/// An index tensor: an integer type holding every coordinate, and a last dimension as long as the others are
/// many.
fn index(t: &TensorType) -> Result<(), String> {
    let rank = t.dims.len();
    match t.dims.last() {
        Some((_, n)) if *n == rank as u64 - 1 && t.dtype.is_int() => {
            holds_coordinates(t, t.dims[..rank - 1].iter().map(|d| d.1).max().unwrap_or(0))
        }
        _ => Err(format!(
            "an index tensor has an integer type and a last dimension whose extent is the number of the others, not {t}"
        )),
    }
}
