//! `InferResultTypes`: the core interface of ops whose result types follow from their operands and attributes
//! (MLIR's `InferTypeOpInterface`). The pretty form of such an op may leave its result types out, in a format's
//! optional group anchored on `type($results)`: the parser then asks the op, and the printer leaves them out
//! whenever they are what the op would infer. The generic form always has them.

use super::{Context, OpId, TypeId};

/// An op's result-type inference, attached to the op by its dialect.
pub trait InferResultTypes: Sync {
    /// The result types `op` must have given its operands and attributes (its results may hold placeholders),
    /// or why they do not follow.
    fn infer(&self, ctx: &mut Context, op: OpId) -> Result<Vec<TypeId>, String>;

    /// Whether `op`'s result types are the ones it infers (so that the printer may leave them out).
    fn matches(&self, ctx: &Context, op: OpId) -> bool;
}

/// Whether the pretty form of `op` may leave out its result types.
pub fn infers(ctx: &Context, op: OpId) -> bool {
    ctx.op_interface::<dyn InferResultTypes>(op).is_some_and(|i| i.matches(ctx, op))
}

/// Whether ops named `name` infer their result types.
pub fn has_inference(ctx: &Context, name: &str) -> bool {
    let registry = &ctx.registry;
    registry.op_index(name).is_some_and(|i| registry.interfaces().op::<dyn InferResultTypes>(i).is_some())
}

/// Sets the result types of `op` (created with placeholders) to the ones it infers.
pub fn infer_results(ctx: &mut Context, op: OpId) -> Result<(), String> {
    let imp = ctx.op_interface::<dyn InferResultTypes>(op).ok_or("the op does not infer its result types")?;
    let types = imp.infer(ctx, op)?;
    let results: Vec<_> = ctx.body.results(op).collect();
    if types.len() != results.len() {
        return Err(format!("the op infers {} result types for its {} results", types.len(), results.len()));
    }
    for (v, t) in results.into_iter().zip(types) {
        ctx.body.set_value_type(v, t);
    }
    Ok(())
}
