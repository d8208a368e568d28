//! Canonicalization patterns of `arith`: constants move to the right of commutative ops, and
//! `addi(addi(x, c1), c2)` becomes `addi(x, c1 + c2)`.

use super::binary::{int_of, wrap, AddIOp};
use super::constant::ConstantOp;
use crate::ir::op::Op;
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
        let (lhs, rhs) = (rw.body.operand(op, 0), rw.body.operand(op, 1));
        if constant_value(rw, lhs).is_none() || constant_value(rw, rhs).is_some() {
            return false;
        }
        rw.set_operands(op, &[rhs, lhs]);
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
        Some(AddIOp::NAME)
    }

    fn match_and_rewrite(&self, op: OpId, rw: &mut Rewriter<'_>) -> bool {
        let Some(outer) = AddIOp::cast(rw, op) else { return false };
        let Some(c2) = int_of(rw, constant_value(rw, outer.rhs(rw))) else { return false };
        let ValueDef::Result { op: inner, .. } = rw.body.value_def(outer.lhs(rw)) else { return false };
        let Some(inner) = AddIOp::cast(rw, inner) else { return false };
        let Some(c1) = int_of(rw, constant_value(rw, inner.rhs(rw))) else { return false };
        let (x, ty) = (inner.lhs(rw), rw.body.value_type(outer.result(rw)));
        let sum = wrap(rw, op, c1 + c2);
        let value = rw.interners().int_attr(sum, ty);
        let c = ConstantOp::build(rw, ty, value).result(rw);
        let add = AddIOp::build(rw, x, c, ty).result(rw);
        rw.replace_op(op, &[add]);
        true
    }
}
