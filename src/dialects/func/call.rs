//! `func.call`: a direct call of a `func.func` by symbol, with operand and result types that match its signature.

use super::signature;
use crate::ir::print::type_to_string;
use crate::ir::registry::OpTrait;
use crate::ir::symbols::lookup;
use crate::ir::verify::op_error;
use crate::ir::{Arity, AttrKind, AttrSpec, Context, Diagnostic, OpId, OpInfo, Syntax};

/// The registration of `func.call`.
pub const INFO: OpInfo = OpInfo {
    operands: Arity::Any,
    results: Arity::Any,
    attrs: &[AttrSpec { name: "callee", kind: AttrKind::SymbolRef, optional: false, default: None }],
    verify: Some(verify),
    syntax: Syntax::Format("$callee `(` $operands `)` attr-dict `:` functional-type($operands, $results)"),
    ..OpInfo::new("func.call", "calls a function by name")
};

fn nearest_symbol_table(ctx: &Context, op: OpId) -> Option<OpId> {
    let mut cur = ctx.body.parent_op(op)?;
    loop {
        let is_table = ctx.registered(cur).is_some_and(|r| r.info.has_trait(OpTrait::SymbolTable));
        if is_table {
            return Some(cur);
        }
        cur = ctx.body.parent_op(cur)?;
    }
}

fn verify(ctx: &Context, op: OpId) -> Result<(), Diagnostic> {
    let callee = ctx.op_attr(op, "callee").expect("checked by the generic verifier");
    let text = crate::ir::print::attr_to_string(ctx, callee);
    let func = nearest_symbol_table(ctx, op)
        .and_then(|t| lookup(ctx, t, callee))
        .filter(|&f| ctx.op_name(f) == "func.func")
        .ok_or_else(|| op_error(ctx, op, format!("'{}' does not reference a valid function", &text[1..])))?;
    let Some((inputs, results)) = signature(ctx, func) else { return Ok(()) };
    if inputs.len() != ctx.body.num_operands(op) {
        return Err(op_error(ctx, op, "incorrect number of operands for callee"));
    }
    for (i, (v, &t)) in ctx.body.operands(op).zip(&inputs).enumerate() {
        let actual = ctx.body.value_type(v);
        if actual != t {
            let msg = format!(
                "operand type mismatch: expected operand type '{}', but provided '{}' for operand number {i}",
                type_to_string(ctx, t),
                type_to_string(ctx, actual)
            );
            return Err(op_error(ctx, op, msg));
        }
    }
    if results.len() != ctx.body.num_results(op) {
        return Err(op_error(ctx, op, "incorrect number of results for callee"));
    }
    for (i, (v, &t)) in ctx.body.results(op).zip(&results).enumerate() {
        if ctx.body.value_type(v) != t {
            return Err(op_error(ctx, op, format!("result type mismatch at index {i}")));
        }
    }
    Ok(())
}
