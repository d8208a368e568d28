//! The dimension orders operators need on the NPU beyond rows. The tensor unit writes a contraction's result
//! a row of its last dimension at a time, from rows of `w` along that dimension: so `w`'s last dimension must be
//! the result's. A `teg.contract` (by names, so the order of its operands' dimensions does not change what it
//! computes) whose `w` has it elsewhere reads a `teg.permute` of `w` with that dimension moved last instead: in
//! place when `w`'s layout already has it contiguous (a column-major weight), a transposing copy otherwise, each
//! reported like any view. Permutes already in front of `w` are looked through (the contraction reads their
//! operand instead), and a permute of the wanted order the graph already has is read rather than made again, so
//! a user's transpose and this one never make two copies. A `w` broadcast from a smaller tensor is broadcast again
//! in the wanted order instead (a stride-0 dimension anywhere, read in place), not broadcast and then permuted.

use crate::dialects::teg::ops::rules::broadcast;
use crate::dialects::teg::ops::{decode, Contraction, OpKind, View};
use crate::dialects::teg::tensor_type::{as_tensor, tensor_type, TensorType};
use crate::dialects::teg::transfers::DEVICES_ATTR;
use crate::ir::builder::OpState;
use crate::ir::{Attr, AttrId, Context, Diagnostic, OpId, ValueDef, ValueId};
use std::collections::HashMap;

/// Makes every `teg.contract` of `ops` read a `w` whose last dimension is the result's (one permute per value
/// and order, shared, the graph's own used where it has one); a remark per permute made. How many it made.
pub fn order_contractions(ctx: &mut Context, ops: &[OpId], remarks: &mut Vec<Diagnostic>) -> usize {
    let mut permutes = Permutes::of(ctx, ops);
    let mut unread = Vec::new();
    for &op in ops {
        if !matches!(decode(ctx, op), Ok(OpKind::Contraction(Contraction::Contract))) {
            continue;
        }
        let read = ctx.body.operand(op, 1);
        if wanted(ctx, op, read).is_none() {
            continue; // Its order already.
        }
        // The contraction reads by names: the value beneath the permutes in front of w serves as well.
        let w = permutes.beneath(ctx, read);
        unread.push(read);
        let permuted = match wanted(ctx, op, w) {
            None => w,
            Some(order) => permutes.ordered(ctx, op, w, order, remarks),
        };
        ctx.body.set_operand(op, 1, permuted);
    }
    // After the walk, so that no value the walk remembered goes while it runs.
    for v in unread {
        erase_unread_views(ctx, v);
    }
    permutes.made
}

/// A permute's key: the value beneath its chain, its order and its devices.
type Key = (ValueId, Vec<String>, Option<AttrId>);

/// The permutes of a graph: the value beneath each chain, and per key the permute reading it so.
struct Permutes {
    beneath: HashMap<ValueId, ValueId>,
    by_key: HashMap<Key, ValueId>,
    made: usize,
}

impl Permutes {
    /// The graph's own permutes among `ops`.
    fn of(ctx: &Context, ops: &[OpId]) -> Permutes {
        let mut p = Permutes { beneath: HashMap::new(), by_key: HashMap::new(), made: 0 };
        for &op in ops {
            if matches!(decode(ctx, op), Ok(OpKind::View(View::Permute { .. }))) {
                let v = ctx.body.result(op, 0);
                let key = (p.beneath(ctx, v), names(ctx, v), ctx.op_attr(op, DEVICES_ATTR));
                p.by_key.entry(key).or_insert(v);
            }
        }
        p
    }

    /// The value under `w`'s chain of `teg.permute`s (`w` itself without one), each value of the chain remembered
    /// so that contractions reading a long chain at many points walk it once.
    fn beneath(&mut self, ctx: &Context, w: ValueId) -> ValueId {
        let (mut path, mut at) = (Vec::new(), w);
        let base = loop {
            if let Some(&base) = self.beneath.get(&at) {
                break base;
            }
            path.push(at);
            match ctx.body.value_def(at) {
                ValueDef::Result { op, .. } if matches!(decode(ctx, op), Ok(OpKind::View(View::Permute { .. }))) => {
                    at = ctx.body.operand(op, 0)
                }
                _ => break at,
            }
        };
        self.beneath.extend(path.into_iter().map(|v| (v, base)));
        base
    }

    /// `w` in `order` on `op`'s devices: a permute the graph has, or one made before `op` (with a remark).
    fn ordered(
        &mut self,
        ctx: &mut Context,
        op: OpId,
        w: ValueId,
        order: Vec<String>,
        remarks: &mut Vec<Diagnostic>,
    ) -> ValueId {
        let devices = ctx.op_attr(op, DEVICES_ATTR);
        let key = (w, order, devices);
        if let Some(&v) = self.by_key.get(&key) {
            return v;
        }
        let v = reorder(ctx, op, w, &key.1, devices);
        let last = key.1.last().cloned().unwrap_or_default();
        let message = format!("teg.contract reads its w with '{last}' last (the tensor unit's result rows)");
        remarks.push(Diagnostic::remark(ctx.body.op(op).loc, message));
        self.beneath.insert(v, w);
        self.by_key.insert(key, v);
        self.made += 1;
        v
    }
}

/// The dimension names of tensor `v`, in order.
fn names(ctx: &Context, v: ValueId) -> Vec<String> {
    as_tensor(ctx, ctx.body.value_type(v)).map(|t| t.dims.iter().map(|d| d.0.clone()).collect()).unwrap_or_default()
}

/// The order of `w`'s dimensions contraction `op` needs, when it is not `w`'s: the result's last dimension moved
/// last (when it comes from `w` alone; otherwise the lowering refuses it anyway).
fn wanted(ctx: &Context, op: OpId, w: ValueId) -> Option<Vec<String>> {
    let tw = as_tensor(ctx, ctx.body.value_type(w))?;
    let tx = as_tensor(ctx, ctx.body.value_type(ctx.body.operand(op, 0)))?;
    let n = &as_tensor(ctx, ctx.body.value_type(ctx.body.result(op, 0)))?.dims.last()?.0;
    let last = &tw.dims.last()?.0;
    if last == n || tw.position(n).is_none() || tx.position(n).is_some() {
        return None;
    }
    let mut order: Vec<String> = tw.dims.iter().map(|d| d.0.clone()).filter(|d| d != n).collect();
    order.push(n.clone());
    Some(order)
}

/// Erases the `teg.permute`s making `v`, and the broadcast beneath them, that nothing reads any more (the
/// contraction reads beneath them, or a broadcast in its order, now).
fn erase_unread_views(ctx: &mut Context, mut v: ValueId) {
    while let ValueDef::Result { op, .. } = ctx.body.value_def(v) {
        // Chains read at several points meet: what one call erased, the next finds gone.
        if ctx.body.is_erased(op) {
            return;
        }
        let kind = decode(ctx, op);
        if ctx.body.has_uses(v) || !matches!(kind, Ok(OpKind::View(View::Permute { .. } | View::BroadcastTo))) {
            return;
        }
        v = ctx.body.operand(op, 0);
        ctx.body.erase_op(op);
        if matches!(kind, Ok(OpKind::View(View::BroadcastTo))) {
            return;
        }
    }
}

/// `w` with its dimensions in `order`, before `op` on `op`'s devices: the broadcast making `w` done again in that
/// order when `w` is one and its operand broadcasts so (its dimensions keep their order), else a `teg.permute`.
fn reorder(ctx: &mut Context, op: OpId, w: ValueId, order: &[String], devices: Option<AttrId>) -> ValueId {
    let t = as_tensor(ctx, ctx.body.value_type(w)).expect("a tensor").clone();
    let dims: Vec<(String, u64)> =
        order.iter().map(|n| t.dims[t.position(n).expect("a dimension of w")].clone()).collect();
    let wanted = TensorType { dims, dtype: t.dtype };
    let source = match ctx.body.value_def(w) {
        ValueDef::Result { op: def, .. } if matches!(decode(ctx, def), Ok(OpKind::View(View::BroadcastTo))) => {
            let x = ctx.body.operand(def, 0);
            let fits = as_tensor(ctx, ctx.body.value_type(x))
                .is_some_and(|tx| broadcast(&[tx, &wanted]).ok().as_ref() == Some(&wanted.dims));
            fits.then_some(x)
        }
        _ => None,
    };
    let ty = tensor_type(ctx, wanted);
    let loc = ctx.body.op(op).loc;
    let state = match source {
        Some(x) => OpState::new(ctx, "teg.broadcast", loc).operands(&[x]).results(&[ty]),
        None => {
            let names: Vec<_> = order.iter().map(|n| ctx.string_attr(n)).collect();
            let names = ctx.attr(Attr::Array(names.into()));
            OpState::new(ctx, "teg.permute", loc).operands(&[w]).results(&[ty]).prop(ctx, "dims", names)
        }
    };
    let made = state.create(ctx);
    ctx.body.insert_op_before(op, made);
    if let Some(devices) = devices {
        ctx.set_op_attr(made, DEVICES_ATTR, devices);
    }
    ctx.body.result(made, 0)
}
