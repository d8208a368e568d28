//! Canonicalization patterns of `arith`: constants move to the right of commutative ops, and
//! `addi(addi(x, c1), c2)` becomes `addi(x, c1 + c2)`.

use super::binary::{int_of, wrap};
use crate::ir::builder::OpState;
use crate::ir::rewrite::{constant_value, RewritePattern, Rewriter};
use crate::ir::{OpId, ValueDef};

/// Swaps the operands of a commutative op whose left operand is a constant and right one is not.
pub struct ConstantToRight(&'static str);

/// For `arith.addi`.
pub const CONSTANT_TO_RIGHT_ADDI: ConstantToRight = ConstantToRight("arith.addi");
/// For `arith.muli`.
pub const CONSTANT_TO_RIGHT_MULI: ConstantToRight = ConstantToRight("arith.muli");
/// For `arith.addf`.
pub const CONSTANT_TO_RIGHT_ADDF: ConstantToRight = ConstantToRight("arith.addf");
/// For `arith.mulf`.
pub const CONSTANT_TO_RIGHT_MULF: ConstantToRight = ConstantToRight("arith.mulf");

impl RewritePattern for ConstantToRight {
    fn name(&self) -> &'static str {
        "ConstantToRight"
    }

    fn root(&self) -> Option<&'static str> {
        Some(self.0)
    }

    fn match_and_rewrite(&self, op: OpId, rw: &mut Rewriter<'_>) -> bool {
        let body = &rw.ctx.body;
        let (lhs, rhs) = (body.operand(op, 0), body.operand(op, 1));
        if constant_value(rw.ctx, lhs).is_none() || constant_value(rw.ctx, rhs).is_some() {
            return false;
        }
        rw.ctx.body.set_operands(op, &[rhs, lhs]);
        rw.modified(op);
        true
    }
}

/// `addi(addi(x, c1), c2)` → `addi(x, c1 + c2)`.
pub struct AddAddConstant;

/// The instance registered on `arith.addi`.
pub const ADD_ADD_CONSTANT: AddAddConstant = AddAddConstant;

impl RewritePattern for AddAddConstant {
    fn name(&self) -> &'static str {
        "AddAddConstant"
    }

    fn root(&self) -> Option<&'static str> {
        Some("arith.addi")
    }

    fn match_and_rewrite(&self, op: OpId, rw: &mut Rewriter<'_>) -> bool {
        let ctx = &*rw.ctx;
        let Some(c2) = int_of(ctx, constant_value(ctx, ctx.body.operand(op, 1))) else { return false };
        let ValueDef::Result { op: inner, .. } = ctx.body.value_def(ctx.body.operand(op, 0)) else { return false };
        if ctx.op_name(inner) != "arith.addi" || ctx.body.is_erased(inner) {
            return false;
        }
        let Some(c1) = int_of(ctx, constant_value(ctx, ctx.body.operand(inner, 1))) else { return false };
        let x = ctx.body.operand(inner, 0);
        let ty = ctx.body.value_type(ctx.body.result(op, 0));
        let sum = wrap(ctx, op, c1 + c2);
        let value = rw.ctx.int_attr(sum, ty);
        let mut constant = OpState::new(rw.ctx, "arith.constant", crate::ir::Loc::Unknown).results(&[ty]);
        constant.props.push((rw.ctx.sym("value"), value));
        let constant = rw.create(constant);
        let c = rw.ctx.body.result(constant, 0);
        let add = OpState::new(rw.ctx, "arith.addi", crate::ir::Loc::Unknown).operands(&[x, c]).results(&[ty]);
        let add = rw.create(add);
        let new = rw.ctx.body.result(add, 0);
        rw.replace_op(op, &[new]);
        true
    }
}
