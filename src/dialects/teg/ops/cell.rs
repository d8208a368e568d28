//! Cell (elementwise) ops: each result cell from the operands' cells at the same coordinate, operands of two or
//! three broadcasting by dimension name. Their kernels are `eval/cell.rs`.

use super::attrs::Attrs;
use super::maps;
use super::rules::{broadcast, not_i1, same_dtype};
use super::syntax::{attr, fixed, optional, value_op, with, PARENTS, SAME, TYPED};
use super::{Entry, OpFamily, OpKind};
use crate::array::{Array, DType};
use crate::dialects::teg::eval::{cell as kernels, Args, EvalError};
use crate::dialects::teg::tensor_type::TensorType;
use crate::interfaces::sharding::IndexMaps;
use crate::ir::{Arity, AttrKind, OpInfo, OpTrait};

/// Elementwise functions of one operand.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Unary {
    /// `|x|`.
    Abs,
    /// `-x`.
    Neg,
    /// `e^x`.
    Exp,
    /// `ln x`.
    Log,
    /// `√x`.
    Sqrt,
    /// `tanh x`.
    Tanh,
    /// `max(x, 0)`.
    Relu,
    /// `x·Φ(x)`, with the error function.
    Gelu,
    /// `x·Φ(x)` in its tanh approximation: `0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))`.
    GeluTanh,
}

impl Unary {
    /// Whether the function takes integers too (else floats only).
    fn takes_integers(self) -> bool {
        matches!(self, Unary::Abs | Unary::Neg | Unary::Relu)
    }
}

impl Cell {
    /// Whether the op may be computed over its first operand's cells (when that value dies with it): a unary
    /// function, or a binary one other than `max` and `min`. Those give some cells of their first operand back
    /// unchanged, and over it the compiler turns the store into a masked store of the others, which is
    /// microcoded on AMD's cores (ten times slower than computing into a fresh buffer; `relu`, which does the
    /// same, computes from a copy of each block of cells instead).
    pub fn computes_in_place(&self) -> bool {
        match self {
            Cell::Unary(_) => true,
            Cell::Binary(b) => !matches!(b, Binary::Max | Binary::Min),
            _ => false,
        }
    }
}

/// Elementwise functions of two operands.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Binary {
    /// `a + b`.
    Add,
    /// `a − b`.
    Sub,
    /// `a · b`.
    Mul,
    /// `a / b`.
    Div,
    /// The larger (NaN if either is).
    Max,
    /// The smaller (NaN if either is).
    Min,
}

/// Comparison predicates.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Predicate {
    /// `==`.
    Eq,
    /// `!=`.
    Ne,
    /// `<`.
    Lt,
    /// `<=`.
    Le,
    /// `>`.
    Gt,
    /// `>=`.
    Ge,
}

/// A cell op.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    /// A function of one operand.
    Unary(Unary),
    /// A function of two operands that broadcast by name.
    Binary(Binary),
    /// Clamp to `[min, max]` (an open side is infinite).
    Clip {
        /// The lower bound.
        min: f64,
        /// The upper bound.
        max: f64,
    },
    /// Conversion to the result's element type.
    Cast,
    /// Comparison to `i1`.
    Compare(Predicate),
    /// `cond ? a : b`.
    Where,
}

const fn unary(name: &'static str, summary: &'static str, u: Unary) -> Entry {
    fixed(same_type(name, summary, &[]), OpKind::Cell(Cell::Unary(u)))
}

/// An op of one operand of the result's type.
const fn same_type(name: &'static str, summary: &'static str, attrs: &'static [crate::ir::AttrSpec]) -> OpInfo {
    OpInfo {
        traits: &[OpTrait::Pure, OpTrait::HasParent(PARENTS), OpTrait::SameOperandsAndResultType],
        ..value_op(name, summary, Arity::Exact(1), attrs, SAME)
    }
}

/// A cell operator of two operands that broadcast by dimension name; the pretty form names the result type only
/// (the operands' types are their definitions').
const fn binary(name: &'static str, summary: &'static str, b: Binary) -> Entry {
    fixed(value_op(name, summary, Arity::Exact(2), &[], SAME), OpKind::Cell(Cell::Binary(b)))
}

/// The cell ops.
pub const OPS: &[Entry] = &[
    binary("teg.add", "elementwise a + b", Binary::Add),
    binary("teg.sub", "elementwise a - b", Binary::Sub),
    binary("teg.mul", "elementwise a * b", Binary::Mul),
    binary("teg.div", "elementwise a / b", Binary::Div),
    binary("teg.max", "elementwise maximum (NaN wins)", Binary::Max),
    binary("teg.min", "elementwise minimum (NaN wins)", Binary::Min),
    unary("teg.abs", "elementwise |x|", Unary::Abs),
    unary("teg.neg", "elementwise -x", Unary::Neg),
    unary("teg.exp", "elementwise e^x", Unary::Exp),
    unary("teg.log", "elementwise natural logarithm", Unary::Log),
    unary("teg.sqrt", "elementwise square root", Unary::Sqrt),
    unary("teg.tanh", "elementwise hyperbolic tangent", Unary::Tanh),
    unary("teg.relu", "elementwise max(x, 0)", Unary::Relu),
    with(
        same_type(
            "teg.gelu",
            "elementwise x·Φ(x): the erf form, or its tanh approximation",
            &[optional("approximate", AttrKind::String)],
        ),
        gelu,
    ),
    with(
        OpInfo {
            syntax: crate::ir::Syntax::Format(
                "$operands (`min` $min^)? (`max` $max^)? attr-dict (`:` type($results)^)?",
            ),
            ..same_type(
                "teg.clip",
                "elementwise clamp to [min, max] (either bound may be left out)",
                &[optional("min", AttrKind::Float), optional("max", AttrKind::Float)],
            )
        },
        clip,
    ),
    fixed(
        value_op("teg.cast", "elementwise conversion to the result's element type", Arity::Exact(1), &[], TYPED),
        OpKind::Cell(Cell::Cast),
    ),
    with(
        value_op(
            "teg.compare",
            "elementwise comparison (eq, ne, lt, le, gt, ge) to i1",
            Arity::Exact(2),
            &[attr("predicate", AttrKind::Any)],
            "$predicate $operands attr-dict `:` type($operands) (`->` type($results)^)?",
        ),
        compare,
    ),
    fixed(value_op("teg.where", "elementwise cond ? a : b", Arity::Exact(3), &[], TYPED), OpKind::Cell(Cell::Where)),
];

/// `teg.gelu`'s form: `approximate = "none"` (the default, the erf form) or `"tanh"`.
fn gelu(a: &Attrs) -> Result<OpKind, String> {
    let u = match a.optional_string("approximate")?.as_deref() {
        None | Some("none") => Unary::Gelu,
        Some("tanh") => Unary::GeluTanh,
        Some(other) => return Err(format!("approximate must be \"none\" or \"tanh\", not \"{other}\"")),
    };
    Ok(OpKind::Cell(Cell::Unary(u)))
}

/// `teg.clip`'s bounds: either may be left out (an open side), not both (NumPy's rule).
fn clip(a: &Attrs) -> Result<OpKind, String> {
    match (a.optional_float("min")?, a.optional_float("max")?) {
        (None, None) => Err("needs a bound: min, max or both".into()),
        (min, max) => {
            Ok(OpKind::Cell(Cell::Clip { min: min.unwrap_or(f64::NEG_INFINITY), max: max.unwrap_or(f64::INFINITY) }))
        }
    }
}

fn compare(a: &Attrs) -> Result<OpKind, String> {
    let p = match a.string("predicate")?.as_str() {
        "eq" => Predicate::Eq,
        "ne" => Predicate::Ne,
        "lt" => Predicate::Lt,
        "le" => Predicate::Le,
        "gt" => Predicate::Gt,
        "ge" => Predicate::Ge,
        p => return Err(format!("unknown predicate '{p}' (eq, ne, lt, le, gt, ge)")),
    };
    Ok(OpKind::Cell(Cell::Compare(p)))
}

impl OpFamily for Cell {
    fn result_type(&self, operands: &[&TensorType], declared: &TensorType) -> Result<TensorType, String> {
        let x = operands[0];
        Ok(match self {
            Cell::Unary(u) => {
                if x.dtype == DType::I1 || (!u.takes_integers() && !x.dtype.is_float()) {
                    return Err(format!("does not apply to {} elements", x.dtype));
                }
                x.clone()
            }
            Cell::Clip { min, max } => {
                not_i1(x.dtype)?;
                clip_bounds(*min, *max, x.dtype)?;
                x.clone()
            }
            Cell::Binary(_) => {
                let dtype = same_dtype(operands)?;
                not_i1(dtype)?;
                TensorType { dims: broadcast(operands)?, dtype }
            }
            Cell::Cast => TensorType { dtype: declared.dtype, ..x.clone() },
            Cell::Compare(_) => {
                same_dtype(operands)?;
                TensorType { dims: broadcast(operands)?, dtype: DType::I1 }
            }
            Cell::Where => {
                if x.dtype != DType::I1 {
                    return Err(format!("the condition must be i1, not {}", x.dtype));
                }
                TensorType { dims: broadcast(operands)?, dtype: same_dtype(&operands[1..])? }
            }
        })
    }

    fn infers(&self) -> bool {
        *self != Cell::Cast
    }

    /// Every operand by name, an extent-1 or missing dimension broadcast.
    fn index_maps(&self, operands: &[&TensorType], result: Option<&TensorType>) -> Option<IndexMaps> {
        let names: &[&str] = match self {
            Cell::Binary(_) | Cell::Compare(_) => &["a", "b"],
            Cell::Where => &["cond", "a", "b"],
            _ => &["x"],
        };
        Some(maps::by_name(names, operands, result?))
    }

    fn elementwise(&self) -> bool {
        true
    }

    /// Ops of one operand read a dense copy of a view; ops of several read views and broadcasts in place.
    fn eval(&self, a: &Args) -> Result<Array, EvalError> {
        match self {
            Cell::Unary(u) => kernels::unary(*u, &*a.dense(0)?),
            Cell::Clip { min, max } => kernels::clip(&*a.dense(0)?, *min, *max),
            Cell::Cast => kernels::cast(&*a.dense(0)?, a.dtype),
            Cell::Binary(b) => kernels::binary(*b, a.base(0), a.base(1), &a.broadcast()),
            Cell::Compare(p) => kernels::compare(*p, a.base(0), a.base(1), &a.broadcast()),
            Cell::Where => kernels::select(a.base(0), a.base(1), a.base(2), &a.broadcast()),
        }
    }
}

/// Clip bounds must be numbers in order and, for an integer type, hold one of its values between them.
fn clip_bounds(min: f64, max: f64, dtype: DType) -> Result<(), String> {
    if min.is_nan() || max.is_nan() {
        return Err(format!("clip bounds must be numbers, not min {min} and max {max}"));
    }
    if min > max {
        return Err(format!("min {min} is above max {max}"));
    }
    if let Some((lo, hi)) = dtype.int_range() {
        let (low, high) = (min.ceil().max(lo as f64), max.floor().min(hi as f64));
        if low > high {
            return Err(format!("no {dtype} value lies between min {min} and max {max}"));
        }
    }
    Ok(())
}
