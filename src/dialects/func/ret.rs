//! `func.return`: ends a function body, returning values that match the function's result types.

use super::signature;
use crate::ir::print::type_to_string;
use crate::ir::symbols::symbol_name;
use crate::ir::verify::op_error;
use crate::ir::{Arity, Context, Diagnostic, OpId, OpInfo, OpTrait, Syntax};

/// The registration of `func.return`.
pub const INFO: OpInfo = OpInfo {
    operands: Arity::Any,
    traits: &[OpTrait::Terminator, OpTrait::ReturnLike, OpTrait::Pure, OpTrait::HasParent(&["func.func"])],
    verify: Some(verify),
    syntax: Syntax::Format("attr-dict ($operands^ `:` type($operands))?"),
    ..OpInfo::new("func.return", "returns from a function")
};

fn verify(ctx: &Context, op: OpId) -> Result<(), Diagnostic> {
    let func = ctx.body.parent_op(op).ok_or_else(|| op_error(ctx, op, "expects parent op 'func.func'"))?;
    let Some((_, results)) = signature(ctx, func) else { return Ok(()) };
    let name = symbol_name(ctx, func).unwrap_or("");
    let n = ctx.body.num_operands(op);
    if n != results.len() {
        let msg = format!("has {n} operands, but enclosing function (@{name}) returns {}", results.len());
        return Err(op_error(ctx, op, msg));
    }
    for (i, (v, &expected)) in ctx.body.operands(op).zip(&results).enumerate() {
        let actual = ctx.body.value_type(v);
        if actual != expected {
            let msg = format!(
                "type of return operand {i} ('{}') doesn't match function result type ('{}') in function @{name}",
                type_to_string(ctx, actual),
                type_to_string(ctx, expected)
            );
            return Err(op_error(ctx, op, msg));
        }
    }
    Ok(())
}
