//! `resolve-layouts`: gives every tensor of every TEG graph a layout in the memory of the NPU the module targets
//! (`npu.machine`), written on the op defining it as `teg.layout = #layout.cute<shape:stride>` (with an offset
//! where it has one), and decides which views are read in place and where layouts are copied.
//!
//! - A source keeps the layout it is given (`teg.layout` on the source: the caller's buffer is in it); without
//!   one it is stored row-major with its rows padded to `NpuConfig::padded_row` elements ([`rows`]), as every
//!   computed tensor is: the layout the NPU's operators read a row at a time.
//! - A view (permute, reverse, slice, select, squeeze, unsqueeze, broadcast) whose cells are cells of its operand's
//!   buffer in a layout the operators read is *in place* (`teg.in_place`): its layout is its operand's read
//!   through the view's index map, and it costs no copy. This holds when its rows are rows of its operand (any
//!   view of the outer dimensions: strides may be 0 or negative), or when it is a layout of rows itself (a
//!   permutation making a column-major source row-major). Other views (moving, cutting or stretching the rows;
//!   concat, pad, ...) copy into a new buffer of rows, as they do on a different device than their operand.
//! - A source whose given layout is not one of rows, read by an operator (or by views that would be in place on
//!   rows and together copy more than it holds), gets a relayout copy into rows right after it (`teg.relayout`,
//!   an identity `teg.permute`), read by those users; the views that read it in place then copy nothing. That is
//!   the choice of fewer bytes copied; sinks, reshards and copying views read any layout.
//!
//! - Operators that need more than rows say so ([`operators`]): a `teg.contract` whose `w` does not have the
//!   result's last dimension last reads a permute of it (itself in place or copied as above).
//!
//! Each view's choice and each relayout is reported as a remark, with the bytes copied.

mod operators;
mod rows;

pub use rows::{check_injective, check_rows, in_place, strided_of, view_map, Strided};

use super::pass::{Changed, Pass, PassEnv, PassInfo};
use super::registry::PassEntry;
use crate::dialects::npu::machine_attr::machine_of;
use crate::dialects::teg::ops::{decode, Io, OpKind};
use crate::dialects::teg::tensor_type::as_tensor;
use crate::dialects::teg::transfers::{devices_of, DEVICES_ATTR};
use crate::dialects::teg::{graph_ops, graphs_under, LAYOUT_ATTR};
use crate::ir::builder::OpState;
use crate::ir::{Attr, Context, Diagnostic, OpId, ValueId};
use crate::machine::NpuConfig;
use std::collections::HashMap;

/// The unit attribute of a view read in place: its result is its operand's buffer in the view's `teg.layout`.
pub const IN_PLACE_ATTR: &str = "teg.in_place";

/// The unit attribute of a relayout copy `resolve-layouts` inserted (an identity `teg.permute`).
pub const RELAYOUT_ATTR: &str = "teg.relayout";

/// The registration of `resolve-layouts`.
pub const ENTRY: PassEntry = PassEntry { info: &INFO, create: |_| Box::new(ResolveLayouts) };

static INFO: PassInfo = PassInfo {
    argument: "resolve-layouts",
    name: "ResolveLayouts",
    description: "Give every TEG tensor a layout in the NPU's memory (teg.layout): views in place, copies where needed",
    anchor: None,
    options: &[],
    statistics: &[
        ("num-layouts", "Tensors given a layout"),
        ("num-in-place", "Views read in place"),
        ("num-copied", "Views copied"),
        ("num-relayouts", "Relayout copies inserted"),
        ("num-reordered", "Operands permuted to the dimension order their operator needs"),
        ("copy-bytes", "Bytes the copying views and relayouts write"),
    ],
};

struct ResolveLayouts;

impl Pass for ResolveLayouts {
    fn info(&self) -> &'static PassInfo {
        &INFO
    }

    fn run(&mut self, ctx: &mut Context, root: OpId, env: &mut PassEnv<'_>) -> Result<Changed, Vec<Diagnostic>> {
        let mut count = 0;
        for graph in graphs_under(ctx, root) {
            let cfg = machine_of(ctx, graph).map_err(|m| vec![Diagnostic::error(ctx.body.op(graph).loc, m)])?;
            let mut resolve = Resolve { cfg, known: HashMap::new(), remarks: Vec::new() };
            let ops: Vec<OpId> = graph_ops(ctx, graph).collect();
            ops.iter().try_for_each(|&op| no_empty_tensor(ctx, op)).map_err(|d| vec![d])?;
            let ordered = operators::order_contractions(ctx, &ops, &mut resolve.remarks);
            env.stats.add("num-reordered", ordered as u64);
            // Ordering the contractions' operands inserts and erases permutes.
            let ops: Vec<OpId> = graph_ops(ctx, graph).collect();
            for &op in &ops {
                resolve.relayout_source(ctx, op, env).map_err(|d| vec![d])?;
            }
            for op in graph_ops(ctx, graph).collect::<Vec<_>>() {
                count += resolve.assign(ctx, op, env).map_err(|d| vec![d])? as u64;
            }
            env.remarks.append(&mut resolve.remarks);
        }
        env.stats.add("num-layouts", count);
        Ok(if count > 0 { Changed::Yes } else { Changed::No })
    }
}

/// An error at `op` when it makes a tensor with an extent of 0: such a tensor has no layout to give (a layout's
/// extents are positive), and nothing to lower; the reference evaluator runs it (`tap-run` without `--lower`).
fn no_empty_tensor(ctx: &Context, op: OpId) -> Result<(), Diagnostic> {
    for v in ctx.body.results(op) {
        let Some(t) = as_tensor(ctx, ctx.body.value_type(v)) else { continue };
        if let Some((name, _)) = t.dims.iter().find(|d| d.1 == 0) {
            let message = format!(
                "'{}' makes an empty tensor (extent 0 along '{name}'): the NPU lowering takes no empty tensors (the \
                 reference evaluator runs them: tap-run without --lower)",
                ctx.op_name(op)
            );
            return Err(Diagnostic::error(ctx.body.op(op).loc, message));
        }
    }
    Ok(())
}

/// A tensor's layout as decided: where it sits, whether its rows are read whole, the elements of its buffer.
#[derive(Clone, Debug)]
struct Placed {
    strided: Strided,
    extents: Vec<u64>,
    rows: bool,
    buffer: u64,
}

/// What an op reading a source in a given layout needs of it.
enum Need {
    /// Nothing: it reads the layout as it is (or copies what it reads anyway).
    Nothing,
    /// Rows: an operator.
    Rows,
    /// Rows if the source is copied anyway: a view that copies this many bytes otherwise, but would be in place
    /// on rows.
    RowsToSave(u64),
}

/// The decisions of one graph so far.
struct Resolve {
    cfg: NpuConfig,
    known: HashMap<ValueId, Placed>,
    remarks: Vec<Diagnostic>,
}

/// The extents the lowering stores a tensor of `shape` with (a scalar as one element).
fn extents_of(shape: Vec<u64>) -> Vec<u64> {
    if shape.is_empty() {
        vec![1]
    } else {
        shape
    }
}

/// The tensor `v`'s extents and element bytes (`None`: not a TEG tensor).
fn tensor_of(ctx: &Context, v: ValueId) -> Option<(Vec<u64>, u64)> {
    let t = as_tensor(ctx, ctx.body.value_type(v))?;
    Some((extents_of(t.shape()), t.dtype.size() as u64))
}

/// The device `op` runs on (its first `teg.devices`; 0 without).
fn device_of(ctx: &Context, op: OpId) -> usize {
    devices_of(ctx, op, usize::MAX).and_then(|d| d.ok()).and_then(|d| d.first().copied()).unwrap_or(0)
}

impl Resolve {
    /// A tensor of `extents` stored in rows, in a buffer of its own.
    fn rows(&self, extents: Vec<u64>) -> Placed {
        let strided = Strided::row_major(&extents, &self.cfg);
        let buffer = strided.span(&extents, self.cfg.padded_row(extents[extents.len() - 1])).unwrap_or(u64::MAX);
        Placed { strided, extents, rows: true, buffer }
    }

    /// The layout a source is given, if it has one: an error when the lowering cannot read it at all.
    fn given(&self, ctx: &Context, op: OpId) -> Result<Option<Placed>, Diagnostic> {
        let Some(attr) = ctx.op_attr(op, LAYOUT_ATTR) else { return Ok(None) };
        let err = |m: String| Diagnostic::error(ctx.body.op(op).loc, m);
        let (extents, bytes) = tensor_of(ctx, ctx.body.result(op, 0)).ok_or_else(|| err("not a TEG tensor".into()))?;
        let strided = strided_of(&ctx.interners, attr, &extents).map_err(err)?;
        check_injective(&strided, &extents).map_err(err)?;
        let rows = check_rows(&strided, &extents, bytes, &self.cfg).is_ok();
        let row = if rows { self.cfg.padded_row(extents[extents.len() - 1]) } else { 1 };
        let buffer = strided
            .span(&extents, row)
            .ok_or_else(|| err("'teg.layout' places elements before its buffer's start".into()))?;
        Ok(Some(Placed { strided, extents, rows, buffer }))
    }

    /// Inserts a relayout copy after source `op` when its given layout is not one of rows and copying it costs
    /// fewer bytes than its users would copy otherwise (an operator reading it must have rows).
    fn relayout_source(&mut self, ctx: &mut Context, op: OpId, env: &mut PassEnv<'_>) -> Result<(), Diagnostic> {
        if !matches!(decode(ctx, op), Ok(OpKind::Io(Io::Source { .. }))) {
            return Ok(());
        }
        let Some(given) = self.given(ctx, op)? else { return Ok(()) };
        let v = ctx.body.result(op, 0);
        let bytes = tensor_of(ctx, v).map_or(0, |t| t.1);
        let rows = self.rows(given.extents.clone());
        if given.strided.is_own(&given.extents, &self.cfg) {
            return Ok(());
        }
        let (mut movers, mut operators, mut saved) = (Vec::new(), 0u64, 0u64);
        for (user, i) in ctx.body.uses(v).collect::<Vec<_>>() {
            match self.need(ctx, user, (&given, &rows), bytes) {
                Need::Nothing => continue,
                Need::Rows => operators += 1,
                Need::RowsToSave(bytes) => saved += bytes,
            }
            movers.push((user, i));
        }
        let cost = rows.buffer * bytes;
        if movers.is_empty() || (operators == 0 && cost >= saved) {
            return Ok(());
        }
        let copy = relayout(ctx, op, v);
        for (user, i) in movers.iter().copied() {
            ctx.body.set_operand(user, i, copy);
        }
        let name = match decode(ctx, op) {
            Ok(OpKind::Io(Io::Source { name })) => name,
            _ => String::new(),
        };
        self.remarks.push(Diagnostic::remark(
            ctx.body.op(op).loc,
            format!(
                "relayout: source @{name} is copied into rows ({cost} B) for the {} op(s) reading it that need rows \
                 ({})",
                movers.len(),
                if given.rows {
                    "a padded convolution reads row padding as zeros, which its given layout does not promise"
                } else {
                    "its given layout is not one of rows"
                }
            ),
        ));
        env.stats.add("num-relayouts", 1);
        env.stats.add("copy-bytes", cost);
        Ok(())
    }

    /// What `user` needs of a source in layout `given` (not the lowering's own `rows`) of `bytes`-byte elements.
    fn need(&self, ctx: &Context, user: OpId, (given, rows): (&Placed, &Placed), bytes: u64) -> Need {
        match decode(ctx, user) {
            // A view is in place on the given layout, copies its result, or is in place on a relayout.
            Ok(OpKind::View(_)) if !given.rows => {
                let map = view_map(ctx, user);
                let extents = tensor_of(ctx, ctx.body.result(user, 0)).map(|t| t.0);
                let (Some(map), Some(extents)) = (map, extents) else { return Need::Nothing };
                let on =
                    |p: &Placed| in_place(&map, (&p.strided, &p.extents, p.rows), &extents, bytes, p.buffer, &self.cfg);
                match on(given).is_err() && on(rows).is_ok() {
                    true => Need::RowsToSave(self.rows(extents).buffer * bytes),
                    false => Need::Nothing,
                }
            }
            // A view in place on the source passes its rows (and their padding) on.
            Ok(OpKind::View(_)) if feeds_padded_conv(ctx, ctx.body.result(user, 0)) => Need::Rows,
            // A reshard combining partial results computes on them as an operator does.
            Ok(OpKind::Reshard(r)) if r.combine.is_some() && !given.rows => Need::Rows,
            Ok(OpKind::Io(_) | OpKind::Reshard(_) | OpKind::View(_)) => Need::Nothing,
            // A padded convolution reads its input's row padding as zeros, which only the lowering's own layout
            // promises (the caller's buffer may hold anything between a given layout's rows).
            Ok(OpKind::Conv2d(c)) if given.rows && c.padding[1] == 0 => Need::Nothing,
            Ok(OpKind::Conv2d(_)) => Need::Rows,
            _ if given.rows => Need::Nothing,
            _ => Need::Rows,
        }
    }

    /// Gives `op`'s tensor result its layout; whether it has one.
    fn assign(&mut self, ctx: &mut Context, op: OpId, env: &mut PassEnv<'_>) -> Result<bool, Diagnostic> {
        let Some(v) = ctx.body.results(op).next() else { return Ok(false) };
        let Some((extents, bytes)) = tensor_of(ctx, v) else { return Ok(false) };
        ctx.remove_op_attr(op, IN_PLACE_ATTR);
        let kind = decode(ctx, op);
        let placed = match kind {
            Ok(OpKind::Io(Io::Source { .. })) => match self.given(ctx, op)? {
                Some(given) => given,
                None => self.rows(extents),
            },
            Ok(OpKind::View(_)) if ctx.op_attr(op, RELAYOUT_ATTR).is_none() => self.view(ctx, op, extents, bytes, env),
            _ => self.rows(extents),
        };
        let attr = placed.strided.attr(&mut ctx.interners, &placed.extents);
        ctx.set_op_attr(op, LAYOUT_ATTR, attr);
        self.known.insert(v, placed);
        Ok(true)
    }

    /// The layout of view `op`: in place when it can be (marked so), else rows of a copy; a remark either way.
    fn view(&mut self, ctx: &mut Context, op: OpId, extents: Vec<u64>, bytes: u64, env: &mut PassEnv<'_>) -> Placed {
        let operand = ctx.body.operand(op, 0);
        let same_device = match ctx.body.value_def(operand) {
            crate::ir::body::ValueDef::Result { op: def, .. } => device_of(ctx, def) == device_of(ctx, op),
            _ => false,
        };
        let decision = match (view_map(ctx, op), self.known.get(&operand)) {
            (_, _) if !same_device => Err("it runs on another device than its operand".to_string()),
            (Some(map), Some(p)) => {
                in_place(&map, (&p.strided, &p.extents, p.rows), &extents, bytes, p.buffer, &self.cfg)
                    .map(|s| (s, p.buffer))
            }
            _ => Err("its cells are not each one operand cell read through one affine map".to_string()),
        };
        let name = ctx.op_name(op).to_string();
        let loc = ctx.body.op(op).loc;
        match decision {
            Ok((strided, buffer)) => {
                let unit = ctx.interners.attr(Attr::Unit);
                ctx.set_op_attr(op, IN_PLACE_ATTR, unit);
                self.remarks.push(Diagnostic::remark(loc, format!("{name} in place: a view of its operand's buffer")));
                env.stats.add("num-in-place", 1);
                Placed { strided, extents, rows: true, buffer }
            }
            Err(why) => {
                let placed = self.rows(extents);
                let copied = placed.buffer * bytes;
                self.remarks.push(Diagnostic::remark(loc, format!("{name} copied ({copied} B): {why}")));
                env.stats.add("num-copied", 1);
                env.stats.add("copy-bytes", copied);
                placed
            }
        }
    }
}

/// Whether `v`, or a view of it (through views that may be read in place: one operand each, so the walks from
/// different sources never meet), is the input of a convolution padded along its rows.
fn feeds_padded_conv(ctx: &Context, v: ValueId) -> bool {
    let mut work = vec![v];
    let mut seen = std::collections::HashSet::new();
    while let Some(v) = work.pop() {
        for (user, i) in ctx.body.uses(v) {
            match decode(ctx, user) {
                Ok(OpKind::Conv2d(c)) if i == 0 && c.padding[1] > 0 => return true,
                Ok(OpKind::View(_)) if view_map(ctx, user).is_some() && seen.insert(user) => {
                    work.extend(ctx.body.results(user))
                }
                _ => {}
            }
        }
    }
    false
}

/// Inserts after source `op` an identity `teg.permute` of its result `v` marked as a relayout, on its device;
/// the copy.
fn relayout(ctx: &mut Context, op: OpId, v: ValueId) -> ValueId {
    let ty = ctx.body.value_type(v);
    let names: Vec<String> =
        as_tensor(ctx, ty).map(|t| t.dims.iter().map(|d| d.0.clone()).collect()).unwrap_or_default();
    let dims: Vec<_> = names.iter().map(|n| ctx.string_attr(n)).collect();
    let dims = ctx.attr(Attr::Array(dims.into()));
    let loc = ctx.body.op(op).loc;
    let state = OpState::new(ctx, "teg.permute", loc).operands(&[v]).results(&[ty]).prop(ctx, "dims", dims);
    let copy = state.create(ctx);
    ctx.body.insert_op_after(op, copy);
    let unit = ctx.interners.attr(Attr::Unit);
    ctx.set_op_attr(copy, RELAYOUT_ATTR, unit);
    if let Some(devices) = ctx.op_attr(op, DEVICES_ATTR) {
        ctx.set_op_attr(copy, DEVICES_ATTR, devices);
    }
    ctx.body.result(copy, 0)
}
