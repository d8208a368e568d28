//! Host segments: ops the NPU does not run (generators without an instruction, f64 and i64 arithmetic, ops no
//! pattern lowers yet) run on the host, in TEG graphs next to the kernel that the harness evaluates in order with
//! the reference evaluator, as a runtime runs its host code:
//! - **before** the kernel, `@NAME.host` (the kernel's `npu.host`): those whose operands are the graph's sources
//!   or other such ops, with the views and constants of sources they read. Each of its values the kernel reads
//!   becomes a kernel source `host.N`, bound to the host graph's sink of that name.
//! - **after** the kernel, `@NAME.host_after` (`npu.host_after`): those that read a value computed on the
//!   device, and every op that reads theirs (values do not go back to the device). Each device value they read
//!   becomes a kernel sink `device.N`, bound to the after graph's source of that name; they read the graph's
//!   sources and the host's values (`host.N`) the same way.
//!
//! A sink of a type the NPU does not hold stays on the host. Every op moved is reported as a remark.

use super::buffers::npu_elem;
use super::check_supported;
use crate::dialects::teg::ops::{decode, Io, OpKind};
use crate::dialects::teg::tensor_type::{as_tensor, token_type};
use crate::dialects::teg::transfers::DEVICES_ATTR;
use crate::dialects::teg::LAYOUT_ATTR;
use crate::ir::builder::OpState;
use crate::ir::clone::{clone_op, CloneMap};
use crate::ir::symbols::symbol_name;
use crate::ir::{AttrId, BlockId, Context, Diagnostic, Loc, OpId, ValueDef, ValueId};
use crate::machine::NpuConfig;
use crate::passes::resolve_layouts::{Strided, IN_PLACE_ATTR};
use indexmap::IndexMap;
use std::collections::{HashMap, HashSet};

/// What the host graph before the kernel is named after the device graph: `@NAME.host`.
pub const HOST_SUFFIX: &str = ".host";
/// What the host graph after the kernel is named after the device graph: `@NAME.host_after`.
pub const AFTER_SUFFIX: &str = ".host_after";
/// The prefix of the names host values go by on the device and after it (`host.0`, ...).
pub const FEED_PREFIX: &str = "host.";
/// The prefix of the names device values go by after the kernel (`device.0`, ...).
pub const EXPORT_PREFIX: &str = "device.";
/// The kernel attribute naming the host graph run before it.
pub const HOST_ATTR: &str = "npu.host";
/// The kernel attribute naming the host graph run after it.
pub const AFTER_ATTR: &str = "npu.host_after";

/// The host graphs a split made, by symbol name.
#[derive(Default)]
pub struct HostGraphs {
    /// The graph run before the kernel.
    pub before: Option<String>,
    /// The graph run after it.
    pub after: Option<String>,
}

/// One host segment: its ops in order, why each runs on the host, and the graph's sinks it keeps.
#[derive(Default)]
struct Segment {
    ops: Vec<OpId>,
    reasons: Vec<String>,
    sinks: Vec<OpId>,
}

impl Segment {
    fn is_empty(&self) -> bool {
        self.ops.is_empty() && self.sinks.is_empty()
    }

    /// Its ops and sinks.
    fn members(&self) -> impl Iterator<Item = OpId> + '_ {
        self.ops.iter().chain(&self.sinks).copied()
    }
}

/// How a graph splits between the host and the device.
#[derive(Default)]
struct Split {
    before: Segment,
    after: Segment,
    /// Values made before the kernel that the kernel or the after segment reads, with the names they go by.
    feeds: IndexMap<ValueId, String>,
    /// Device values the after segment reads, with the names they go by.
    exports: IndexMap<ValueId, String>,
    /// The graph's sources the segment before reads.
    sources: Vec<OpId>,
    /// The graph's sources the segment after reads.
    after_sources: Vec<OpId>,
    /// Sources only the host reads.
    host_only: Vec<OpId>,
}

/// Moves `graph`'s host segments into graphs next to it (fresh symbols), if it has them; remarks name each op
/// moved.
pub fn split_host(
    ctx: &mut Context,
    graph: OpId,
    ops: &[OpId],
    cfg: &NpuConfig,
    remarks: &mut Vec<Diagnostic>,
) -> Result<HostGraphs, Diagnostic> {
    let mut split = classify(ctx, ops)?;
    if split.before.is_empty() && split.after.is_empty() {
        return Ok(HostGraphs::default());
    }
    name_crossings(ctx, ops, &mut split);
    let mut graphs = HostGraphs::default();
    if !split.before.is_empty() {
        let name = fresh_symbol(ctx, graph, HOST_SUFFIX);
        report(ctx, &split.before, &name, "", &split, remarks);
        build_before(ctx, graph, &name, &split);
        graphs.before = Some(name);
    }
    if !split.after.is_empty() {
        let name = fresh_symbol(ctx, graph, AFTER_SUFFIX);
        report(ctx, &split.after, &name, " after the kernel", &split, remarks);
        build_after(ctx, graph, &name, &split);
        graphs.after = Some(name);
    }
    cut_from_device(ctx, ops, &split, cfg);
    Ok(graphs)
}

/// One remark per op of `segment`, moved into `@name`.
fn report(ctx: &Context, segment: &Segment, name: &str, when: &str, split: &Split, remarks: &mut Vec<Diagnostic>) {
    for (i, (&op, why)) in segment.ops.iter().zip(&segment.reasons).enumerate() {
        let fed = ctx.body.results(op).any(|v| split.feeds.contains_key(&v));
        let then = match (fed, when.is_empty()) {
            (true, _) => "its result comes to the device as a kernel input",
            (false, true) => "the device does not read it",
            (false, false) => "its result stays on the host",
        };
        let message = format!(
            "convert-teg-to-npu: '{}' runs on the host{when}, in @{name} (step {i}): {why}; {then}",
            ctx.op_name(op)
        );
        remarks.push(Diagnostic::remark(ctx.body.op(op).loc, message));
    }
}

/// The name a source or sink goes by.
fn io_name(ctx: &Context, op: OpId) -> Option<String> {
    match decode(ctx, op) {
        Ok(OpKind::Io(Io::Source { name } | Io::Sink { name })) => Some(name),
        _ => None,
    }
}

/// Names each value crossing between segments (`host.N`, `device.N`), skipping the graph's own source and sink names.
fn name_crossings(ctx: &Context, ops: &[OpId], split: &mut Split) {
    let taken: HashSet<String> = ops.iter().filter_map(|&op| io_name(ctx, op)).collect();
    let fresh = |prefix: &str, k: &mut usize| loop {
        let name = format!("{prefix}{k}");
        *k += 1;
        if !taken.contains(&name) {
            return name;
        }
    };
    let (mut h, mut d) = (0, 0);
    for name in split.feeds.values_mut() {
        *name = fresh(FEED_PREFIX, &mut h);
    }
    for name in split.exports.values_mut() {
        *name = fresh(EXPORT_PREFIX, &mut d);
    }
}

/// `NAME` + `suffix`, or that and `.K` for the first `K` no symbol next to `graph` has.
fn fresh_symbol(ctx: &Context, graph: OpId, suffix: &str) -> String {
    let base = format!("{}{suffix}", symbol_name(ctx, graph).unwrap_or("graph"));
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

fn is_source(ctx: &Context, op: OpId) -> bool {
    matches!(decode(ctx, op), Ok(OpKind::Io(Io::Source { .. })))
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

/// Which ops run on the host, and which values cross between the segments and the device.
fn classify(ctx: &Context, ops: &[OpId]) -> Result<Split, Diagnostic> {
    let mut split = Split::default();
    let (on_host, off, late) = walk(ctx, ops, &mut split.after)?;
    close_before(ctx, ops, &on_host, off, &mut split.before);
    let before: HashSet<OpId> = split.before.members().collect();
    let after: HashSet<OpId> = split.after.members().collect();
    let made_before = |v: ValueId| def_op(ctx, v).is_some_and(|d| before.contains(&d));
    let point = |op: OpId| matches!(decode(ctx, op), Ok(OpKind::Io(Io::SequencePoint)));
    for &op in ops.iter().filter(|&&op| !before.contains(&op) && !point(op)) {
        let later = after.contains(&op);
        for v in ctx.body.operands(op) {
            if made_before(v) {
                split.feeds.entry(v).or_default();
            } else if later && !late.contains(&v) && !def_op(ctx, v).is_some_and(|d| is_source(ctx, d)) {
                split.exports.entry(v).or_default();
            }
        }
    }
    for &op in ops.iter().filter(|&&op| is_source(ctx, op)) {
        let users: Vec<OpId> = ctx.body.results(op).flat_map(|v| ctx.body.uses(v).map(|u| u.0)).collect();
        let (early, later) = (users.iter().any(|u| before.contains(u)), users.iter().any(|u| after.contains(u)));
        if early {
            split.sources.push(op);
        }
        if later {
            split.after_sources.push(op);
        }
        if (early || later) && users.iter().all(|u| before.contains(u) || after.contains(u)) {
            split.host_only.push(op);
        }
    }
    Ok(split)
}

/// Walks the ops in order: the values the host has before the kernel (sources, and views, constants and host
/// ops of them), the ops that run there for want of an instruction (with why), and the values made after the
/// kernel (`after` collects those ops and the sinks of their values).
#[allow(clippy::type_complexity)]
fn walk(
    ctx: &Context,
    ops: &[OpId],
    after: &mut Segment,
) -> Result<(HashSet<ValueId>, HashMap<OpId, String>, HashSet<ValueId>), Diagnostic> {
    let mut on_host: HashSet<ValueId> = HashSet::new();
    let mut off: HashMap<OpId, String> = HashMap::new();
    let mut late: HashSet<ValueId> = HashSet::new();
    for &op in ops {
        let kind = decode(ctx, op).map_err(|m| Diagnostic::error(ctx.body.op(op).loc, m))?;
        match kind {
            OpKind::Io(Io::Source { .. }) => on_host.extend(ctx.body.results(op)),
            OpKind::Io(Io::Sink { .. }) if late.contains(&ctx.body.operand(op, 0)) => after.sinks.push(op),
            OpKind::Io(_) => {}
            _ if ctx.body.operands(op).any(|v| late.contains(&v)) => {
                after.ops.push(op);
                after.reasons.push("it reads a value made on the host after the kernel".into());
                late.extend(ctx.body.results(op));
            }
            _ => {
                let hosted = ctx.body.operands(op).all(|v| on_host.contains(&v));
                if let Some(why) = off_device(ctx, op) {
                    if !hosted {
                        after.ops.push(op);
                        after.reasons.push(format!("{}; it reads a value computed on the device", why.message));
                        late.extend(ctx.body.results(op));
                        continue;
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
    Ok((on_host, off, late))
}

/// The segment before the kernel: the ops off the device that the host can run first, the ops making their
/// operands, and the sinks of host values of types the NPU does not hold.
fn close_before(
    ctx: &Context,
    ops: &[OpId],
    on_host: &HashSet<ValueId>,
    mut off: HashMap<OpId, String>,
    before: &mut Segment,
) {
    let mut host_ops: HashSet<OpId> = off.keys().copied().collect();
    let mut work: Vec<OpId> = host_ops.iter().copied().collect();
    while let Some(op) = work.pop() {
        for v in ctx.body.operands(op) {
            let def = def_op(ctx, v).filter(|&d| !is_source(ctx, d));
            if let Some(d) = def.filter(|d| host_ops.insert(*d)) {
                work.push(d);
            }
        }
    }
    for &op in ops.iter().filter(|op| host_ops.contains(op)) {
        before.ops.push(op);
        before.reasons.push(off.remove(&op).unwrap_or_else(|| "an op on the host reads its result".into()));
    }
    let foreign = |v: ValueId| as_tensor(ctx, ctx.body.value_type(v)).is_some_and(|t| npu_elem(t.dtype).is_none());
    for &op in ops {
        let sink = matches!(decode(ctx, op), Ok(OpKind::Io(Io::Sink { .. })));
        if sink && on_host.contains(&ctx.body.operand(op, 0)) && foreign(ctx.body.operand(op, 0)) {
            before.sinks.push(op);
        }
    }
}

/// A new graph `@name` next to `graph` (before it, or after), and its block.
fn new_graph(ctx: &mut Context, graph: OpId, name: &str, before: bool) -> BlockId {
    let loc = ctx.body.op(graph).loc;
    let region = ctx.body.create_region();
    let block = ctx.body.create_block();
    ctx.body.append_block(region, block);
    let sym = ctx.string_attr(name);
    let host = OpState::new(&mut ctx.interners, "teg.graph", loc).prop(&mut ctx.interners, "sym_name", sym);
    let host = host.region(region).create(ctx);
    match before {
        true => ctx.body.insert_op_before(graph, host),
        false => ctx.body.insert_op_after(graph, host),
    }
    block
}

/// A sink `@name` of `value` (not placed).
fn new_sink(ctx: &mut Context, name: &str, value: ValueId, loc: Loc) -> OpId {
    let token = token_type(ctx);
    let name = ctx.string_attr(name);
    let sink = OpState::new(&mut ctx.interners, "teg.sink", loc).prop(&mut ctx.interners, "name", name);
    sink.operands(&[value]).results(&[token]).create(ctx)
}

/// A source `@name` of `v`'s type (not placed), laid out as `layout_of` is if it has a layout.
fn new_source(ctx: &mut Context, name: &str, v: ValueId, layout: Option<AttrId>) -> OpId {
    let loc = def_op(ctx, v).map_or(Loc::default(), |d| ctx.body.op(d).loc);
    let name = ctx.string_attr(name);
    let ty = ctx.body.value_type(v);
    let mut source = OpState::new(&mut ctx.interners, "teg.source", loc).prop(&mut ctx.interners, "name", name);
    source = source.results(&[ty]);
    if let Some(layout) = layout {
        source = source.attr(&mut ctx.interners, LAYOUT_ATTR, layout);
    }
    source.create(ctx)
}

/// The layout the kernel takes a value `v` made by `def` on the host in: `def`'s, unless `def` is a view read in
/// place (its layout is of its operand's buffer, which stays on the host): then rows of its own.
fn fed_layout(ctx: &mut Context, def: OpId, v: ValueId, cfg: &NpuConfig) -> AttrId {
    match ctx.op_attr(def, LAYOUT_ATTR).filter(|_| ctx.op_attr(def, IN_PLACE_ATTR).is_none()) {
        Some(layout) => layout,
        None => {
            let shape = as_tensor(ctx, ctx.body.value_type(v)).map(|t| t.shape()).unwrap_or_default();
            let extents = if shape.is_empty() { vec![1] } else { shape };
            Strided::row_major(&extents, cfg).attr(&mut ctx.interners, &extents)
        }
    }
}

/// Ends `block` with a sequence point over `tokens`.
fn end_graph(ctx: &mut Context, block: BlockId, tokens: &[ValueId], loc: Loc) {
    let point = OpState::new(&mut ctx.interners, "teg.sequence_point", loc).operands(tokens).create(ctx);
    ctx.body.append_op(block, point);
}

/// The graph before the kernel: the sources it reads, its ops, the sinks it keeps, a sink `host.N` per value it
/// hands on, and a sequence point over its sinks.
fn build_before(ctx: &mut Context, graph: OpId, name: &str, split: &Split) {
    let loc = ctx.body.op(graph).loc;
    let block = new_graph(ctx, graph, name, true);
    let mut map = CloneMap::default();
    let mut tokens = Vec::new();
    let kept: HashSet<OpId> = split.before.sinks.iter().copied().collect();
    for &op in split.sources.iter().chain(&split.before.ops).chain(&split.before.sinks) {
        let copy = clone_op(ctx, op, &mut map);
        ctx.body.append_op(block, copy);
        if kept.contains(&op) {
            tokens.extend(ctx.body.results(copy));
        }
    }
    for (&v, feed) in &split.feeds {
        let value = map.values.get(&v).copied().unwrap_or(v);
        let sink = new_sink(ctx, feed, value, loc);
        ctx.body.append_op(block, sink);
        tokens.extend(ctx.body.results(sink));
    }
    end_graph(ctx, block, &tokens, loc);
}

/// The graph after the kernel: the sources it reads (the graph's, `host.N` and `device.N`), its ops, its sinks,
/// and a sequence point over them.
fn build_after(ctx: &mut Context, graph: OpId, name: &str, split: &Split) {
    let loc = ctx.body.op(graph).loc;
    let block = new_graph(ctx, graph, name, false);
    let mut map = CloneMap::default();
    for &op in &split.after_sources {
        let copy = clone_op(ctx, op, &mut map);
        ctx.body.append_op(block, copy);
    }
    let read: HashSet<ValueId> = split.after.members().flat_map(|op| ctx.body.operands(op)).collect();
    let crossing = split.feeds.iter().filter(|(v, _)| read.contains(v)).chain(&split.exports);
    for (&v, name) in crossing.collect::<Vec<_>>() {
        let source = new_source(ctx, name, v, None);
        ctx.body.append_op(block, source);
        map.values.insert(v, ctx.body.result(source, 0));
    }
    let mut tokens = Vec::new();
    let sinks: HashSet<OpId> = split.after.sinks.iter().copied().collect();
    for op in split.after.members() {
        let copy = clone_op(ctx, op, &mut map);
        ctx.body.append_op(block, copy);
        if sinks.contains(&op) {
            tokens.extend(ctx.body.results(copy));
        }
    }
    end_graph(ctx, block, &tokens, loc);
}

/// The device graph without its host segments: each value the device reads from the host becomes a source
/// `host.N` (laid out as the op that made it), each device value the host reads after it gets a sink `device.N`,
/// and the host ops, the host's sinks and the sources only the host reads go.
fn cut_from_device(ctx: &mut Context, ops: &[OpId], split: &Split, cfg: &NpuConfig) {
    let host: HashSet<OpId> = split.before.members().chain(split.after.members()).collect();
    for (&v, feed) in &split.feeds {
        if ctx.body.uses(v).all(|(user, _)| host.contains(&user)) {
            continue;
        }
        let def = def_op(ctx, v).expect("a host op's result");
        let layout = fed_layout(ctx, def, v, cfg);
        let source = new_source(ctx, feed, v, Some(layout));
        // On the chip its maker was given (views of it were laid out in place there).
        if let Some(devices) = ctx.op_attr(def, DEVICES_ATTR) {
            ctx.set_op_attr(source, DEVICES_ATTR, devices);
        }
        ctx.body.insert_op_before(def, source);
        let fed = ctx.body.result(source, 0);
        ctx.body.replace_all_uses(v, fed);
    }
    let point = ops.iter().rev().copied().find(|&op| matches!(decode(ctx, op), Ok(OpKind::Io(Io::SequencePoint))));
    let mut added = Vec::new();
    for (&v, name) in &split.exports {
        let def = def_op(ctx, v).expect("a device op's result");
        let sink = new_sink(ctx, name, v, ctx.body.op(def).loc);
        ctx.body.insert_op_after(def, sink);
        added.extend(ctx.body.results(sink));
    }
    let gone: HashSet<ValueId> =
        split.before.sinks.iter().chain(&split.after.sinks).flat_map(|&s| ctx.body.results(s)).collect();
    for &op in ops {
        if matches!(decode(ctx, op), Ok(OpKind::Io(Io::SequencePoint))) {
            let mut kept: Vec<ValueId> = ctx.body.operands(op).filter(|v| !gone.contains(v)).collect();
            if Some(op) == point {
                kept.extend(&added);
            }
            ctx.body.set_operands(op, &kept);
        }
    }
    let erased = split.after.sinks.iter().chain(split.after.ops.iter().rev());
    let erased = erased.chain(&split.before.sinks).chain(split.before.ops.iter().rev()).chain(&split.host_only);
    for &op in erased {
        ctx.body.erase_op(op);
    }
}
