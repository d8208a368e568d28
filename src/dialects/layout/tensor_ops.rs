//! Ops that put layouts on tensor values, carried as the tensor type's encoding
//! (`tensor<3x5xf32, #layout.xla<f32[3,5]{1,0:T(2,2)}>>`):
//! - `layout.attach %t : tensor<3x5xf32> to tensor<3x5xf32, #L>`: says where the elements of `%t` sit;
//! - `layout.view %t permute(1, 0) : tensor<...> to tensor<...>`: the same buffer seen through a view; the
//!   verifier applies the view to the source layout and checks the result layout means the same (or says the
//!   view needs a copy);
//! - `layout.copy %t : tensor<..., #A> to tensor<..., #B>`: a relayout copy into a new buffer; a copy to the same
//!   type folds away.

use super::constant::layout_of;
use crate::ir::asm::{AsmItem, CustomParser, Delim, ParsedOp};
use crate::ir::print::OpPrinter;
use crate::ir::rewrite::Folded;
use crate::ir::verify::op_error;
use crate::ir::{
    Arity, Attr, AttrId, AttrKind, AttrSpec, Context, Diagnostic, OpId, OpInfo, OpTrait, Syntax, TypeId, TypeKind,
};
use crate::layout::core_form::GeneralLayout;
use crate::layout::strided::Layout;
use crate::layout::views::{self, ViewError};
use std::fmt;

/// The registration of `layout.attach`.
pub const ATTACH: OpInfo = OpInfo {
    operands: Arity::Exact(1),
    results: Arity::Exact(1),
    traits: &[OpTrait::Pure],
    verify: Some(verify_attach),
    syntax: Syntax::Format("$operands attr-dict `:` type($operands) `to` type($results)"),
    ..OpInfo::new("layout.attach", "gives a tensor value a layout (its type's encoding)")
};

/// The registration of `layout.view`.
pub const VIEW: OpInfo = OpInfo {
    operands: Arity::Exact(1),
    results: Arity::Exact(1),
    traits: &[OpTrait::Pure],
    attrs: &[
        AttrSpec { name: "kind", kind: AttrKind::String, optional: false, default: None },
        AttrSpec { name: "args", kind: AttrKind::Array, optional: false, default: None },
    ],
    verify: Some(verify_view),
    syntax: Syntax::Custom { parse: parse_view, print: print_view },
    ..OpInfo::new("layout.view", "the same buffer through a view: permute, slice, reverse, split, ...")
};

/// The registration of `layout.copy`.
pub const COPY: OpInfo = OpInfo {
    operands: Arity::Exact(1),
    results: Arity::Exact(1),
    traits: &[OpTrait::Pure],
    verify: Some(verify_copy),
    syntax: Syntax::Format("$operands attr-dict `:` type($operands) `to` type($results)"),
    fold: Some(fold_copy),
    ..OpInfo::new("layout.copy", "copies a tensor into a buffer of another layout")
};

/// Shape, element type and layout (if any) of a tensor type.
fn tensor_parts(ctx: &Context, ty: TypeId) -> Option<(&[u64], TypeId, Option<AttrId>)> {
    match ctx.type_kind(ty) {
        TypeKind::Tensor { shape, elem, encoding } => Some((shape, *elem, *encoding)),
        _ => None,
    }
}

/// The core layout of a tensor type's encoding, checked against its shape.
fn tensor_layout(ctx: &Context, op: OpId, ty: TypeId, what: &str) -> Result<GeneralLayout, Diagnostic> {
    let (shape, _, encoding) =
        tensor_parts(ctx, ty).ok_or_else(|| op_error(ctx, op, format!("{what} must be a tensor")))?;
    let attr = encoding
        .and_then(|e| layout_of(ctx, e))
        .ok_or_else(|| op_error(ctx, op, format!("{what} must have a layout encoding")))?;
    let layout = attr.to_core().map_err(|e| op_error(ctx, op, e))?;
    let extents = layout.extents();
    if extents != shape {
        let msg = format!("{what}'s layout is for shape {extents:?}, not the tensor's {shape:?}");
        return Err(op_error(ctx, op, msg));
    }
    Ok(layout)
}

fn operand_and_result(ctx: &Context, op: OpId) -> (TypeId, TypeId) {
    (ctx.body.value_type(ctx.body.operand(op, 0)), ctx.body.value_type(ctx.body.result(op, 0)))
}

fn same_elements(ctx: &Context, op: OpId, a: TypeId, b: TypeId) -> Result<(), Diagnostic> {
    match (tensor_parts(ctx, a), tensor_parts(ctx, b)) {
        (Some((_, ea, _)), Some((_, eb, _))) if ea == eb => Ok(()),
        (Some(_), Some(_)) => Err(op_error(ctx, op, "operand and result element types differ")),
        _ => Err(op_error(ctx, op, "operand and result must be tensors")),
    }
}

fn verify_attach(ctx: &Context, op: OpId) -> Result<(), Diagnostic> {
    let (src, dst) = operand_and_result(ctx, op);
    same_elements(ctx, op, src, dst)?;
    let (src_shape, dst_shape) = (tensor_parts(ctx, src).unwrap().0, tensor_parts(ctx, dst).unwrap().0);
    if src_shape != dst_shape {
        return Err(op_error(ctx, op, "operand and result shapes differ"));
    }
    tensor_layout(ctx, op, dst, "the result").map(|_| ())
}

fn verify_copy(ctx: &Context, op: OpId) -> Result<(), Diagnostic> {
    let (src, dst) = operand_and_result(ctx, op);
    same_elements(ctx, op, src, dst)?;
    let from = tensor_layout(ctx, op, src, "the operand")?;
    let to = tensor_layout(ctx, op, dst, "the result")?;
    if from.extents() != to.extents() {
        return Err(op_error(ctx, op, "operand and result shapes differ"));
    }
    Ok(())
}

fn fold_copy(ctx: &mut Context, op: OpId, _: &[Option<AttrId>]) -> Option<Vec<Folded>> {
    let (src, dst) = operand_and_result(ctx, op);
    (src == dst).then(|| vec![Folded::Value(ctx.body.operand(op, 0))])
}

fn verify_view(ctx: &Context, op: OpId) -> Result<(), Diagnostic> {
    let (src, dst) = operand_and_result(ctx, op);
    same_elements(ctx, op, src, dst)?;
    let from = tensor_layout(ctx, op, src, "the operand")?;
    let to = tensor_layout(ctx, op, dst, "the result")?;
    let kind = ctx.op_attr(op, "kind").and_then(|a| ctx.attr_data(a).as_str().map(str::to_string)).unwrap_or_default();
    let args = int_args(ctx, op)?;
    let needs_copy = |reason| ViewError::NeedsCopy { reason, target: None };
    let staged = !from.normalized().stages.is_empty();
    let viewed = match kind.as_str() {
        "permute" if staged => {
            let perm: Vec<usize> = args.iter().map(|&a| a as usize).collect();
            from.permuted_across_stages(&perm).map_err(|e| ViewError::Invalid(e.0))
        }
        _ => from.view(|l| apply_view(l, &kind, &args), needs_copy),
    };
    let viewed = viewed.map_err(|e| match e {
        ViewError::Invalid(m) => op_error(ctx, op, format!("{kind} {args:?}: {m}")),
        ViewError::NeedsCopy { reason, .. } => {
            op_error(ctx, op, format!("{kind} {args:?} is not a view of the operand's layout (needs a copy): {reason}"))
        }
    })?;
    match crate::layout::core_form::same_placement_general(&viewed, &to) {
        Ok(true) => Ok(()),
        Ok(false) => {
            Err(op_error(ctx, op, format!("the result layout is not {kind} {args:?} of the operand's layout")))
        }
        Err(e) => Err(op_error(ctx, op, e)),
    }
}

/// `%t kind(a, b, ...) attr-dict : type to type`.
fn parse_view<'s>(p: &mut CustomParser<'_, 's>) -> Result<ParsedOp<'s>, Diagnostic> {
    let mut op = ParsedOp::default();
    let (value, loc) = p.value()?;
    let kind = match p.next_item() {
        Some(AsmItem::Keyword(k, _)) => k,
        _ => return Err(p.expected("a view kind (permute, slice, ...)")),
    };
    let (items, _) = p.group(Delim::Paren)?;
    let mut args = Vec::new();
    for item in items {
        match item {
            AsmItem::Attr(a, _) => args.push(a),
            AsmItem::Punct(",", _) => {}
            other => return Err(Diagnostic::error(other.loc(), "expected integer view arguments")),
        }
    }
    p.attr_dict(&mut op);
    p.expect_punct(":")?;
    let from = p.ty()?;
    p.expect_keyword("to")?;
    let to = p.ty()?;
    p.expect_end()?;
    let ctx = p.ctx();
    let kind_attr = ctx.attr(Attr::String(kind.into()));
    let args_attr = ctx.attr(Attr::Array(args.into()));
    op.props.push((ctx.sym("kind"), kind_attr));
    op.props.push((ctx.sym("args"), args_attr));
    op.operands.push((value, loc, Some(from)));
    op.result_types.push(to);
    Ok(op)
}

fn print_view(p: &mut OpPrinter<'_, '_>, op: OpId) -> fmt::Result {
    let ctx = p.ctx();
    let kind = ctx.op_attr(op, "kind").and_then(|a| ctx.attr_data(a).as_str()).ok_or(fmt::Error)?;
    if !crate::ir::print::is_bare_identifier(kind) {
        return Err(fmt::Error);
    }
    let Some(Attr::Array(args)) = ctx.op_attr(op, "args").map(|a| ctx.attr_data(a)) else { return Err(fmt::Error) };
    let i64_ty = ctx.types.lookup(&TypeKind::Int(64));
    let plain: Vec<String> = args
        .iter()
        .map(|&a| match ctx.attr_data(a) {
            Attr::Int { value, ty } if Some(*ty) == i64_ty => Ok(value.to_string()),
            _ => Err(fmt::Error),
        })
        .collect::<Result<_, _>>()?;
    let (src, dst) = operand_and_result(ctx, op);
    p.write(" ");
    p.value(ctx.body.operand(op, 0))?;
    p.write(&format!(" {kind}({})", plain.join(", ")));
    p.attr_dict(op, &["kind", "args"])?;
    p.write(" : ");
    p.ty(src)?;
    p.write(" to ");
    p.ty(dst)
}

fn int_args(ctx: &Context, op: OpId) -> Result<Vec<u64>, Diagnostic> {
    let bad = || op_error(ctx, op, "args must be an array of non-negative integers");
    let Some(Attr::Array(items)) = ctx.op_attr(op, "args").map(|a| ctx.attr_data(a)) else { return Err(bad()) };
    items.iter().map(|&a| ctx.attr_data(a).as_int().and_then(|v| u64::try_from(v).ok()).ok_or_else(bad)).collect()
}

/// Applies the view `kind` with `args` (see the op's documentation in docs/dialect-layout.md).
fn apply_view(l: &Layout, kind: &str, args: &[u64]) -> Result<Layout, ViewError> {
    let u = |i: usize| args[i] as usize;
    let arity = |n: usize| {
        if args.len() == n {
            Ok(())
        } else {
            Err(ViewError::Invalid(format!("takes {n} arguments, not {}", args.len())))
        }
    };
    match kind {
        "permute" => views::permute(l, &args.iter().map(|&a| a as usize).collect::<Vec<_>>()),
        "slice" => arity(4).and_then(|_| views::slice(l, u(0), args[1], args[2], args[3])),
        "tile" => arity(3).and_then(|_| views::tile(l, u(0), args[1], args[2])),
        "reverse" => arity(1).and_then(|_| views::reverse(l, u(0))),
        "squeeze" => arity(1).and_then(|_| views::squeeze(l, u(0))),
        "unsqueeze" => arity(1).and_then(|_| views::unsqueeze(l, u(0))),
        "broadcast" => arity(2).and_then(|_| views::broadcast(l, u(0), args[1])),
        "split" if !args.is_empty() => views::split(l, u(0), &args[1..]),
        "merge" => arity(1).and_then(|_| views::merge(l, u(0))),
        _ => Err(ViewError::Invalid(format!("unknown view '{kind}'"))),
    }
}
