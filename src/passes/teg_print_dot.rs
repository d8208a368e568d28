//! `teg-print-dot`: writes each TEG graph as Graphviz DOT, with the whitepaper's node kinds: sources and sinks
//! (houses), selectors (dashed boxes), cell operators and reductions (ellipses), block operators (3-D boxes)
//! with their signature (a component node: index space and one IPF per input and output), sequence points
//! (diamonds), and tensors as the labels of the edges that carry them. In a graph `teg-shard` split, each op is
//! filled with the colour of the devices that compute it (`teg.devices`, named in its label), and every
//! `teg.reshard` is a red node naming the collective it amounts to and its bytes, reached by red edges labelled
//! with the bytes each operand's holders send.

use super::options::{OptionKind, OptionSpec, OptionValues};
use super::pass::{Changed, Pass, PassEnv, PassInfo};
use super::registry::PassEntry;
use crate::dialects::teg::ops::{decode, Io, OpKind};
use crate::dialects::teg::shard_problem::mesh_of;
use crate::dialects::teg::tensor_type::as_tensor;
use crate::dialects::teg::transfers::{devices_of, table_of, Table};
use crate::interfaces::sharding::{signature_of, Signature};
use crate::ir::symbols::symbol_name;
use crate::ir::{Context, Diagnostic, OpId};
use std::collections::HashMap;

/// Fill colours of device groups, by their first rank (cycling).
const DEVICE_COLOURS: &[&str] =
    &["#bfdbfe", "#bbf7d0", "#fde68a", "#fbcfe8", "#ddd6fe", "#a5f3fc", "#fed7aa", "#d9f99d"];

/// The registration of `teg-print-dot`.
pub const ENTRY: PassEntry = PassEntry { info: &INFO, create };

static INFO: PassInfo = PassInfo {
    argument: "teg-print-dot",
    name: "TegPrintDot",
    description: "Write every TEG graph as a Graphviz DOT digraph",
    anchor: None,
    options: &[OptionSpec {
        name: "signatures",
        kind: OptionKind::Bool,
        default: "true",
        description: "Draw each block operator's signature beside it",
    }],
    statistics: &[("num-graphs", "Number of graphs written")],
};

fn create(options: &OptionValues) -> Box<dyn Pass> {
    Box::new(PrintDot { signatures: options.bool("signatures") })
}

struct PrintDot {
    signatures: bool,
}

impl Pass for PrintDot {
    fn info(&self) -> &'static PassInfo {
        &INFO
    }

    fn run(&mut self, ctx: &mut Context, root: OpId, env: &mut PassEnv<'_>) -> Result<Changed, Vec<Diagnostic>> {
        for graph in crate::dialects::teg::graphs_under(ctx, root) {
            let _ = env.out.write_all(dot(ctx, graph, self.signatures).as_bytes());
            env.stats.add("num-graphs", 1);
        }
        Ok(Changed::No)
    }
}

/// DOT's quoting of a one-line label.
fn quote(s: &str) -> String {
    quote_lines(&[s.to_string()])
}

/// DOT's quoting of left-aligned lines (each ended by `\l`, except a single line).
fn quote_lines(lines: &[String]) -> String {
    let escaped: Vec<String> = lines.iter().map(|l| l.replace('\\', "\\\\").replace('"', "\\\"")).collect();
    match escaped.as_slice() {
        [one] => format!("\"{one}\""),
        many => format!("\"{}\\l\"", many.join("\\l")),
    }
}

/// The DOT text of one graph, with block operators' signatures when `signatures`.
fn dot(ctx: &Context, graph: OpId, signatures: bool) -> String {
    let name = symbol_name(ctx, graph).unwrap_or("graph");
    let mut out = format!("digraph {} {{\n  rankdir=TB;\n  node [fontname=\"monospace\", fontsize=10];\n  edge [fontname=\"monospace\", fontsize=9];\n", quote(name));
    let mesh = mesh_of(ctx, graph).and_then(Result::ok);
    let mut node_of: HashMap<crate::ir::ValueId, usize> = HashMap::new();
    for (n, op) in crate::dialects::teg::graph_ops(ctx, graph).enumerate() {
        let Ok(kind) = decode(ctx, op) else { continue };
        let table = mesh.as_ref().and_then(|m| table_of(ctx, op, m.mesh())?.ok());
        let sent = table.as_ref().map(bytes_per_source);
        let (shape, label) = match &table {
            Some(t) => reshard_style(t),
            None => placed(ctx, op, node_style(ctx, op, &kind)),
        };
        out.push_str(&format!("  n{n} [{shape}, label={}];\n", quote(&label)));
        for (k, v) in ctx.body.operands(op).enumerate() {
            if let Some(&from) = node_of.get(&v) {
                let edge = as_tensor(ctx, ctx.body.value_type(v)).map_or(String::new(), |t| t.to_string());
                let style = match (&table, edge.is_empty()) {
                    (Some(_), _) => {
                        let bytes = sent.as_ref().map_or(0, |s| s[k]);
                        let label = quote_lines(&[edge, format!("{bytes} B")]);
                        out.push_str(&format!("  n{from} -> n{n} [label={label}, color=\"#dc2626\", penwidth=2];\n"));
                        continue;
                    }
                    (None, true) => ", style=dotted",
                    (None, false) => "",
                };
                out.push_str(&format!("  n{from} -> n{n} [label={}{style}];\n", quote(&edge)));
            }
        }
        if let Some(sig) = signature_of(ctx, op).filter(|_| signatures) {
            let label = quote_lines(&sig_lines(&sig));
            out.push_str(&format!("  s{n} [shape=component, style=filled, fillcolor=\"#f2f2f2\", label={label}];\n"));
            out.push_str(&format!("  s{n} -> n{n} [style=dashed, arrowhead=none];\n"));
        }
        for v in ctx.body.results(op) {
            node_of.insert(v, n);
        }
    }
    out.push_str("}\n");
    out
}

/// A shard's node filled with its devices' colour, its label naming them; other nodes as they are.
fn placed(ctx: &Context, op: OpId, (shape, label): (&'static str, String)) -> (String, String) {
    let Some(Ok(devices)) = devices_of(ctx, op, usize::MAX) else { return (shape.to_string(), label) };
    let colour = DEVICE_COLOURS[devices.first().copied().unwrap_or(0) % DEVICE_COLOURS.len()];
    let shape =
        shape.split(", ").filter(|a| !a.starts_with("style") && !a.starts_with("fillcolor")).collect::<Vec<_>>();
    let ranks: Vec<String> = devices.iter().map(|d| d.to_string()).collect();
    (format!("{}, style=filled, fillcolor=\"{colour}\"", shape.join(", ")), format!("{label} @ {}", ranks.join(",")))
}

/// A reshard's node: the collective it amounts to and the bytes it moves.
fn reshard_style(t: &Table) -> (String, String) {
    let shape = "shape=cds, style=filled, fillcolor=\"#fecaca\", color=\"#dc2626\"".to_string();
    (shape, format!("reshard: {}, {} B", t.kind(), t.bytes()))
}

/// The bytes sent from each source piece of a table.
fn bytes_per_source(t: &Table) -> Vec<u64> {
    let mut out = vec![0u64; t.sources.len()];
    for m in &t.moves {
        out[m.source] = out[m.source].saturating_add(m.bytes);
    }
    out
}

/// The node's shape attributes and label.
fn node_style(ctx: &Context, op: OpId, kind: &OpKind) -> (&'static str, String) {
    let name = ctx.op_name(op).trim_start_matches("teg.").to_string();
    match kind {
        OpKind::Io(Io::Source { name }) => {
            ("shape=invhouse, style=filled, fillcolor=\"#dbeafe\"", format!("source {name}"))
        }
        OpKind::Io(Io::Sink { name }) => ("shape=house, style=filled, fillcolor=\"#dcfce7\"", format!("sink {name}")),
        OpKind::Io(Io::SequencePoint) => ("shape=diamond, width=0.3, height=0.3", String::new()),
        OpKind::Block(b) => ("shape=box3d, style=filled, fillcolor=\"#fde68a\"", format!("block {}", b.name)),
        OpKind::Contraction(_) | OpKind::Conv2d(_) => ("shape=box3d, style=filled, fillcolor=\"#fef3c7\"", name),
        OpKind::Cell(_) => ("shape=ellipse", name),
        OpKind::Reduce(r) => {
            ("shape=ellipse, peripheries=2", format!("reduce {} over {}", r.monoid.name(), r.dims.join(", ")))
        }
        OpKind::Generate(_) => ("shape=box, style=\"rounded,dashed\"", name),
        _ => ("shape=box, style=dashed", name),
    }
}

/// `index [m=4, n=6, k=8]`, then one `name: λx.[...]⋅x + [...] : [shape]` line per input and output.
fn sig_lines(sig: &Signature) -> Vec<String> {
    let index: Vec<String> = sig.index.iter().map(|(n, e)| format!("{n}={e}")).collect();
    let mut lines = vec![format!("index [{}]", index.join(", "))];
    for (name, ipf) in sig.inputs.iter().chain(&sig.outputs) {
        lines.push(format!("{name}: {ipf}"));
    }
    for (dim, monoid) in &sig.reductions {
        lines.push(format!("{}: {}", sig.index[*dim].0, monoid.name()));
    }
    lines
}
