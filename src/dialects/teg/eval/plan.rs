//! A graph or block body decoded once into an execution plan: per op, what it is (its `OpKind`), its operands
//! with their dimension names, its tensor result and type, and which values each step reads last. The
//! evaluator runs plans; a block body's plan serves every index point.

use super::EvalError;
use crate::dialects::teg::ops::{decode, OpKind};
use crate::dialects::teg::tensor_type::{as_tensor, TensorType};
use crate::ir::{Context, OpId, ValueId};
use std::collections::HashMap;

/// One op, decoded.
pub struct Step {
    /// The op (for errors and timing).
    pub op: OpId,
    /// What it is.
    pub kind: OpKind,
    /// Its operands.
    pub operands: Vec<ValueId>,
    /// Each operand's dimension names (empty for a token).
    pub names: Vec<Vec<String>>,
    /// Its tensor result and that result's type, if it has one.
    pub result: Option<(ValueId, TensorType)>,
    /// The result's dimension names.
    pub result_names: Vec<String>,
    /// For a user block, its signature and its body's plan.
    pub block: Option<Box<BlockPlan>>,
}

/// A user block, prepared once: its signature, its body's arguments and plan.
pub struct BlockPlan {
    /// The declared signature.
    pub sig: crate::interfaces::sharding::Signature,
    /// The body's block arguments, one per operand.
    pub args: Vec<ValueId>,
    /// The body.
    pub body: Plan,
    /// Whether the body runs once over all index points at a time (`user_block::vectorizable`).
    pub vectorized: bool,
}

/// The steps in program order, and for each value the step that reads it last.
pub struct Plan {
    /// The ops, decoded.
    pub steps: Vec<Step>,
    /// For each value read, the index of the last step reading it.
    pub last_use: HashMap<ValueId, usize>,
}

/// Decodes `ops` (verified IR) into a plan.
pub fn plan(ctx: &Context, ops: impl Iterator<Item = OpId>) -> Result<Plan, EvalError> {
    let names_of =
        |t: Option<&TensorType>| t.map_or_else(Vec::new, |t| t.names().iter().map(|s| s.to_string()).collect());
    let mut steps = Vec::new();
    let mut last_use = HashMap::new();
    for op in ops {
        let kind = decode(ctx, op).map_err(|message| EvalError { op: Some(op), message })?;
        let operands: Vec<ValueId> = ctx.body.operands(op).collect();
        let names = operands.iter().map(|&v| names_of(as_tensor(ctx, ctx.body.value_type(v)))).collect();
        let result =
            ctx.body.results(op).next().and_then(|v| Some((v, as_tensor(ctx, ctx.body.value_type(v))?.clone())));
        let result_names = names_of(result.as_ref().map(|r| &r.1));
        last_use.extend(operands.iter().map(|&v| (v, steps.len())));
        let block = match &kind {
            OpKind::Block(b) => Some(Box::new(super::user_block::prepare(ctx, op, b.sig.clone())?)),
            _ => None,
        };
        steps.push(Step { op, kind, operands, names, result, result_names, block });
    }
    Ok(Plan { steps, last_use })
}
