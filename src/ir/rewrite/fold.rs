//! Folding: an op's hook turns it into constants or existing values; constants are materialized by the
//! dialect's constant op, uniqued and hoisted to the entry block of the nearest isolated-from-above ancestor, as
//! MLIR's operation folder keeps them.

use super::rewriter::Rewriter;
use crate::ir::attrs::AttrId;
use crate::ir::body::{BlockId, OpId, ValueDef, ValueId};
use crate::ir::builder::OpState;
use crate::ir::interner::FxHashMap;
use crate::ir::registry::{dialect_of, OpTrait};
use crate::ir::{Context, Interners, Loc, TypeId};

/// What folding an op produced for one result.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Folded {
    /// The result is this constant (materialized by the dialect's constant op).
    Constant(AttrId),
    /// The result is this existing value.
    Value(ValueId),
}

/// An op's folding hook: given the constant value of each operand (if known), the folded results, or `None`.
/// It may intern (attributes, types) but not change IR.
pub type FoldFn = fn(&mut Context, OpId, &[Option<AttrId>]) -> Option<Vec<Folded>>;

/// Describes a constant op for `value` of type `ty` (a dialect hook used by folding).
pub type MaterializeFn = fn(&mut Interners, AttrId, TypeId, Loc) -> Option<OpState>;

/// Constants materialized by folding, one per (block, value, type).
pub(crate) type Constants = FxHashMap<(BlockId, AttrId, TypeId), OpId>;

/// The constant a value holds, if its defining op is `ConstantLike` (its `value` attribute).
pub fn constant_value(ctx: &Context, v: ValueId) -> Option<AttrId> {
    let ValueDef::Result { op, .. } = ctx.body.value_def(v) else { return None };
    if !ctx.has_trait(op, OpTrait::ConstantLike) {
        return None;
    }
    ctx.op_attr(op, "value")
}

/// Folds `op` with its dialect's hook: replaces its results by existing values or new constants.
pub(crate) fn try_fold(rw: &mut Rewriter<'_>, op: OpId, fold: FoldFn, constants: &mut Constants) -> bool {
    let known: Vec<Option<AttrId>> = rw.body.operands(op).map(|v| constant_value(rw, v)).collect();
    let Some(folded) = rw.fold_with(fold, op, &known) else { return false };
    let mut values = Vec::with_capacity(folded.len());
    for (i, f) in folded.into_iter().enumerate() {
        let result = rw.body.result(op, i);
        match f {
            Folded::Value(v) => values.push(v),
            Folded::Constant(attr) => match materialize(rw, op, attr, result, constants) {
                Some(v) => values.push(v),
                None => return false,
            },
        }
    }
    rw.replace_op(op, &values);
    true
}

/// The folding hook of `op`, unless it has none or is itself a constant.
pub(crate) fn fold_hook(ctx: &Context, op: OpId) -> Option<FoldFn> {
    let reg = ctx.registered(op)?;
    if reg.info.has_trait(OpTrait::ConstantLike) {
        return None;
    }
    reg.info.fold
}

/// A constant op for a folded value: an existing one in the constant block of `op`, or a new one created at the
/// start of that block (so that folded constants are shared and hoisted).
fn materialize(
    rw: &mut Rewriter<'_>,
    op: OpId,
    attr: AttrId,
    result: ValueId,
    constants: &mut Constants,
) -> Option<ValueId> {
    let ty = rw.body.value_type(result);
    let block = constant_block(rw, op)?;
    let key = (block, attr, ty);
    if let Some(&c) = constants.get(&key).filter(|&&c| !rw.body.is_erased(c)) {
        return Some(rw.body.result(c, 0));
    }
    let hook = rw.registry.dialect(dialect_of(rw.op_name(op)))?.materialize_constant?;
    let loc = rw.body.op(op).loc;
    let state = hook(rw.interners(), attr, ty, loc)?;
    let point = rw.insertion_point();
    rw.set_insertion_point_to_start(block);
    let constant = rw.create(state);
    rw.set_insertion_point(point);
    constants.insert(key, constant);
    Some(rw.body.result(constant, 0))
}

/// Hoists a constant op to its constant block and merges it with an equal one there; true if it was merged away.
pub(crate) fn unique_constant(rw: &mut Rewriter<'_>, op: OpId, constants: &mut Constants) -> bool {
    let is_constant = rw.has_trait(op, OpTrait::ConstantLike);
    let (Some(value), true, 1) = (rw.op_attr(op, "value"), is_constant, rw.body.num_results(op)) else {
        return false;
    };
    let Some(block) = constant_block(rw, op) else { return false };
    let key = (block, value, rw.body.value_type(rw.body.result(op, 0)));
    match constants.get(&key).copied().filter(|&c| c != op && !rw.body.is_erased(c)) {
        Some(existing) => {
            let v = rw.body.result(existing, 0);
            rw.replace_op(op, &[v]);
            true
        }
        None => {
            if rw.body.op_parent(op) != Some(block) {
                match rw.body.first_op(block) {
                    Some(first) => rw.move_op_before(op, first),
                    None => rw.move_op_to_end(op, block),
                }
            }
            constants.insert(key, op);
            false
        }
    }
}

/// The entry block of the region of the nearest isolated-from-above ancestor of `op` (else `op`'s own block).
fn constant_block(ctx: &Context, op: OpId) -> Option<BlockId> {
    let mut cur = op;
    while let Some(parent) = ctx.body.parent_op(cur) {
        if ctx.has_trait(parent, OpTrait::IsolatedFromAbove) {
            let block = ctx.body.op_parent(cur)?;
            let region = ctx.body.block_parent(block)?;
            return ctx.body.region(region).blocks.first().copied();
        }
        cur = parent;
    }
    ctx.body.op_parent(op)
}

impl Rewriter<'_> {
    /// Runs a folding hook on `op` (hooks intern but do not change IR, so they get the context for a moment).
    fn fold_with(&mut self, fold: FoldFn, op: OpId, known: &[Option<AttrId>]) -> Option<Vec<Folded>> {
        fold(self.context_for_hook(), op, known)
    }
}
