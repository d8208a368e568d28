//! The algebra as ops on `!layout.layout` values: `layout.compose`, `layout.complement`, `layout.coalesce`,
//! `layout.right_inverse`, `layout.left_inverse`, `layout.logical_divide`, `layout.logical_product`. Each folds
//! to a `layout.constant` when its operands are constants (so `canonicalize` evaluates layout expressions), and
//! its verifier rejects constant operands the operation is not defined on, saying why. `layout.convert` changes
//! the notation.
//! Pretty form: `%c = layout.compose %a, %b`, `%m = layout.complement %a {bound = 24}`.

use super::attr::{CuteAttr, LayoutAttr};
use super::constant::layout_of;
use super::layout_type::is_layout_type;
use crate::ir::dialect_data::{DialectData, DialectValue};
use crate::ir::rewrite::Folded;
use crate::ir::verify::op_error;
use crate::ir::{Arity, Attr, AttrId, AttrKind, AttrSpec, Context, Diagnostic, OpId, OpInfo, OpTrait, Syntax};
use crate::layout::notation::cute::CuteLayout;
use crate::layout::notation::cute_algebra as algebra;
use crate::layout::strided::{fail, LayoutError};
use std::sync::Arc;

const TRAITS: &[OpTrait] = &[OpTrait::Pure, OpTrait::SameOperandsAndResultType];

const fn op(name: &'static str, summary: &'static str, operands: u32, attrs: &'static [AttrSpec]) -> OpInfo {
    OpInfo {
        operands: Arity::Exact(operands),
        results: Arity::Exact(1),
        traits: TRAITS,
        attrs,
        verify: Some(verify),
        syntax: Syntax::Format("$operands attr-dict"),
        fold: Some(fold),
        ..OpInfo::new(name, summary)
    }
}

const BOUND: &[AttrSpec] = &[AttrSpec { name: "bound", kind: AttrKind::Int, optional: true, default: None }];

/// `layout.convert %l to "ck"`: the same layout in another notation (`cute`, `ck`, `furiosa` or `xla`), where
/// that notation can express it; folds on constants.
pub const CONVERT: OpInfo = OpInfo {
    operands: Arity::Exact(1),
    results: Arity::Exact(1),
    traits: TRAITS,
    attrs: &[AttrSpec { name: "to", kind: AttrKind::String, optional: false, default: None }],
    verify: Some(verify),
    syntax: Syntax::Format("$operands `to` $to attr-dict"),
    fold: Some(fold),
    ..OpInfo::new("layout.convert", "the same layout in another notation")
};

/// Every algebra op.
pub const ALL: [OpInfo; 7] = [
    op("layout.compose", "CuTe composition: R(i) = A(B(i))", 2, &[]),
    op("layout.complement", "CuTe complement of A within `bound` (default: its cosize)", 1, BOUND),
    op("layout.coalesce", "the same function with the fewest modes", 1, &[]),
    op("layout.right_inverse", "the largest R with L(R(i)) = i", 1, &[]),
    op("layout.left_inverse", "R with R(L(i)) = i", 1, &[]),
    op("layout.logical_divide", "A split into tiles of B and their arrangement", 2, &[]),
    op("layout.logical_product", "A repeated in the pattern of B", 2, &[]),
];

/// The CuTe layout a layout attribute means, if CuTe can express it (the algebra is CuTe's).
fn cute_of(l: &LayoutAttr) -> Result<CuteLayout, LayoutError> {
    match l {
        LayoutAttr::Cute(c) if c.swizzle.is_some() => fail(format!("the swizzled layout {c} is not in the algebra")),
        LayoutAttr::Cute(c) if c.offset != 0 => fail(format!("the offset layout {c} is not in the algebra")),
        LayoutAttr::Cute(c) => c.layout(),
        other => CuteLayout::from_repr(&other.to_repr()?),
    }
}

/// Evaluates the op on constant operands.
fn evaluate(ctx: &Context, op: OpId, inputs: &[&LayoutAttr]) -> Result<LayoutAttr, LayoutError> {
    if ctx.op_name(op) == "layout.convert" {
        let to = ctx.op_attr(op, "to").and_then(|a| ctx.attr_data(a).as_str()).unwrap_or_default();
        return convert(inputs[0], to);
    }
    algebra(ctx, op, inputs).map(|l| LayoutAttr::Cute(CuteAttr::plain(l)))
}

/// The layout in notation `to`, checked to place every element where `l` does (the buffer size follows the
/// target notation's own rule: CuTe's ends after the last element, CK's follows from its strides).
fn convert(l: &LayoutAttr, to: &str) -> Result<LayoutAttr, LayoutError> {
    let repr = l.to_repr()?;
    let out = convert_unchecked(l, &repr, to)?;
    if !crate::layout::canonical::same_placement(&out.to_repr()?, &repr)? {
        return fail(format!("the {to} form of {} would place elements elsewhere", DialectValue::name(l)));
    }
    Ok(out)
}

fn convert_unchecked(
    l: &LayoutAttr,
    repr: &crate::layout::strided::Layout,
    to: &str,
) -> Result<LayoutAttr, LayoutError> {
    match to {
        _ if matches!(
            (l, to),
            (LayoutAttr::Cute(_), "cute")
                | (LayoutAttr::Ck(_), "ck")
                | (LayoutAttr::Furiosa(_), "furiosa")
                | (LayoutAttr::Xla(_), "xla")
        ) =>
        {
            Ok(l.clone())
        }
        "furiosa" => Ok(LayoutAttr::Furiosa(crate::layout::notation::furiosa::FuriosaLayout::from_repr(repr)?)),
        "cute" => {
            let at_zero = crate::layout::strided::Layout { base: 0, ..repr.clone() };
            let repr = &repr;
            let mut c = CuteAttr::plain(CuteLayout::from_repr(&at_zero)?);
            c.offset = repr.base;
            Ok(LayoutAttr::Cute(c))
        }
        "ck" => Ok(LayoutAttr::Ck(crate::layout::notation::ck::CkLayout::from_repr(repr)?)),
        "xla" => Ok(LayoutAttr::Xla(crate::layout::notation::xla::XlaLayout::from_repr(repr)?)),
        other => fail(format!("cannot convert to '{other}' (cute, ck, furiosa and xla can be targets)")),
    }
}

fn algebra(ctx: &Context, op: OpId, inputs: &[&LayoutAttr]) -> Result<CuteLayout, LayoutError> {
    let a = cute_of(inputs[0])?;
    let b = || cute_of(inputs[1]);
    match ctx.op_name(op) {
        "layout.compose" => algebra::composition(&a, &b()?),
        "layout.complement" => {
            let bound = match ctx.op_attr(op, "bound").and_then(|v| ctx.attr_data(v).as_int()) {
                Some(v) => i64::try_from(v).map_err(|_| LayoutError(format!("bound {v} out of range")))?,
                None => a.cosize(),
            };
            algebra::complement(&a, bound)
        }
        "layout.coalesce" => Ok(algebra::coalesce(&a)),
        "layout.right_inverse" => Ok(algebra::right_inverse(&a)),
        "layout.left_inverse" => algebra::left_inverse(&a),
        "layout.logical_divide" => algebra::logical_divide(&a, &b()?),
        "layout.logical_product" => algebra::logical_product(&a, &b()?),
        other => fail(format!("{other} is not an algebra op")),
    }
}

/// The constant layouts of `op`'s operands, if every operand is a `layout.constant`.
fn constant_operands(ctx: &Context, op: OpId) -> Option<Vec<&LayoutAttr>> {
    ctx.body
        .operands(op)
        .map(|v| match ctx.body.value_def(v) {
            crate::ir::ValueDef::Result { op: def, .. } if ctx.op_name(def) == "layout.constant" => {
                ctx.op_attr(def, "value").and_then(|a| layout_of(ctx, a))
            }
            _ => None,
        })
        .collect()
}

fn verify(ctx: &Context, op: OpId) -> Result<(), Diagnostic> {
    let ty = ctx.body.value_type(ctx.body.result(op, 0));
    if !is_layout_type(ctx, ty) {
        return Err(op_error(ctx, op, "operands and result must be !layout.layout"));
    }
    if let Some(inputs) = constant_operands(ctx, op) {
        evaluate(ctx, op, &inputs).map_err(|e| op_error(ctx, op, e))?;
    }
    Ok(())
}

fn fold(ctx: &mut Context, op: OpId, operands: &[Option<AttrId>]) -> Option<Vec<Folded>> {
    let inputs: Vec<&LayoutAttr> = operands.iter().map(|a| layout_of(ctx, (*a)?)).collect::<Option<_>>()?;
    let attr = evaluate(ctx, op, &inputs).ok()?;
    Some(vec![Folded::Constant(ctx.attr(Attr::Dialect(DialectData(Arc::new(attr)))))])
}
