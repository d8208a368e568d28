//! The `func` dialect: functions (`func.func`), returns (`func.return`) and direct calls (`func.call`).

mod call;
pub mod conversion;
mod function;
mod ret;

use crate::ir::{Context, DialectInfo, OpId, Registry};

/// Registers the `func` dialect.
pub fn register(registry: &mut Registry) {
    registry.register_dialect(DialectInfo {
        name: "func",
        summary: "functions, calls and returns",
        parse_type: None,
        parse_attr: None,
        materialize_constant: None,
    });
    registry.register_op(function::INFO);
    registry.register_op(ret::INFO);
    registry.register_op(call::INFO);
}

/// The `(inputs, results)` of a `func.func`'s `function_type`, if it has a valid one.
pub fn signature(ctx: &Context, func: OpId) -> Option<(Vec<crate::ir::TypeId>, Vec<crate::ir::TypeId>)> {
    let ty = ctx.attr_data(ctx.op_attr(func, "function_type")?).as_type()?;
    match ctx.type_kind(ty) {
        crate::ir::TypeKind::Function { inputs, results } => Some((inputs.to_vec(), results.to_vec())),
        _ => None,
    }
}
