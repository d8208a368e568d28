//! Affine maps `(d0, d1)[s0] -> (d0 + s0, d1 floordiv 4)`: expressions over dimensions, symbols and constants.
//!
//! Construction applies MLIR's cheap simplifications (constant folding, constants on the right, `x + 0`,
//! `x * 1`, `x * 0`), so a map prints the way `mlir-opt` prints it and re-parses to the same value.

use std::fmt;

/// An affine (or semi-affine) expression.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum AffineExpr {
    /// Dimension `d<i>`.
    Dim(u32),
    /// Symbol `s<i>`.
    Symbol(u32),
    /// An integer constant.
    Const(i64),
    /// A binary operation.
    Binary(AffineOp, Box<AffineExpr>, Box<AffineExpr>),
}

/// The binary operators of affine expressions.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum AffineOp {
    /// `+` (subtraction is `a + b * -1`).
    Add,
    /// `*`.
    Mul,
    /// `floordiv`.
    FloorDiv,
    /// `ceildiv`.
    CeilDiv,
    /// `mod` (result has the sign of the divisor, as in MLIR).
    Mod,
}

impl AffineOp {
    fn keyword(self) -> &'static str {
        match self {
            AffineOp::Add => "+",
            AffineOp::Mul => "*",
            AffineOp::FloorDiv => "floordiv",
            AffineOp::CeilDiv => "ceildiv",
            AffineOp::Mod => "mod",
        }
    }

    fn fold(self, a: i64, b: i64) -> Option<i64> {
        match self {
            AffineOp::Add => a.checked_add(b),
            AffineOp::Mul => a.checked_mul(b),
            // Division and modulo are defined (and folded) only for positive divisors, as in MLIR.
            AffineOp::FloorDiv if b >= 1 => Some(a.div_euclid(b)),
            AffineOp::CeilDiv if b >= 1 => Some(-(a.checked_neg()?.div_euclid(b))),
            AffineOp::Mod if b >= 1 => Some(a.rem_euclid(b)),
            _ => None,
        }
    }
}

impl AffineExpr {
    /// Builds `lhs op rhs` with MLIR's local simplifications.
    pub fn binary(op: AffineOp, lhs: AffineExpr, rhs: AffineExpr) -> AffineExpr {
        use AffineExpr::Const;
        if let (Const(a), Const(b)) = (&lhs, &rhs) {
            if let Some(v) = op.fold(*a, *b) {
                return Const(v);
            }
        }
        let commutative = matches!(op, AffineOp::Add | AffineOp::Mul);
        let (lhs, rhs) =
            if commutative && matches!(lhs, Const(_)) && !matches!(rhs, Const(_)) { (rhs, lhs) } else { (lhs, rhs) };
        match (op, &rhs) {
            (AffineOp::Add, Const(0)) | (AffineOp::Mul, Const(1)) => return lhs,
            (AffineOp::Mul, Const(0)) => return Const(0),
            (AffineOp::FloorDiv | AffineOp::CeilDiv, Const(1)) => return lhs,
            (AffineOp::Mod, Const(1)) => return Const(0),
            _ => {}
        }
        AffineExpr::Binary(op, Box::new(lhs), Box::new(rhs))
    }

    /// `lhs - rhs`, represented as `lhs + rhs * -1`.
    pub fn difference(lhs: AffineExpr, rhs: AffineExpr) -> AffineExpr {
        let neg = AffineExpr::binary(AffineOp::Mul, rhs, AffineExpr::Const(-1));
        AffineExpr::binary(AffineOp::Add, lhs, neg)
    }

    /// Evaluates the expression at integer dimension and symbol values.
    pub fn eval(&self, dims: &[i64], syms: &[i64]) -> Option<i64> {
        match self {
            AffineExpr::Dim(i) => dims.get(*i as usize).copied(),
            AffineExpr::Symbol(i) => syms.get(*i as usize).copied(),
            AffineExpr::Const(c) => Some(*c),
            AffineExpr::Binary(op, a, b) => op.fold(a.eval(dims, syms)?, b.eval(dims, syms)?),
        }
    }

    /// Largest dimension and symbol position used, plus one (`(num_dims, num_symbols)` lower bounds).
    pub fn extent(&self) -> (u32, u32) {
        match self {
            AffineExpr::Dim(i) => (i + 1, 0),
            AffineExpr::Symbol(i) => (0, i + 1),
            AffineExpr::Const(_) => (0, 0),
            AffineExpr::Binary(_, a, b) => {
                let (da, sa) = a.extent();
                let (db, sb) = b.extent();
                (da.max(db), sa.max(sb))
            }
        }
    }

    fn is_add(&self) -> bool {
        matches!(self, AffineExpr::Binary(AffineOp::Add, ..))
    }

    fn is_binary(&self) -> bool {
        matches!(self, AffineExpr::Binary(..))
    }

    /// If this is `x * c` with `c < 0` (or a negative constant), the positive form `x * -c` for printing `-`.
    fn negated(&self) -> Option<AffineExpr> {
        match self {
            AffineExpr::Const(c) if *c < 0 => Some(AffineExpr::Const(c.checked_neg()?)),
            AffineExpr::Binary(AffineOp::Mul, x, c) => match **c {
                AffineExpr::Const(-1) => Some((**x).clone()),
                AffineExpr::Const(k) if k < 0 => {
                    Some(AffineExpr::Binary(AffineOp::Mul, x.clone(), Box::new(AffineExpr::Const(-k))))
                }
                _ => None,
            },
            _ => None,
        }
    }
}

impl fmt::Display for AffineExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AffineExpr::Dim(i) => write!(f, "d{i}"),
            AffineExpr::Symbol(i) => write!(f, "s{i}"),
            AffineExpr::Const(c) => write!(f, "{c}"),
            AffineExpr::Binary(AffineOp::Add, a, b) => match b.negated() {
                Some(pos) => {
                    write_operand(f, a, false, false).and(write!(f, " - ")).and(write_operand(f, &pos, true, false))
                }
                None => write_operand(f, a, false, false).and(write!(f, " + ")).and(write_operand(f, b, true, false)),
            },
            AffineExpr::Binary(AffineOp::Mul, a, b) if **b == AffineExpr::Const(-1) => {
                write!(f, "-")?;
                write_operand(f, a, true, true)
            }
            AffineExpr::Binary(op, a, b) => {
                write_operand(f, a, false, true)?;
                write!(f, " {} ", op.keyword())?;
                write_operand(f, b, true, true)
            }
        }
    }
}

/// Writes a sub-expression, parenthesized when the context binds tighter than it does.
fn write_operand(f: &mut fmt::Formatter<'_>, e: &AffineExpr, rhs: bool, in_mul: bool) -> fmt::Result {
    let needs_parens = if in_mul { e.is_add() || (rhs && e.is_binary()) } else { rhs && e.is_add() };
    if needs_parens {
        write!(f, "({e})")
    } else {
        write!(f, "{e}")
    }
}

/// `(d0, ..)[s0, ..] -> (results)`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AffineMap {
    /// Number of dimension inputs.
    pub num_dims: u32,
    /// Number of symbol inputs.
    pub num_symbols: u32,
    /// One expression per result.
    pub results: Vec<AffineExpr>,
}

impl AffineMap {
    /// Applies the map to dimension and symbol values.
    pub fn eval(&self, dims: &[i64], syms: &[i64]) -> Option<Vec<i64>> {
        self.results.iter().map(|e| e.eval(dims, syms)).collect()
    }
}

impl fmt::Display for AffineMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dims: Vec<String> = (0..self.num_dims).map(|i| format!("d{i}")).collect();
        write!(f, "({})", dims.join(", "))?;
        if self.num_symbols > 0 {
            let syms: Vec<String> = (0..self.num_symbols).map(|i| format!("s{i}")).collect();
            write!(f, "[{}]", syms.join(", "))?;
        }
        let results: Vec<String> = self.results.iter().map(|e| e.to_string()).collect();
        write!(f, " -> ({})", results.join(", "))
    }
}
