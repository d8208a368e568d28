//! The vector unit's elementwise instructions, SPMD over a range of slices, on 32-bit elements (`f32`, `i32`):
//!
//! - `npu.vec.unary relu queue(main) on(0, 0:16) src(dm, ...) dst(acc, ...) : f32`: `relu neg abs` (any 32-bit
//!   type), `exp tanh sigmoid sqrt rsqrt log erf` (`f32`, at the transcendental rate);
//! - `npu.vec.binary add queue(main) on(0, 0) lhs(dm, ...) rhs(acc, ...) dst(dm, ...) : f32`, or `imm 2.0` for a
//!   scalar right operand: `add sub mul max min div`. Integers wrap; an integer division by zero is an error.
//!
//! The operands' elements are their patterns' bytes in order; every operand has the same number of elements. The
//! cost is `setup + ceil(n / rate)` for the `n` elements of one slice (8 per cycle, 4 for transcendentals).
//!
//! Properties: `kind`, `queue`, the slices and operands (`onchip`), `rhs_imm` (instead of `rhs`), `dtype`, `waits`,
//! `signals`; operands: the semaphores.

use super::clauses::{elem_prop, ints, parse_kind, parse_tail, print_kind, print_tail, str_prop};
use super::instruction::registration;
use super::onchip::{self, Operand, Slices, Space};
use crate::dialects::npu::types::elem_name;
use crate::ir::asm::{CustomParser, ParsedOp};
use crate::ir::print::{format_float, OpPrinter};
use crate::ir::types::FloatKind;
use crate::ir::{Attr, Context, Diagnostic, OpId, OpInfo};
use crate::machine::{ElemType, NpuConfig};
use std::fmt;

/// The registration of `npu.vec.unary`.
pub const UNARY: OpInfo = registration(
    "npu.vec.unary",
    "an elementwise function of one on-chip operand, on a range of slices",
    parse_unary,
    print,
);

/// The registration of `npu.vec.binary`.
pub const BINARY: OpInfo = registration(
    "npu.vec.binary",
    "an elementwise function of two on-chip operands (or one and a scalar)",
    parse_binary,
    print,
);

const UNARY_KINDS: &[&str] = &["relu", "neg", "abs", "exp", "tanh", "sigmoid", "sqrt", "rsqrt", "log", "erf"];
const BINARY_KINDS: &[&str] = &["add", "sub", "mul", "max", "min", "div"];
/// The unary kinds at the transcendental rate (and `f32` only).
const TRANSCENDENTAL: &[&str] = &["exp", "tanh", "sigmoid", "sqrt", "rsqrt", "log", "erf"];

/// The right operand of a binary instruction.
#[derive(Clone, Debug)]
pub enum Rhs {
    /// An on-chip operand.
    Operand(Operand),
    /// One value for every element.
    Imm(f64),
}

/// A decoded vector instruction.
#[derive(Clone, Debug)]
pub struct Vector {
    /// The function (`relu`, `add`, ...).
    pub kind: String,
    /// The slices.
    pub slices: Slices,
    /// The (left) operand.
    pub src: Operand,
    /// The right operand of a binary instruction.
    pub rhs: Option<Rhs>,
    /// Where the results go.
    pub dst: Operand,
    /// `f32` or `i32`.
    pub dtype: ElemType,
}

impl Vector {
    /// Elements per slice.
    pub fn elements(&self) -> u64 {
        self.dst.pattern.bytes().unwrap_or(u64::MAX) / 4
    }

    /// Cycles: `setup + ceil(n / rate)`.
    pub fn cycles(&self, cfg: &NpuConfig) -> u64 {
        cfg.vector_cycles(self.elements(), TRANSCENDENTAL.contains(&self.kind.as_str()))
    }

    /// The operands it reads.
    pub fn reads(&self) -> Vec<&Operand> {
        let rhs = match &self.rhs {
            Some(Rhs::Operand(o)) => Some(o),
            _ => None,
        };
        std::iter::once(&self.src).chain(rhs).collect()
    }

    /// The results for the elements of the operands it reads (as 32-bit words), or what goes wrong.
    pub fn apply(&self, inputs: &[Vec<u32>]) -> Result<Vec<u32>, String> {
        let mut out = vec![0; inputs[0].len()];
        let inputs: Vec<&[u32]> = inputs.iter().map(Vec::as_slice).collect();
        self.apply_into(&inputs, &mut out)?;
        Ok(out)
    }

    /// [`Vector::apply`] into `out` (as long as each input): the function is chosen once, not per element.
    pub fn apply_into(&self, inputs: &[&[u32]], out: &mut [u32]) -> Result<(), String> {
        let (kind, x) = (self.kind.as_str(), inputs[0]);
        let Some(rhs) = &self.rhs else {
            match self.dtype {
                ElemType::I32 => unary_i32(kind, x, out),
                _ => unary_f32(kind, x, out),
            }
            return Ok(());
        };
        let y = match rhs {
            Rhs::Operand(_) => Right::Each(inputs[1]),
            Rhs::Imm(v) if self.dtype == ElemType::I32 => Right::All(*v as i32 as u32),
            Rhs::Imm(v) => Right::All((*v as f32).to_bits()),
        };
        match self.dtype {
            ElemType::I32 => binary_i32(kind, x, y, out),
            _ => {
                binary_f32(kind, x, y, out);
                Ok(())
            }
        }
    }
}

/// A binary function's right operand: an element per left one, or one for all.
#[derive(Clone, Copy)]
enum Right<'a> {
    Each(&'a [u32]),
    All(u32),
}

/// `out[i] = f(x[i])` on the words' values as `T` (`f32` or `i32`).
fn map<T: Word>(x: &[u32], out: &mut [u32], f: impl Fn(T) -> T) {
    for (o, &e) in out.iter_mut().zip(x) {
        *o = f(T::of(e)).word();
    }
}

/// `out[i] = f(x[i], y[i])` (or `f(x[i], y)` for one `y`) on the words' values as `T`.
fn zip<T: Word>(x: &[u32], y: Right<'_>, out: &mut [u32], f: impl Fn(T, T) -> T) {
    match y {
        Right::Each(y) => {
            for ((o, &a), &b) in out.iter_mut().zip(x).zip(y) {
                *o = f(T::of(a), T::of(b)).word();
            }
        }
        Right::All(b) => map(x, out, |a| f(a, T::of(b))),
    }
}

/// A 32-bit element type and its word.
trait Word: Copy {
    fn of(word: u32) -> Self;
    fn word(self) -> u32;
}

impl Word for f32 {
    fn of(word: u32) -> f32 {
        f32::from_bits(word)
    }
    fn word(self) -> u32 {
        self.to_bits()
    }
}

impl Word for i32 {
    fn of(word: u32) -> i32 {
        word as i32
    }
    fn word(self) -> u32 {
        self as u32
    }
}

/// `relu` of a float: negatives become 0, NaN stays NaN (as the TEG evaluator and NumPy's `maximum(x, 0)`).
pub fn relu_f32(x: f32) -> f32 {
    if x < 0.0 {
        0.0
    } else {
        x
    }
}

/// `max` or `min` of floats, `pick_first` saying whether `x` wins; a NaN operand gives NaN (IEEE 754's maximum
/// and minimum, as NumPy's and the TEG evaluator's).
pub fn extremum(x: f32, y: f32, pick_first: bool) -> f32 {
    if x.is_nan() || y.is_nan() {
        x + y
    } else if pick_first {
        x
    } else {
        y
    }
}

fn unary_f32(kind: &str, x: &[u32], out: &mut [u32]) {
    match kind {
        "relu" => map(x, out, relu_f32),
        "neg" => map(x, out, |x: f32| -x),
        "abs" => map(x, out, f32::abs),
        "exp" => map(x, out, f32::exp),
        "tanh" => map(x, out, f32::tanh),
        "sigmoid" => map(x, out, |x: f32| 1.0 / (1.0 + (-x).exp())),
        "sqrt" => map(x, out, f32::sqrt),
        "rsqrt" => map(x, out, |x: f32| 1.0 / x.sqrt()),
        "log" => map(x, out, f32::ln),
        _ => map(x, out, libm::erff),
    }
}

fn unary_i32(kind: &str, x: &[u32], out: &mut [u32]) {
    match kind {
        "relu" => map(x, out, |x: i32| x.max(0)),
        "neg" => map(x, out, i32::wrapping_neg),
        _ => map(x, out, i32::wrapping_abs),
    }
}

fn binary_f32(kind: &str, x: &[u32], y: Right<'_>, out: &mut [u32]) {
    match kind {
        "add" => zip(x, y, out, |x: f32, y| x + y),
        "sub" => zip(x, y, out, |x: f32, y| x - y),
        "mul" => zip(x, y, out, |x: f32, y| x * y),
        "max" => zip(x, y, out, |x: f32, y| extremum(x, y, x >= y)),
        "min" => zip(x, y, out, |x: f32, y| extremum(x, y, x <= y)),
        _ => zip(x, y, out, |x: f32, y| x / y),
    }
}

fn binary_i32(kind: &str, x: &[u32], y: Right<'_>, out: &mut [u32]) -> Result<(), String> {
    match kind {
        "add" => zip(x, y, out, i32::wrapping_add),
        "sub" => zip(x, y, out, i32::wrapping_sub),
        "mul" => zip(x, y, out, i32::wrapping_mul),
        "max" => zip(x, y, out, i32::max),
        "min" => zip(x, y, out, i32::min),
        _ => {
            let zero = match y {
                Right::Each(y) => x.iter().zip(y).find(|p| *p.1 == 0).map(|p| *p.0),
                Right::All(0) => x.first().copied(),
                Right::All(_) => None,
            };
            if let Some(n) = zero {
                return Err(format!("divides the integer {} by zero", n as i32));
            }
            zip(x, y, out, i32::wrapping_div);
        }
    }
    Ok(())
}

/// Decodes `op` (either vector instruction); the message says what is malformed.
pub fn decode(ctx: &Context, op: OpId) -> Result<Vector, String> {
    let kind = str_prop(ctx, op, "kind").ok_or("needs 'kind'")?.to_string();
    let slices = onchip::slices_of(ctx, op)?;
    let binary = ctx.op_name(op) == "npu.vec.binary";
    let src = onchip::operand_of(ctx, op, if binary { "lhs" } else { "src" })?;
    let rhs = match (binary, ctx.op_attr(op, "rhs_imm").map(|a| ctx.attr_data(a))) {
        (false, _) => None,
        (true, Some(Attr::Float { bits, .. })) => Some(Rhs::Imm(f64::from_bits(*bits))),
        (true, Some(other)) => Some(Rhs::Imm(other.as_int().ok_or("'rhs_imm' must be a number")? as f64)),
        (true, None) => Some(Rhs::Operand(onchip::operand_of(ctx, op, "rhs")?)),
    };
    let dst = onchip::operand_of(ctx, op, "dst")?;
    let dtype = elem_prop(ctx, op, "dtype")?;
    Ok(Vector { kind, slices, src, rhs, dst, dtype })
}

/// The machine's rules for a vector instruction.
pub fn check(v: &Vector, binary: bool, cfg: &NpuConfig) -> Result<(), String> {
    let kinds = if binary { BINARY_KINDS } else { UNARY_KINDS };
    if !kinds.contains(&v.kind.as_str()) {
        return Err(format!("unknown function '{}' (one of {})", v.kind, kinds.join(", ")));
    }
    let integer_ok = ["relu", "neg", "abs"].contains(&v.kind.as_str()) || binary;
    match v.dtype {
        ElemType::F32 => {}
        ElemType::I32 if integer_ok => {}
        other => return Err(format!("'{}' does not work on {} elements", v.kind, elem_name(other))),
    }
    onchip::check_slices(&v.slices, cfg)?;
    let first = if binary { "lhs" } else { "src" };
    let readable = [Space::Dm, Space::Acc, Space::Vrf];
    onchip::check_space(first, &v.src, &readable)?;
    onchip::check_operand(first, &v.src, 4, false, cfg)?;
    if let Some(Rhs::Operand(rhs)) = &v.rhs {
        onchip::check_space("rhs", rhs, &readable)?;
        onchip::check_operand("rhs", rhs, 4, false, cfg)?;
    }
    onchip::check_space("dst", &v.dst, &[Space::Dm, Space::Acc])?;
    onchip::check_operand("dst", &v.dst, 4, true, cfg)?;
    let n = v.elements();
    for (name, o) in [(first, &v.src)].into_iter().chain(match &v.rhs {
        Some(Rhs::Operand(o)) => Some(("rhs", o)),
        _ => None,
    }) {
        let m = o.pattern.bytes().unwrap_or(u64::MAX) / 4;
        if m != n {
            return Err(format!("{name} has {m} elements but dst has {n}"));
        }
    }
    Ok(())
}

fn parse_unary<'s>(p: &mut CustomParser<'_, 's>) -> Result<ParsedOp<'s>, Diagnostic> {
    parse(p, &["src"])
}

fn parse_binary<'s>(p: &mut CustomParser<'_, 's>) -> Result<ParsedOp<'s>, Diagnostic> {
    parse(p, &["lhs", "rhs"])
}

/// `kind queue(...) [waits(...)] on(...) <inputs> dst(...) : type [signals(...)]`.
fn parse<'s>(p: &mut CustomParser<'_, 's>, inputs: &[&str]) -> Result<ParsedOp<'s>, Diagnostic> {
    let mut op = ParsedOp::default();
    parse_kind(p, &mut op, "the function (relu, add, ...)")?;
    onchip::parse_head(p, &mut op)?;
    for &name in inputs {
        if name == "rhs" && p.eat_keyword("imm") {
            let value = p.f64_attr()?;
            let key = p.ctx().sym("rhs_imm");
            op.props.push((key, value));
        } else {
            onchip::parse_operand(p, &mut op, name)?;
        }
    }
    onchip::parse_operand(p, &mut op, "dst")?;
    parse_tail(p, &mut op)?;
    Ok(op)
}

fn print(p: &mut OpPrinter<'_, '_>, op: OpId) -> fmt::Result {
    let v = decode(p.ctx(), op).map_err(|_| fmt::Error)?;
    print_kind(p, &v.kind)?;
    onchip::print_head(p, op, &v.slices)?;
    let mut elided: Vec<String> = Vec::new();
    match &v.rhs {
        None => {
            onchip::print_operand(p, "src", &v.src)?;
            elided.extend(onchip::props("src"));
        }
        Some(rhs) => {
            onchip::print_operand(p, "lhs", &v.src)?;
            elided.extend(onchip::props("lhs"));
            match rhs {
                Rhs::Operand(o) => {
                    onchip::print_operand(p, "rhs", o)?;
                    elided.extend(onchip::props("rhs"));
                }
                Rhs::Imm(x) => p.write(&format!(" imm {}", format_float(*x, FloatKind::F64))),
            }
        }
    }
    onchip::print_operand(p, "dst", &v.dst)?;
    elided.extend(onchip::props("dst"));
    let waits = ints(p.ctx(), op, "waits").ok_or(fmt::Error)?.len();
    elided.extend(["kind", "chip", "cluster", "slices", "rhs_imm"].map(String::from));
    print_tail(p, op, waits, &elided)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialects::npu::access::AccessPattern;

    fn vector(kind: &str, dtype: ElemType, rhs: Option<Rhs>) -> Vector {
        let o = Operand { space: Space::Dm, pattern: AccessPattern::new(0, &[], 12) };
        let slices = Slices { chip: 0, cluster: 0, first: 0, end: 1 };
        Vector { kind: kind.into(), slices, src: o.clone(), rhs, dst: o, dtype }
    }

    fn floats(v: &[f32]) -> Vec<u32> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    #[test]
    fn each_function_against_hand_computed_values() {
        let x = floats(&[-1.0, 0.0, 4.0]);
        let cases: &[(&str, [f32; 3])] = &[
            ("relu", [0.0, 0.0, 4.0]),
            ("neg", [1.0, -0.0, -4.0]),
            ("abs", [1.0, 0.0, 4.0]),
            ("exp", [(-1f32).exp(), 1.0, 4f32.exp()]),
            ("sigmoid", [1.0 / (1.0 + 1f32.exp()), 0.5, 1.0 / (1.0 + (-4f32).exp())]),
            ("sqrt", [f32::NAN, 0.0, 2.0]),
            ("rsqrt", [f32::NAN, f32::INFINITY, 0.5]),
            ("log", [f32::NAN, f32::NEG_INFINITY, 4f32.ln()]),
            ("erf", [-0.842_700_8, 0.0, 1.0]),
        ];
        for (kind, want) in cases {
            let got = vector(kind, ElemType::F32, None).apply(std::slice::from_ref(&x)).unwrap();
            for (g, w) in got.iter().zip(want) {
                let g = f32::from_bits(*g);
                assert!(g == *w || (g.is_nan() && w.is_nan()) || (g - w).abs() < 1e-6, "{kind}: {g} vs {w}");
            }
        }
        let sum = vector("sub", ElemType::F32, Some(Rhs::Imm(1.5))).apply(std::slice::from_ref(&x)).unwrap();
        assert_eq!(sum, floats(&[-2.5, -1.5, 2.5]));
        let div: Vec<f32> = vector("div", ElemType::F32, Some(Rhs::Imm(0.0)))
            .apply(&[x])
            .unwrap()
            .iter()
            .map(|&b| f32::from_bits(b))
            .collect();
        assert!(div[0] == f32::NEG_INFINITY && div[1].is_nan() && div[2] == f32::INFINITY, "{div:?}");
    }

    #[test]
    fn integers_wrap_and_refuse_division_by_zero() {
        let ints = |v: &[i32]| v.iter().map(|&x| x as u32).collect::<Vec<_>>();
        let x = ints(&[i32::MIN, -3, 7]);
        assert_eq!(
            vector("neg", ElemType::I32, None).apply(std::slice::from_ref(&x)).unwrap(),
            ints(&[i32::MIN, 3, -7])
        );
        assert_eq!(vector("relu", ElemType::I32, None).apply(std::slice::from_ref(&x)).unwrap(), ints(&[0, 0, 7]));
        let other = Rhs::Operand(vector("add", ElemType::I32, None).src);
        let y = ints(&[-1, 2, 0]);
        let v = vector("div", ElemType::I32, Some(other.clone()));
        assert_eq!(v.apply(&[x.clone(), y.clone()]), Err("divides the integer 7 by zero".into()));
        assert_eq!(vector("mul", ElemType::I32, Some(other)).apply(&[x, y]).unwrap(), ints(&[i32::MIN, -6, 0]));
    }
}
