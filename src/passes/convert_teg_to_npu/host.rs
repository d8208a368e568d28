//! Host segments: ops the NPU does not run (generators without an instruction, f64 and i64 arithmetic, ops no
//! pattern lowers yet) whose operands are all the graph's sources or other such ops run on the host, before the
//! kernel. They move into a TEG graph `@NAME.host` next to the kernel, which the harness evaluates first (as a
//! runtime would run its host code); each of its values the kernel reads becomes a source of the kernel's graph
//! named `host.N`, bound to the host graph's sink of that name, and a sink of a type the NPU does not hold stays
//! in the host graph. Every op moved is reported as a remark. An op the NPU does not run that reads a value
//! computed on the device is still an error: segments after the device's are not built yet.

use super::buffers::npu_elem;
use super::check_supported;
use crate::dialects::teg::ops::{decode, Io, OpKind};
use crate::dialects::teg::tensor_type::{as_tensor, token_type};
use crate::dialects::teg::LAYOUT_ATTR;
use crate::ir::builder::OpState;
use crate::ir::clone::{clone_op, CloneMap};
use crate::ir::symbols::symbol_name;
use crate::ir::{Context, Diagnostic, OpId, ValueDef, ValueId};
use indexmap::IndexSet;
use std::collections::{HashMap, HashSet};

/// What a host graph is named after its device graph: `@NAME.host`.
pub const HOST_SUFFIX: &str = ".host";
/// The prefix of the names the kernel's graph reads host values by (`host.0`, ...).
pub const FEED_PREFIX: &str = "host.";

/// How a graph splits between the host and the device.
#[derive(Default)]
struct Split {
    /// The ops that run on the host, in order.
    ops: Vec<OpId>,
    /// Why each of them does (what keeps it off the NPU).
    reasons: Vec<String>,
    /// Host values the device reads.
    feeds: IndexSet<ValueId>,
    /// The name each of them goes by (`host.N`, skipping the graph's own source and sink names).
    feed_names: Vec<String>,
    /// Sinks that stay on the host (of values the NPU does not hold).
    sinks: Vec<OpId>,
    /// Sources only the host reads.
    host_only: Vec<OpId>,
    /// Sources the host reads.
    sources: Vec<OpId>,
}

/// The kernel attribute naming its host graph.
pub const HOST_ATTR: &str = "npu.host";

/// Moves `graph`'s host segment into a graph `@NAME.host` before it (a fresh symbol), if it has one; remarks name
/// each op moved. The host graph's name, for the kernel's [`HOST_ATTR`].
pub fn split_host(
    ctx: &mut Context,
    graph: OpId,
    ops: &[OpId],
    remarks: &mut Vec<Diagnostic>,
) -> Result<Option<String>, Diagnostic> {
    let mut split = classify(ctx, ops)?;
    if split.ops.is_empty() && split.sinks.is_empty() {
        return Ok(None);
    }
    let taken: HashSet<String> = ops.iter().filter_map(|&op| io_name(ctx, op)).collect();
    let mut fresh = (0..).map(|i| format!("{FEED_PREFIX}{i}")).filter(|n| !taken.contains(n));
    split.feed_names = split.feeds.iter().map(|_| fresh.next().expect("endless names")).collect();
    let name = fresh_symbol(ctx, graph);
    for (i, (&op, why)) in split.ops.iter().zip(&split.reasons).enumerate() {
        let fed = ctx.body.results(op).any(|v| split.feeds.contains(&v));
        let after =
            if fed { "its result comes to the device as a kernel input" } else { "the device does not read it" };
        let message = format!(
            "convert-teg-to-npu: '{}' runs on the host, in @{name} (step {i}): {why}; {after}",
            ctx.op_name(op)
        );
        remarks.push(Diagnostic::remark(ctx.body.op(op).loc, message));
    }
    build_host_graph(ctx, graph, &name, &split);
    cut_from_device(ctx, ops, &split);
    Ok(Some(name))
}

/// The name a source or sink goes by.
fn io_name(ctx: &Context, op: OpId) -> Option<String> {
    match decode(ctx, op) {
        Ok(OpKind::Io(Io::Source { name } | Io::Sink { name })) => Some(name),
        _ => None,
    }
}

/// `NAME.host`, or `NAME.host.K` for the first `K` no symbol next to `graph` has.
fn fresh_symbol(ctx: &Context, graph: OpId) -> String {
    let base = format!("{}{HOST_SUFFIX}", symbol_name(ctx, graph).unwrap_or("graph"));
    let parent = ctx.body.op_parent(graph).expect("a graph inside a module");
    let taken: HashSet<&str> = ctx.body.block_ops(parent).filter_map(|o| symbol_name(ctx, o)).collect();
    let mut names = std::iter::once(base.clone()).chain((1..).map(|k| format!("{base}.{k}")));
    names.find(|n| !taken.contains(n.as_str())).expect("endless names")
}

/// The op that defines `v`, if an op does.
fn def_op(ctx: &Context, v: ValueId) -> Option<OpId> {
    match ctx.body.value_def(v) {
        ValueDef::Result { op, .. } => Some(op),
        _ => None,
    }
}

/// Why `op` cannot run on the NPU, if it cannot: no pattern lowers it, or a type the NPU does not hold.
fn off_device(ctx: &Context, op: OpId) -> Option<Diagnostic> {
    if let Err(d) = check_supported(ctx, op) {
        return Some(d);
    }
    let values = ctx.body.operands(op).chain(ctx.body.results(op));
    let foreign = values.filter_map(|v| as_tensor(ctx, ctx.body.value_type(v))).find(|t| npu_elem(t.dtype).is_none());
    foreign.map(|t| {
        let message = format!("the NPU does not compute on {} (its types are bf16, f32, i8, i32)", t.dtype);
        Diagnostic::error(ctx.body.op(op).loc, message)
    })
}

/// Which ops run on the host: those off the device whose operands the host has (sources, and views, constants
/// and host ops of them), and the views and constants that make those operands (as `teg-shard` slices sources).
fn classify(ctx: &Context, ops: &[OpId]) -> Result<Split, Diagnostic> {
    let mut split = Split::default();
    let mut on_host: HashSet<ValueId> = HashSet::new();
    let mut off: HashMap<OpId, String> = HashMap::new();
    for &op in ops {
        let kind = decode(ctx, op).map_err(|m| Diagnostic::error(ctx.body.op(op).loc, m))?;
        match kind {
            OpKind::Io(Io::Source { .. }) => on_host.extend(ctx.body.results(op)),
            OpKind::Io(_) => {}
            _ => {
                let hosted = ctx.body.operands(op).all(|v| on_host.contains(&v));
                if let Some(why) = off_device(ctx, op) {
                    if !hosted {
                        let message = format!(
                            "{}; nor can it run on the host before the kernel: it reads a value computed on the \
                             device (host segments after the device's are not built yet)",
                            why.message
                        );
                        return Err(Diagnostic::error(why.loc, message));
                    }
                    off.insert(op, why.message);
                }
                // Views and constants of host values are cheap to make on the host too; compute stays on the device.
                let moves = matches!(kind, OpKind::View(_) | OpKind::Reshard(_) | OpKind::Generate(_));
                if hosted && (moves || off.contains_key(&op)) {
                    on_host.extend(ctx.body.results(op));
                }
            }
        }
    }
    let mut host_ops: HashSet<OpId> = off.keys().copied().collect();
    let mut work: Vec<OpId> = host_ops.iter().copied().collect();
    while let Some(op) = work.pop() {
        for v in ctx.body.operands(op) {
            let def = def_op(ctx, v).filter(|&d| !matches!(decode(ctx, d), Ok(OpKind::Io(Io::Source { .. }))));
            if let Some(d) = def.filter(|d| host_ops.insert(*d)) {
                work.push(d);
            }
        }
    }
    for &op in ops.iter().filter(|op| host_ops.contains(op)) {
        split.ops.push(op);
        split.reasons.push(off.remove(&op).unwrap_or_else(|| "an op on the host reads its result".into()));
    }
    let foreign = |v: ValueId| as_tensor(ctx, ctx.body.value_type(v)).is_some_and(|t| npu_elem(t.dtype).is_none());
    for &op in ops {
        let sink = matches!(decode(ctx, op), Ok(OpKind::Io(Io::Sink { .. })));
        if sink && on_host.contains(&ctx.body.operand(op, 0)) && foreign(ctx.body.operand(op, 0)) {
            split.sinks.push(op);
        }
    }
    let host_sinks: HashSet<OpId> = split.sinks.iter().copied().collect();
    for &op in ops.iter().filter(|op| !host_ops.contains(op) && !host_sinks.contains(op)) {
        for v in ctx.body.operands(op) {
            if def_op(ctx, v).is_some_and(|d| host_ops.contains(&d)) {
                split.feeds.insert(v);
            }
        }
    }
    host_ops.extend(&split.sinks);
    for &op in ops {
        if !matches!(decode(ctx, op), Ok(OpKind::Io(Io::Source { .. }))) {
            continue;
        }
        let users: Vec<OpId> = ctx.body.results(op).flat_map(|v| ctx.body.uses(v).map(|u| u.0)).collect();
        if users.iter().any(|u| host_ops.contains(u)) {
            split.sources.push(op);
            if users.iter().all(|u| host_ops.contains(u)) {
                split.host_only.push(op);
            }
        }
    }
    Ok(split)
}

/// The graph `@NAME.host`, before `graph`: the sources the host reads, the host ops, the sinks that stay on the
/// host, a sink `host.N` per value the device reads, and a sequence point over its sinks.
fn build_host_graph(ctx: &mut Context, graph: OpId, name: &str, split: &Split) {
    let loc = ctx.body.op(graph).loc;
    let region = ctx.body.create_region();
    let block = ctx.body.create_block();
    ctx.body.append_block(region, block);
    let sym = ctx.string_attr(name);
    let host = OpState::new(&mut ctx.interners, "teg.graph", loc).prop(&mut ctx.interners, "sym_name", sym);
    let host = host.region(region).create(ctx);
    ctx.body.insert_op_before(graph, host);
    let mut map = CloneMap::default();
    let mut tokens = Vec::new();
    let host_sinks: HashSet<OpId> = split.sinks.iter().copied().collect();
    for &op in split.sources.iter().chain(&split.ops).chain(&split.sinks) {
        let copy = clone_op(ctx, op, &mut map);
        ctx.body.append_op(block, copy);
        if host_sinks.contains(&op) {
            tokens.extend(ctx.body.results(copy));
        }
    }
    let token = token_type(ctx);
    for (&v, feed) in split.feeds.iter().zip(&split.feed_names) {
        let feed = ctx.string_attr(feed);
        let value = map.values.get(&v).copied().unwrap_or(v);
        let sink = OpState::new(&mut ctx.interners, "teg.sink", loc).prop(&mut ctx.interners, "name", feed);
        let sink = sink.operands(&[value]).results(&[token]).create(ctx);
        ctx.body.append_op(block, sink);
        tokens.extend(ctx.body.results(sink));
    }
    let point = OpState::new(&mut ctx.interners, "teg.sequence_point", loc).operands(&tokens).create(ctx);
    ctx.body.append_op(block, point);
}

/// The device graph without its host segment: each value the device reads from the host becomes a source
/// `host.N` (laid out as the op that made it), and the host ops, the host's sinks and the sources only the host
/// reads go.
fn cut_from_device(ctx: &mut Context, ops: &[OpId], split: &Split) {
    for (&v, feed) in split.feeds.iter().zip(&split.feed_names) {
        let def = def_op(ctx, v).expect("a host op's result");
        let feed = ctx.string_attr(feed);
        let ty = ctx.body.value_type(v);
        let mut source = OpState::new(&mut ctx.interners, "teg.source", ctx.body.op(def).loc)
            .prop(&mut ctx.interners, "name", feed)
            .results(&[ty]);
        if let Some(layout) = ctx.op_attr(def, LAYOUT_ATTR) {
            source = source.attr(&mut ctx.interners, LAYOUT_ATTR, layout);
        }
        let source = source.create(ctx);
        ctx.body.insert_op_before(def, source);
        let fed = ctx.body.result(source, 0);
        ctx.body.replace_all_uses(v, fed);
    }
    let gone: HashSet<ValueId> = split.sinks.iter().flat_map(|&s| ctx.body.results(s)).collect();
    for &op in ops {
        if matches!(decode(ctx, op), Ok(OpKind::Io(Io::SequencePoint))) {
            let kept: Vec<ValueId> = ctx.body.operands(op).filter(|v| !gone.contains(v)).collect();
            ctx.body.set_operands(op, &kept);
        }
    }
    for &op in split.sinks.iter().chain(split.ops.iter().rev()).chain(&split.host_only) {
        ctx.body.erase_op(op);
    }
}
