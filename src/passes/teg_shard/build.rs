//! The ops `teg-shard` writes: slices of values on every device, explicit zero padding, shard copies of an op
//! (marked with their devices, attributes fitted to their boxes) and `teg.reshard`s between shards.

use crate::array::DType;
use crate::dialects::teg::ops::{decode, Monoid, OpKind, View};
use crate::dialects::teg::shard_plan::SHARD_ATTR;
use crate::dialects::teg::tensor_type::{as_tensor, tensor_type, TensorType};
use crate::dialects::teg::transfers::DEVICES_ATTR;
use crate::ir::builder::OpState;
use crate::ir::{Attr, Context, FloatKind, OpId, ValueId};
use crate::zspace::ZRange;

use super::geometry::resized;

/// The box `read` of `v`, as `teg.slice` views along each dimension it cuts (at least one when `always`),
/// inserted before `anchor`; returns the last view's value and the slice ops.
pub(super) fn slice(
    ctx: &mut Context,
    anchor: OpId,
    v: ValueId,
    read: &ZRange,
    always: bool,
) -> Result<(ValueId, Vec<OpId>), String> {
    let mut t = as_tensor(ctx, ctx.body.value_type(v)).ok_or("an operand is not a tensor")?.clone();
    let (mut value, mut made) = (v, Vec::new());
    for j in 0..t.dims.len() {
        let (start, end) = (read.start()[j], read.end()[j]);
        let whole = start == 0 && end as u64 == t.dims[j].1;
        if whole && !(always && made.is_empty() && j + 1 == t.dims.len()) {
            continue;
        }
        t.dims[j].1 = (end - start) as u64;
        let ty = tensor_type(ctx, t.clone());
        let i64t = ctx.int_type(64);
        let dim = ctx.string_attr(&t.dims[j].0);
        let (s, e, one) = (ctx.int_attr(start as i128, i64t), ctx.int_attr(end as i128, i64t), ctx.int_attr(1, i64t));
        let loc = ctx.body.op(anchor).loc;
        let state = OpState::new(ctx, "teg.slice", loc)
            .operands(&[value])
            .results(&[ty])
            .prop(ctx, "dim", dim)
            .prop(ctx, "start", s)
            .prop(ctx, "stop", e)
            .prop(ctx, "step", one);
        let op = insert(ctx, anchor, state);
        value = ctx.body.results(op).next().expect("one result");
        made.push(op);
    }
    if made.is_empty() && always {
        return Err("cannot cut a tensor without dimensions".into());
    }
    Ok((value, made))
}

/// Adjusts a shard's attributes to its boxes (`first_read` of its first operand, `region` of its result): a
/// convolution's border is padded explicitly, so it pads nothing; a view's attributes follow its box
/// ([`View::at_box`]).
pub(super) fn fit_to_box(ctx: &mut Context, shard: OpId, first_read: &ZRange, region: &ZRange) -> Result<(), String> {
    let i64t = ctx.int_type(64);
    let int = |ctx: &mut Context, v: i64| ctx.int_attr(v as i128, i64t);
    match decode(ctx, shard)? {
        OpKind::Conv2d(_) => {
            let zero = int(ctx, 0);
            let none = ctx.attr(Attr::Array(vec![zero, zero].into()));
            ctx.set_op_prop(shard, "padding", none);
        }
        OpKind::View(view) => {
            let x = ctx.body.operand(shard, 0);
            let names = owned(as_tensor(ctx, ctx.body.value_type(x)).ok_or("an operand is not a tensor")?.names());
            let result = ctx.body.results(shard).next().expect("one result");
            let out = owned(as_tensor(ctx, ctx.body.value_type(result)).ok_or("the result is not a tensor")?.names());
            let count = |dim: &str| out.iter().position(|n| n == dim).map_or(1, |j| region.shape()[j]);
            let fitted = match &view {
                View::Slice { dim, .. } | View::Broadcast { dim, .. } => {
                    view.at_box(&names, &out, first_read.start(), region.start(), count(dim))
                }
                other => other.at_box(&names, &out, first_read.start(), region.start(), 1),
            };
            match fitted {
                View::Slice { start, stop, .. } => {
                    let (start, stop) = (int(ctx, start), int(ctx, stop));
                    ctx.set_op_prop(shard, "start", start);
                    ctx.set_op_prop(shard, "stop", stop);
                }
                View::Select { index, .. } => {
                    let index = int(ctx, index);
                    ctx.set_op_prop(shard, "index", index);
                }
                View::Broadcast { extent, .. } => {
                    let extent = int(ctx, extent);
                    ctx.set_op_prop(shard, "extent", extent);
                }
                _ => {}
            }
        }
        _ => {}
    }
    Ok(())
}

pub(super) fn owned(names: Vec<&str>) -> Vec<String> {
    names.into_iter().map(String::from).collect()
}

/// `v` with `border` cells of zeros added before and after along each dimension (a `teg.pad` per padded one).
pub(super) fn pad(ctx: &mut Context, anchor: OpId, v: ValueId, border: &[(u64, u64)]) -> Result<ValueId, String> {
    let mut value = v;
    for (j, &(low, high)) in border.iter().enumerate() {
        if low == 0 && high == 0 {
            continue;
        }
        let mut t = as_tensor(ctx, ctx.body.value_type(value)).ok_or("an operand is not a tensor")?.clone();
        let dim = ctx.string_attr(&t.dims[j].0);
        t.dims[j].1 += low + high;
        let ty = tensor_type(ctx, t);
        let i64t = ctx.int_type(64);
        let (lo, hi) = (ctx.int_attr(low as i128, i64t), ctx.int_attr(high as i128, i64t));
        let f64t = ctx.float_type(crate::ir::types::FloatKind::F64);
        let (mode, zero) = (ctx.string_attr("constant"), ctx.attr(Attr::Float { bits: 0f64.to_bits(), ty: f64t }));
        let loc = ctx.body.op(anchor).loc;
        let state = OpState::new(ctx, "teg.pad", loc)
            .operands(&[value])
            .results(&[ty])
            .prop(ctx, "dim", dim)
            .prop(ctx, "low", lo)
            .prop(ctx, "high", hi)
            .prop(ctx, "mode", mode)
            .prop(ctx, "value", zero);
        let op = insert(ctx, anchor, state);
        value = ctx.body.results(op).next().expect("one result");
    }
    Ok(value)
}

/// A copy of `op` on `operands` with result type `ty`, marked with its devices, inserted before `op`.
pub(super) fn clone_with(ctx: &mut Context, op: OpId, operands: &[ValueId], ty: TensorType, devices: &[usize]) -> OpId {
    let ty = tensor_type(ctx, ty);
    let data = ctx.body.op(op);
    let (loc, attrs, props) = (data.loc, data.attrs, data.props);
    let name = ctx.op_name(op).to_string();
    let mut state = OpState::new(ctx, &name, loc).operands(operands).results(&[ty]);
    state.props = ctx.dict_entries(props).to_vec();
    let shard_key = ctx.sym(SHARD_ATTR);
    state.attrs = ctx.dict_entries(attrs).iter().filter(|e| e.0 != shard_key).copied().collect();
    let shard = insert(ctx, op, state);
    mark(ctx, shard, devices);
    shard
}

/// `sum / count`, before `anchor`, on every device: the mean of a reduction whose shards summed (`teg.full` of
/// the count, then `teg.div`, as the reference divides a mean's sum).
pub(super) fn divide(ctx: &mut Context, anchor: OpId, sum: ValueId, t: &TensorType, count: u64) -> ValueId {
    let loc = ctx.body.op(anchor).loc;
    let ty = tensor_type(ctx, t.clone());
    let f64t = ctx.float_type(FloatKind::F64);
    let value = ctx.attr(Attr::Float { bits: (count as f64).to_bits(), ty: f64t });
    let full = OpState::new(ctx, "teg.full", loc).prop(ctx, "value", value).results(&[ty]);
    let full = insert(ctx, anchor, full);
    let count = ctx.body.results(full).next().expect("one result");
    let div = OpState::new(ctx, "teg.div", loc).operands(&[sum, count]).results(&[ty]);
    let div = insert(ctx, anchor, div);
    ctx.body.results(div).next().expect("one result")
}

/// `v` cast to `dtype` before `anchor`, marked with `devices` when given (otherwise on every device).
pub(super) fn cast(ctx: &mut Context, anchor: OpId, v: ValueId, dtype: DType, devices: Option<&[usize]>) -> ValueId {
    let loc = ctx.body.op(anchor).loc;
    let t = as_tensor(ctx, ctx.body.value_type(v)).expect("a tensor").clone();
    let ty = tensor_type(ctx, TensorType { dtype, ..t });
    let state = OpState::new(ctx, "teg.cast", loc).operands(&[v]).results(&[ty]);
    let op = insert(ctx, anchor, state);
    if let Some(devices) = devices {
        mark(ctx, op, devices);
    }
    ctx.body.results(op).next().expect("one result")
}

/// Sets `op`'s `teg.devices` to `devices`.
pub(super) fn mark(ctx: &mut Context, op: OpId, devices: &[usize]) {
    let i64t = ctx.int_type(64);
    let ranks = devices.iter().map(|&r| ctx.int_attr(r as i128, i64t)).collect::<Vec<_>>();
    let list = ctx.attr(Attr::Array(ranks.into()));
    ctx.set_op_attr(op, DEVICES_ATTR, list);
}

pub(super) fn insert(ctx: &mut Context, anchor: OpId, state: OpState) -> OpId {
    let op = state.create(ctx);
    ctx.body.insert_op_before(anchor, op);
    op
}

/// A `teg.reshard` before `anchor` making box `to` of a tensor of type `whole` (its dimension names and element
/// type) from `sources` (values and their boxes), combining equal boxes with `combine`; marked with `devices`
/// (none: on every device).
pub(super) fn reshard(
    ctx: &mut Context,
    anchor: OpId,
    sources: &[(ValueId, &ZRange)],
    to: &ZRange,
    whole: &TensorType,
    combine: Option<Monoid>,
    devices: Option<&[usize]>,
) -> OpId {
    let i64t = ctx.int_type(64);
    let offset = |ctx: &mut Context, r: &ZRange| {
        let coords = r.start().iter().map(|&c| ctx.int_attr(c as i128, i64t)).collect::<Vec<_>>();
        ctx.attr(Attr::Array(coords.into()))
    };
    let from: Vec<_> = sources.iter().map(|(_, r)| offset(ctx, r)).collect();
    let from = ctx.attr(Attr::Array(from.into()));
    let at = offset(ctx, to);
    let values: Vec<ValueId> = sources.iter().map(|s| s.0).collect();
    let ty = tensor_type(ctx, resized(whole, to));
    let loc = ctx.body.op(anchor).loc;
    let mut state = OpState::new(ctx, "teg.reshard", loc)
        .operands(&values)
        .results(&[ty])
        .prop(ctx, "from", from)
        .prop(ctx, "at", at);
    if let Some(m) = combine {
        let name = ctx.string_attr(m.name());
        state = state.prop(ctx, "combine", name);
    }
    let op = insert(ctx, anchor, state);
    if let Some(d) = devices {
        mark(ctx, op, d);
    }
    op
}

/// Zeros in the shape of box `read` of `v` (a convolution window that lies wholly in the padding), before `anchor`.
pub(super) fn zeros(ctx: &mut Context, anchor: OpId, v: ValueId, read: &ZRange) -> Result<ValueId, String> {
    let t = as_tensor(ctx, ctx.body.value_type(v)).ok_or("an operand is not a tensor")?.clone();
    let ty = tensor_type(ctx, resized(&t, read));
    let loc = ctx.body.op(anchor).loc;
    let state = OpState::new(ctx, "teg.zeros", loc).results(&[ty]);
    let op = insert(ctx, anchor, state);
    Ok(ctx.body.results(op).next().expect("one result"))
}
