//! Partial results kept across linear ops (the pattern `teg-keep-partial` applies; Shardy's `unreduced`,
//! DTensor's `Partial`): an add, a sub or a neg of values that `teg.reshard`s assemble moves after the reshard, so
//! each device applies it to the pieces it holds, and one reshard moves the result instead of one per operand.
//!
//! `add(reshard(a₁…aₙ), reshard(b₁…bₙ))` → `reshard(add(a₁, b₁) … add(aₙ, bₙ))` when both reshards take pieces at
//! the same offsets to the same box with the same combine (none, or `sum`: Σaᵢ + Σbᵢ = Σ(aᵢ + bᵢ)), on the same
//! devices, each pair of pieces of one type and computed on the same devices. `neg(reshard(a…))` →
//! `reshard(neg(a)…)` likewise. Each new piece op runs where its pieces are (`teg.devices`). Reshards of two
//! consumers over the same pieces give identical piece ops, which `cse` merges. Floats may differ in their last
//! bits (the sum is reassociated); integers are exact.

use super::ops::{decode, Binary, Cell, Monoid, OpKind, Reshard, Unary};
use super::patterns::producer;
use super::transfers::DEVICES_ATTR;
use crate::ir::builder::OpState;
use crate::ir::rewrite::{RewritePattern, Rewriter};
use crate::ir::{OpId, ValueId};

/// A linear op (`root`) of reshard results → the reshard of the op on the pieces.
pub struct CombineLater {
    root: &'static str,
}

/// The pattern for each linear op it moves: add, sub, neg.
pub static COMBINE_LATER: [&dyn RewritePattern; 3] =
    [&CombineLater { root: "teg.add" }, &CombineLater { root: "teg.sub" }, &CombineLater { root: "teg.neg" }];

impl RewritePattern for CombineLater {
    fn name(&self) -> &'static str {
        "CombineLater"
    }

    fn root(&self) -> Option<&'static str> {
        Some(self.root)
    }

    fn match_and_rewrite(&self, op: OpId, rw: &mut Rewriter<'_>) -> bool {
        if !matches!(
            decode(rw, op),
            Ok(OpKind::Cell(Cell::Binary(Binary::Add | Binary::Sub) | Cell::Unary(Unary::Neg)))
        ) {
            return false;
        }
        let operands: Vec<ValueId> = rw.body.operands(op).collect();
        let Some(reshards) = operands.iter().map(|&v| linear_reshard(rw, v)).collect::<Option<Vec<OpId>>>() else {
            return false;
        };
        if !reshards.iter().all(|&r| placed(rw, r)) || !reshards.windows(2).all(|w| alike(rw, w[0], w[1])) {
            return false;
        }
        let first = reshards[0];
        let pieces = rw.body.operands(first).count();
        let mut new_pieces = Vec::with_capacity(pieces);
        for i in 0..pieces {
            let ins: Vec<ValueId> = reshards.iter().map(|&r| rw.body.operand(r, i)).collect();
            new_pieces.push(piece_op(rw, op, &ins));
        }
        let result = rw.body.results(op).next().expect("one result");
        let ty = rw.body.value_type(result);
        let data = rw.body.op(first);
        let (loc, props, attrs) = (rw.body.op(op).loc, data.props, data.attrs);
        let mut state = OpState::new(rw.interners(), "teg.reshard", loc).operands(&new_pieces).results(&[ty]);
        state.props = rw.dict_entries(props).to_vec();
        state.attrs = rw.dict_entries(attrs).to_vec();
        let value = rw.create_value(state);
        rw.replace_op(op, &[value]);
        true
    }
}

/// The reshard defining `v`, when its pieces may be combined after a linear op: no combine, or `sum`.
fn linear_reshard(rw: &Rewriter<'_>, v: ValueId) -> Option<OpId> {
    let op = producer(rw, v)?;
    match decode(rw, op) {
        Ok(OpKind::Reshard(Reshard { combine: None | Some(Monoid::Sum), .. })) => Some(op),
        _ => None,
    }
}

/// The `teg.devices` of the op computing `v`, if it says.
fn devices(rw: &Rewriter<'_>, v: ValueId) -> Option<crate::ir::AttrId> {
    producer(rw, v).and_then(|p| rw.op_attr(p, DEVICES_ATTR))
}

/// Whether every piece of reshard `r` is computed on devices the IR names.
fn placed(rw: &Rewriter<'_>, r: OpId) -> bool {
    rw.body.operands(r).all(|v| devices(rw, v).is_some())
}

/// Whether two reshards place pieces alike: same offsets, box, combine, devices and result type, and pairwise
/// pieces of one type computed on the same devices.
fn alike(rw: &Rewriter<'_>, a: OpId, b: OpId) -> bool {
    if rw.body.op(a).props != rw.body.op(b).props || rw.op_attr(a, DEVICES_ATTR) != rw.op_attr(b, DEVICES_ATTR) {
        return false;
    }
    let ty = |op: OpId| rw.body.value_type(rw.body.results(op).next().expect("one result"));
    if ty(a) != ty(b) || rw.body.operands(a).count() != rw.body.operands(b).count() {
        return false;
    }
    rw.body
        .operands(a)
        .zip(rw.body.operands(b))
        .all(|(x, y)| rw.body.value_type(x) == rw.body.value_type(y) && devices(rw, x) == devices(rw, y))
}

/// `op` (an add, sub or neg) applied to one piece of each operand, on the pieces' devices.
fn piece_op(rw: &mut Rewriter<'_>, op: OpId, ins: &[ValueId]) -> ValueId {
    let ty = rw.body.value_type(ins[0]);
    let devices = devices(rw, ins[0]).expect("checked");
    let (loc, name) = (rw.body.op(op).loc, rw.op_name(op).to_string());
    let mut state = OpState::new(rw.interners(), &name, loc).operands(ins).results(&[ty]);
    let key = rw.interners().sym(DEVICES_ATTR);
    state.attrs = vec![(key, devices)];
    rw.create_value(state)
}
