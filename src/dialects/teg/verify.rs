//! The TEG verifier: per op, the decoded kind must give the declared result type (dtypes, named dimensions,
//! extents) and a block operator's signature must correspond to its tensors; per graph, sources and sinks have
//! unique names and a sink's token goes only to sequence points.

use super::block_op::{check_body, check_boxes};
use super::ops::{decode, Io, OpKind};
use super::signature;
use super::tensor_type::{as_tensor, is_token, TensorType};
use crate::interfaces::layout::layout_of;
use crate::ir::verify::op_error;
use crate::ir::{Attr, Context, Diagnostic, OpId};
use crate::zspace::ZRange;
use indexmap::IndexMap;

/// Verifies one TEG op inside a graph.
pub fn verify_op(ctx: &Context, op: OpId) -> Result<(), Diagnostic> {
    known_attrs(ctx, op).map_err(|e| op_error(ctx, op, e))?;
    let kind = decode(ctx, op).map_err(|e| op_error(ctx, op, e))?;
    let body = &ctx.body;
    let operand_types: Vec<_> = body.operands(op).map(|v| body.value_type(v)).collect();
    match kind {
        OpKind::Io(Io::SequencePoint) => {
            if let Some(i) = operand_types.iter().position(|&t| !is_token(ctx, t)) {
                return Err(op_error(ctx, op, format!("operand #{i} must be a !teg.token (from a sink)")));
            }
            return Ok(());
        }
        OpKind::Io(Io::Yield) => return Ok(()),
        OpKind::Io(Io::Sink { .. }) => {
            let result = body.value_type(body.result(op, 0));
            if as_tensor(ctx, operand_types[0]).is_none() || !is_token(ctx, result) {
                return Err(op_error(ctx, op, "takes a !teg.tensor and gives a !teg.token"));
            }
            return Ok(());
        }
        _ => {}
    }
    let mut operands = Vec::with_capacity(operand_types.len());
    for (i, &t) in operand_types.iter().enumerate() {
        operands
            .push(as_tensor(ctx, t).ok_or_else(|| op_error(ctx, op, format!("operand #{i} must be a !teg.tensor")))?);
    }
    let declared = as_tensor(ctx, body.value_type(body.result(op, 0)))
        .ok_or_else(|| op_error(ctx, op, "the result must be a !teg.tensor"))?;
    let family = kind.family();
    let expected = family.result_type(&operands, declared).map_err(|e| op_error(ctx, op, e))?;
    if expected != *declared {
        let msg = format!("result type is !teg.tensor<{declared}> but the operands give !teg.tensor<{expected}>");
        return Err(op_error(ctx, op, msg));
    }
    // The parser's rule, for types a pass built: what a pass writes must read back.
    if !crate::array::fits(&declared.shape(), declared.dtype.size()) {
        let msg = format!("the result !teg.tensor<{declared}> takes more than 2^63-1 bytes");
        return Err(op_error(ctx, op, msg));
    }
    if let OpKind::Io(Io::Source { .. }) = kind {
        check_source_attrs(ctx, op, declared).map_err(|e| op_error(ctx, op, e))?;
    }
    if let OpKind::Block(block) = &kind {
        let tensors: Vec<&TensorType> = operands.iter().copied().chain([declared]).collect();
        check_boxes(&block.sig, &tensors).map_err(|e| op_error(ctx, op, e))?;
    }
    if let Some(sig) = family.signature(&operands, declared) {
        check_signature(&kind, &sig, &operands, declared).map_err(|e| op_error(ctx, op, e))?;
    }
    if let OpKind::Block(block) = &kind {
        check_body(ctx, op, &block.sig, &operands, declared).map_err(|e| op_error(ctx, op, e))?;
    }
    Ok(())
}

/// Every attribute of a teg op is one it declares, or a discardable one with a dialect prefix (`teg.note`), as
/// MLIR requires: a misspelled or unsupported attribute is an error, never silently ignored.
fn known_attrs(ctx: &Context, op: OpId) -> Result<(), String> {
    let declared = ctx.registered(op).map_or(&[][..], |r| r.info.attrs);
    let data = ctx.body.op(op);
    let names = ctx.dict_entries(data.attrs).iter().chain(ctx.dict_entries(data.props)).map(|e| ctx.str(e.0));
    for name in names {
        if !name.contains('.') && !declared.iter().any(|a| a.name == name) {
            let known: Vec<&str> = declared.iter().map(|a| a.name).collect();
            let known = if known.is_empty() { "none".to_string() } else { known.join(", ") };
            return Err(format!("has no attribute '{name}' (it knows: {known}; a discardable attribute needs a dialect prefix, as 'teg.{name}')"));
        }
    }
    Ok(())
}

/// A source's `layout` must be a layout attribute placing as many elements as the tensor has, and its
/// `placement` a device name (a string).
fn check_source_attrs(ctx: &Context, op: OpId, t: &TensorType) -> Result<(), String> {
    if let Some(layout) = ctx.op_attr(op, "layout") {
        let elements = layout_of(ctx, layout).map(|l| l.element_count().map(u128::from).map_err(|e| e.0));
        match elements {
            None => return Err("the layout must be a layout attribute (#layout.cute<...>, ...)".into()),
            Some(Err(e)) => return Err(format!("the layout is not valid: {e}")),
            Some(Ok(n)) if n != t.size() as u128 => {
                return Err(format!("the layout places {n} elements, but the tensor {t} has {}", t.size()))
            }
            Some(Ok(_)) => {}
        }
    }
    match ctx.op_attr(op, "placement").map(|p| ctx.attr_data(p)) {
        None | Some(Attr::String(_)) => Ok(()),
        Some(_) => Err("the placement must be a device name (a string, such as \"npu0\")".into()),
    }
}

/// Checks a block operator's signature against its tensors (a convolution's input is its padded range).
fn check_signature(
    kind: &OpKind,
    sig: &signature::Signature,
    operands: &[&TensorType],
    result: &TensorType,
) -> Result<(), String> {
    let mut inputs: Vec<(ZRange, bool)> = operands.iter().map(|t| (ZRange::of_shape(&t.shape()), false)).collect();
    if let OpKind::Conv2d(conv) = kind {
        inputs[0] = (conv.padded_input(operands[0])?, true);
    }
    signature::check(sig, &inputs, &[ZRange::of_shape(&result.shape())])
}

/// Verifies a graph: only TEG ops, unique source and sink names, sink tokens used only by sequence points.
pub fn verify_graph(ctx: &Context, graph: OpId) -> Result<(), Diagnostic> {
    known_attrs(ctx, graph).map_err(|e| op_error(ctx, graph, e))?;
    let mut names: IndexMap<(bool, String), OpId> = IndexMap::new();
    let region = ctx.body.regions(graph)[0];
    for &block in &ctx.body.region(region).blocks {
        for op in ctx.body.block_ops(block) {
            if !ctx.op_name(op).starts_with("teg.") {
                return Err(op_error(ctx, op, "a teg.graph holds only TEG ops"));
            }
            if ctx.op_name(op) == "teg.graph" {
                return Err(op_error(ctx, op, "a teg.graph cannot hold another teg.graph"));
            }
            let (is_sink, name) = match decode(ctx, op) {
                Ok(OpKind::Io(Io::Source { name })) => (false, name),
                Ok(OpKind::Io(Io::Sink { name })) => {
                    check_sink_uses(ctx, op)?;
                    (true, name)
                }
                _ => continue,
            };
            if names.contains_key(&(is_sink, name.clone())) {
                let what = if is_sink { "sink" } else { "source" };
                return Err(op_error(ctx, op, format!("{what} name '{name}' is already used by an earlier {what}")));
            }
            names.insert((is_sink, name), op);
        }
    }
    Ok(())
}

fn check_sink_uses(ctx: &Context, sink: OpId) -> Result<(), Diagnostic> {
    let token = ctx.body.result(sink, 0);
    for (user, _) in ctx.body.uses(token) {
        if ctx.op_name(user) != "teg.sequence_point" {
            let msg = format!("a sink's token may be used only by teg.sequence_point, not by {}", ctx.op_name(user));
            return Err(op_error(ctx, sink, msg));
        }
    }
    Ok(())
}
