//! Canonicalization patterns of TEG views (run by `canonicalize`), each keeping every value: a slice of a concat
//! that takes cells of one part only reads that part; a slice of a slice along the same dimension is one slice; a
//! slice of a whole dimension is its operand; a permute of a permute is one permute (or nothing). After
//! `teg-shard`, they shorten the view chains the split leaves; `tests/teg_patterns.rs` checks values through the
//! reference evaluator on random chains.

use super::ops::{decode, OpKind, View};
use super::tensor_type::as_tensor;
use crate::ir::builder::OpState;
use crate::ir::rewrite::{RewritePattern, Rewriter};
use crate::ir::{OpId, ValueDef, ValueId};

/// `slice(concat(a, b, ...))` taking cells of one part → a slice of that part (or the part itself).
pub struct SliceOfConcat;
/// `slice(slice(x))` along one dimension → one slice of `x`.
pub struct SliceOfSlice;
/// A slice of every cell of its dimension, in order → its operand.
pub struct WholeSlice;
/// `permute(permute(x))` → one permute of `x`, or `x` when the order comes back.
pub struct PermuteOfPermute;

/// The patterns registered on `teg.slice`.
pub const SLICE_PATTERNS: &[&dyn RewritePattern] = &[&WholeSlice, &SliceOfSlice, &SliceOfConcat];
/// The patterns registered on `teg.permute`.
pub const PERMUTE_PATTERNS: &[&dyn RewritePattern] = &[&PermuteOfPermute];

/// A forward slice: its dimension, first index, step and count.
struct Forward {
    dim: String,
    start: i64,
    step: i64,
    count: i64,
}

/// `op` as a forward slice (positive step), with its operand.
fn forward(rw: &Rewriter<'_>, op: OpId) -> Option<(Forward, ValueId)> {
    let Ok(OpKind::View(View::Slice { dim, start, stop, step })) = decode(rw, op) else { return None };
    if step <= 0 || stop < start {
        return None;
    }
    let count = (stop.checked_sub(start)? as u64).div_ceil(step as u64) as i64;
    Some((Forward { dim, start, step, count }, rw.body.operand(op, 0)))
}

/// The op defining `v`, if any.
pub(super) fn producer(rw: &Rewriter<'_>, v: ValueId) -> Option<OpId> {
    match rw.body.value_def(v) {
        ValueDef::Result { op, .. } => Some(op),
        _ => None,
    }
}

/// Replaces `op` by a forward slice of `x` (same result type).
fn replace_by_slice(rw: &mut Rewriter<'_>, op: OpId, x: ValueId, s: &Forward) {
    let ty = rw.body.value_type(rw.body.results(op).next().expect("one result"));
    let loc = rw.body.op(op).loc;
    let stop = s.start + (s.count - 1) * s.step + 1; // Within the operand: the slice it replaces was valid.
    let i64t = rw.interners().int_type(64);
    let dim = rw.interners().string_attr(&s.dim);
    let start = rw.interners().int_attr(s.start as i128, i64t);
    let (stop, step) = (rw.interners().int_attr(stop as i128, i64t), rw.interners().int_attr(s.step as i128, i64t));
    let mut state = OpState::new(rw.interners(), "teg.slice", loc).operands(&[x]).results(&[ty]);
    for (name, value) in [("dim", dim), ("start", start), ("stop", stop), ("step", step)] {
        let key = rw.interners().sym(name);
        state.props.push((key, value));
    }
    let value = rw.create_value(state);
    rw.replace_op(op, &[value]);
}

impl RewritePattern for WholeSlice {
    fn name(&self) -> &'static str {
        "WholeSlice"
    }

    fn root(&self) -> Option<&'static str> {
        Some("teg.slice")
    }

    fn match_and_rewrite(&self, op: OpId, rw: &mut Rewriter<'_>) -> bool {
        let Some((s, x)) = forward(rw, op) else { return false };
        let Some(t) = as_tensor(rw, rw.body.value_type(x)) else { return false };
        let Some(k) = t.position(&s.dim) else { return false };
        if s.start != 0 || s.step != 1 || s.count as u64 != t.dims[k].1 {
            return false;
        }
        rw.replace_op(op, &[x]);
        true
    }
}

impl RewritePattern for SliceOfSlice {
    fn name(&self) -> &'static str {
        "SliceOfSlice"
    }

    fn root(&self) -> Option<&'static str> {
        Some("teg.slice")
    }

    fn match_and_rewrite(&self, op: OpId, rw: &mut Rewriter<'_>) -> bool {
        let Some((outer, y)) = forward(rw, op) else { return false };
        let Some((inner, x)) = producer(rw, y).and_then(|p| forward(rw, p)) else { return false };
        if inner.dim != outer.dim || outer.count == 0 {
            return false;
        }
        let (Some(start), Some(step)) = (
            outer.start.checked_mul(inner.step).and_then(|o| o.checked_add(inner.start)),
            inner.step.checked_mul(outer.step),
        ) else {
            return false;
        };
        replace_by_slice(rw, op, x, &Forward { dim: outer.dim, start, step, count: outer.count });
        true
    }
}

impl RewritePattern for SliceOfConcat {
    fn name(&self) -> &'static str {
        "SliceOfConcat"
    }

    fn root(&self) -> Option<&'static str> {
        Some("teg.slice")
    }

    fn match_and_rewrite(&self, op: OpId, rw: &mut Rewriter<'_>) -> bool {
        let Some((s, joined)) = forward(rw, op) else { return false };
        let Some(concat) = producer(rw, joined) else { return false };
        let Ok(OpKind::View(View::Concat { dim })) = decode(rw, concat) else { return false };
        if dim != s.dim || s.count == 0 {
            return false;
        }
        let Some(last) = (s.count - 1).checked_mul(s.step).and_then(|d| d.checked_add(s.start)) else { return false };
        let mut at = 0i64;
        for part in rw.body.operands(concat).collect::<Vec<_>>() {
            let Some(t) = as_tensor(rw, rw.body.value_type(part)) else { return false };
            let Some(k) = t.position(&dim) else { return false };
            let n = t.dims[k].1 as i64;
            if s.start >= at && last < at + n {
                let local = Forward { start: s.start - at, ..s };
                if local.start == 0 && local.step == 1 && local.count == n {
                    rw.replace_op(op, &[part]);
                } else {
                    replace_by_slice(rw, op, part, &local);
                }
                return true;
            }
            at += n;
        }
        false
    }
}

impl RewritePattern for PermuteOfPermute {
    fn name(&self) -> &'static str {
        "PermuteOfPermute"
    }

    fn root(&self) -> Option<&'static str> {
        Some("teg.permute")
    }

    fn match_and_rewrite(&self, op: OpId, rw: &mut Rewriter<'_>) -> bool {
        let Ok(OpKind::View(View::Permute { dims })) = decode(rw, op) else { return false };
        let Some(inner) = producer(rw, rw.body.operand(op, 0)) else { return false };
        let Ok(OpKind::View(View::Permute { .. })) = decode(rw, inner) else { return false };
        let x = rw.body.operand(inner, 0);
        let Some(t) = as_tensor(rw, rw.body.value_type(x)) else { return false };
        if t.dims.iter().map(|d| &d.0).eq(dims.iter()) {
            rw.replace_op(op, &[x]);
            return true;
        }
        let ty = rw.body.value_type(rw.body.results(op).next().expect("one result"));
        let loc = rw.body.op(op).loc;
        let props = rw.body.op(op).props;
        let mut state = OpState::new(rw.interners(), "teg.permute", loc).operands(&[x]).results(&[ty]);
        state.props = rw.dict_entries(props).to_vec();
        let value = rw.create_value(state);
        rw.replace_op(op, &[value]);
        true
    }
}
