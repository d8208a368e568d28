//! Binary arithmetic: `arith.addi/subi/muli` (integers, wrapping at the type's width) and
//! `arith.addf/subf/mulf/divf` (floats, rounded to the type), with their folds. Pretty form `arith.addi %a, %b : i32`.

use super::patterns::{
    ADD_ADD_CONSTANT, CONSTANT_TO_RIGHT_ADDF, CONSTANT_TO_RIGHT_ADDI, CONSTANT_TO_RIGHT_MULF, CONSTANT_TO_RIGHT_MULI,
};
use crate::ir::float_bits::round_to;
use crate::ir::rewrite::{FoldFn, Folded, RewritePattern};
use crate::ir::{
    Arity, Attr, AttrDefault, AttrId, AttrKind, AttrSpec, Context, FloatKind, OpId, OpInfo, OpTrait, Syntax, TypeKind,
};

const FORMAT: &str = "$operands attr-dict `:` type($results)";
const COMMUTATIVE: &[OpTrait] = &[OpTrait::Pure, OpTrait::SameOperandsAndResultType, OpTrait::Commutative];
const ORDERED: &[OpTrait] = &[OpTrait::Pure, OpTrait::SameOperandsAndResultType];
const INT_ATTRS: &[AttrSpec] = &[AttrSpec {
    name: "overflowFlags",
    kind: AttrKind::Any,
    optional: true,
    default: Some(AttrDefault { text: "#arith.overflow<none>", make: |ctx| flag(ctx, "arith.overflow") }),
}];
const FLOAT_ATTRS: &[AttrSpec] = &[AttrSpec {
    name: "fastmath",
    kind: AttrKind::Any,
    optional: true,
    default: Some(AttrDefault { text: "#arith.fastmath<none>", make: |ctx| flag(ctx, "arith.fastmath") }),
}];

/// `#<name><none>`, the value MLIR gives these flags by default.
fn flag(ctx: &mut Context, name: &str) -> AttrId {
    let name = ctx.sym(name);
    ctx.attr(Attr::Opaque { name, body: Some("none".into()) })
}

const fn binary(
    name: &'static str,
    summary: &'static str,
    traits: &'static [OpTrait],
    attrs: &'static [AttrSpec],
    fold: FoldFn,
    canonicalization: &'static [&'static dyn RewritePattern],
) -> OpInfo {
    OpInfo {
        operands: Arity::Exact(2),
        results: Arity::Exact(1),
        traits,
        attrs,
        syntax: Syntax::Format(FORMAT),
        fold: Some(fold),
        canonicalization,
        ..OpInfo::new(name, summary)
    }
}

const ADDI: &[&dyn RewritePattern] = &[&CONSTANT_TO_RIGHT_ADDI, &ADD_ADD_CONSTANT];
const MULI: &[&dyn RewritePattern] = &[&CONSTANT_TO_RIGHT_MULI];
const ADDF: &[&dyn RewritePattern] = &[&CONSTANT_TO_RIGHT_ADDF];
const MULF: &[&dyn RewritePattern] = &[&CONSTANT_TO_RIGHT_MULF];

/// Every binary op of the dialect.
pub const ALL: [OpInfo; 7] = [
    binary("arith.addi", "integer addition", COMMUTATIVE, INT_ATTRS, fold_addi, ADDI),
    binary("arith.subi", "integer subtraction", ORDERED, INT_ATTRS, fold_subi, &[]),
    binary("arith.muli", "integer multiplication", COMMUTATIVE, INT_ATTRS, fold_muli, MULI),
    binary("arith.addf", "floating-point addition", COMMUTATIVE, FLOAT_ATTRS, fold_addf, ADDF),
    binary("arith.subf", "floating-point subtraction", ORDERED, FLOAT_ATTRS, fold_subf, &[]),
    binary("arith.mulf", "floating-point multiplication", COMMUTATIVE, FLOAT_ATTRS, fold_mulf, MULF),
    binary("arith.divf", "floating-point division", ORDERED, FLOAT_ATTRS, fold_divf, &[]),
];

crate::define_op! {
    /// A typed `arith.addi`.
    pub struct AddIOp = "arith.addi";
    operands { lhs: 0, rhs: 1 }
    results { result: 0 }
    props {}
}

/// The integer value of a constant operand.
pub(super) fn int_of(ctx: &Context, c: Option<AttrId>) -> Option<i128> {
    ctx.attr_data(c?).as_int()
}

fn float_of(ctx: &Context, c: Option<AttrId>) -> Option<f64> {
    match ctx.attr_data(c?) {
        Attr::Float { bits, .. } => Some(f64::from_bits(*bits)),
        _ => None,
    }
}

/// `v` wrapped to the signed range of the op's result type.
pub(super) fn wrap(ctx: &Context, op: OpId, v: i128) -> i128 {
    let width = match ctx.type_kind(ctx.body.value_type(ctx.body.result(op, 0))) {
        TypeKind::Int(w) => (*w).min(128),
        _ => 64,
    };
    let shift = 128 - width;
    (v << shift) >> shift
}

fn int_result(ctx: &mut Context, op: OpId, v: i128) -> Option<Vec<Folded>> {
    let ty = ctx.body.value_type(ctx.body.result(op, 0));
    let v = wrap(ctx, op, v);
    Some(vec![Folded::Constant(ctx.int_attr(v, ty))])
}

fn float_result(ctx: &mut Context, op: OpId, v: f64) -> Option<Vec<Folded>> {
    let ty = ctx.body.value_type(ctx.body.result(op, 0));
    let kind = match ctx.type_kind(ty) {
        TypeKind::Float(k) => *k,
        _ => FloatKind::F64,
    };
    let bits = round_to(kind, v).to_bits();
    Some(vec![Folded::Constant(ctx.attr(Attr::Float { bits, ty }))])
}

fn operand(ctx: &Context, op: OpId, i: usize) -> Option<Vec<Folded>> {
    Some(vec![Folded::Value(ctx.body.operand(op, i))])
}

fn fold_int(
    ctx: &mut Context,
    op: OpId,
    c: &[Option<AttrId>],
    f: fn(i128, i128) -> Option<i128>,
) -> Option<Option<Vec<Folded>>> {
    let (a, b) = (int_of(ctx, c[0])?, int_of(ctx, c[1])?);
    Some(int_result(ctx, op, f(a, b)?))
}

fn fold_addi(ctx: &mut Context, op: OpId, c: &[Option<AttrId>]) -> Option<Vec<Folded>> {
    if let Some(r) = fold_int(ctx, op, c, i128::checked_add) {
        return r;
    }
    match (int_of(ctx, c[0]), int_of(ctx, c[1])) {
        (_, Some(0)) => operand(ctx, op, 0),
        (Some(0), _) => operand(ctx, op, 1),
        _ => None,
    }
}

fn fold_subi(ctx: &mut Context, op: OpId, c: &[Option<AttrId>]) -> Option<Vec<Folded>> {
    if let Some(r) = fold_int(ctx, op, c, i128::checked_sub) {
        return r;
    }
    if ctx.body.operand(op, 0) == ctx.body.operand(op, 1) {
        return int_result(ctx, op, 0);
    }
    (int_of(ctx, c[1]) == Some(0)).then(|| operand(ctx, op, 0)).flatten()
}

fn fold_muli(ctx: &mut Context, op: OpId, c: &[Option<AttrId>]) -> Option<Vec<Folded>> {
    if let Some(r) = fold_int(ctx, op, c, i128::checked_mul) {
        return r;
    }
    match (int_of(ctx, c[0]), int_of(ctx, c[1])) {
        (_, Some(1)) => operand(ctx, op, 0),
        (Some(1), _) => operand(ctx, op, 1),
        (_, Some(0)) | (Some(0), _) => int_result(ctx, op, 0),
        _ => None,
    }
}

fn fold_float(
    ctx: &mut Context,
    op: OpId,
    c: &[Option<AttrId>],
    f: fn(f64, f64) -> f64,
) -> Option<Option<Vec<Folded>>> {
    let (a, b) = (float_of(ctx, c[0])?, float_of(ctx, c[1])?);
    Some(float_result(ctx, op, f(a, b)))
}

fn fold_addf(ctx: &mut Context, op: OpId, c: &[Option<AttrId>]) -> Option<Vec<Folded>> {
    if let Some(r) = fold_float(ctx, op, c, |a, b| a + b) {
        return r;
    }
    // x + -0.0 is x for every x (x + 0.0 is not: -0.0 + 0.0 = 0.0).
    (float_of(ctx, c[1]).is_some_and(|b| b == 0.0 && b.is_sign_negative())).then(|| operand(ctx, op, 0)).flatten()
}

fn fold_subf(ctx: &mut Context, op: OpId, c: &[Option<AttrId>]) -> Option<Vec<Folded>> {
    if let Some(r) = fold_float(ctx, op, c, |a, b| a - b) {
        return r;
    }
    (float_of(ctx, c[1]).is_some_and(|b| b == 0.0 && b.is_sign_positive())).then(|| operand(ctx, op, 0)).flatten()
}

fn fold_mulf(ctx: &mut Context, op: OpId, c: &[Option<AttrId>]) -> Option<Vec<Folded>> {
    if let Some(r) = fold_float(ctx, op, c, |a, b| a * b) {
        return r;
    }
    (float_of(ctx, c[1]) == Some(1.0)).then(|| operand(ctx, op, 0)).flatten()
}

fn fold_divf(ctx: &mut Context, op: OpId, c: &[Option<AttrId>]) -> Option<Vec<Folded>> {
    if let Some(r) = fold_float(ctx, op, c, |a, b| a / b) {
        return r;
    }
    (float_of(ctx, c[1]) == Some(1.0)).then(|| operand(ctx, op, 0)).flatten()
}
