//! `teg-cost`: for every `teg.graph` with a `teg.mesh`, prices the plans written on its ops (`teg.shard`; an op
//! without one is not split) with the cost model of `crate::shard`: per op its plan, the spec of what it writes
//! and how its partial results are combined; per edge where a consumer needs another spec than its producer
//! gives, the collectives of the reshard with their bytes and time; then the totals: time, compute,
//! communication, peak memory per device (from the live ranges of the values) and bytes moved. On a graph
//! `teg-shard` split, it prints instead what each device does (`dialects::teg::device_costs`): ops, compute,
//! peak memory, bytes received and sent, and when it finishes (the critical path with transfers).

use super::pass::{Changed, Pass, PassEnv, PassInfo};
use super::registry::PassEntry;
use crate::dialects::teg::device_costs::device_costs;
use crate::dialects::teg::graphs_under;
use crate::dialects::teg::shard_problem::{mesh_of, prepare, Prepared};
use crate::dialects::teg::transfers::DEVICES_ATTR;
use crate::ir::walk::preorder;
use crate::ir::{Context, Diagnostic, OpId};
use crate::machine::Machine;
use crate::shard::{evaluate, report};

/// The registration of `teg-cost`.
pub const ENTRY: PassEntry = PassEntry { info: &INFO, create };

static INFO: PassInfo = PassInfo {
    argument: "teg-cost",
    name: "TegCost",
    description: "Print the cost of the teg.shard plans of every TEG graph on its teg.mesh",
    anchor: None,
    options: &[],
    statistics: &[("num-graphs", "Number of graphs priced")],
};

fn create(_: &super::options::OptionValues) -> Box<dyn Pass> {
    Box::new(Cost)
}

struct Cost;

impl Pass for Cost {
    fn info(&self) -> &'static PassInfo {
        &INFO
    }

    fn run(&mut self, ctx: &mut Context, root: OpId, env: &mut PassEnv<'_>) -> Result<Changed, Vec<Diagnostic>> {
        for graph in graphs_under(ctx, root) {
            if let Some(text) = per_device(ctx, graph)? {
                let _ = env.out.write_all(text.as_bytes());
                env.stats.add("num-graphs", 1);
                continue;
            }
            let Some(prepared) = prepare(ctx, graph, true) else { continue };
            let Prepared { machine, graph: gp, strategies, tables } = prepared?;
            // Each op's plan is pinned; the cheapest way to combine its partial results is the exact optimum.
            let fail = |e: crate::shard::ShardError| vec![Diagnostic::error(ctx.body.op(graph).loc, e.to_string())];
            let (choice, _) = crate::shard::exact::optimum(&tables).map_err(fail)?;
            let costs = evaluate(&gp.problem, &strategies, &tables, &machine, &choice);
            let mut text = header(ctx, graph, &machine) + "\n";
            text += &report::plans(&gp.problem, &strategies, &tables, &machine, &choice);
            text += &format!(
                "total: time {:.0}, compute {:.0}, communication {:.0}, peak memory {} B per device, moved {:.0} B\n",
                costs.time, costs.compute, costs.communication, costs.peak_memory, costs.moved
            );
            let _ = env.out.write_all(text.as_bytes());
            env.stats.add("num-graphs", 1);
        }
        Ok(Changed::No)
    }
}

/// `teg-cost @name on mesh x=2, y=2 (4 devices)`.
fn header(ctx: &Context, graph: OpId, machine: &Machine) -> String {
    let name = crate::ir::symbols::symbol_name(ctx, graph).unwrap_or_default();
    let mesh: Vec<String> = machine.mesh().axes().iter().map(|a| format!("{}={}", a.name, a.size)).collect();
    format!("teg-cost @{name} on mesh {} ({} devices)", mesh.join(", "), machine.mesh().num_devices())
}

/// For a graph `teg-shard` split (an op has `teg.devices`), the table of what each device does; `None` for other
/// graphs.
fn per_device(ctx: &Context, graph: OpId) -> Result<Option<String>, Vec<Diagnostic>> {
    let split = preorder(&ctx.body, graph).into_iter().any(|op| ctx.op_attr(op, DEVICES_ATTR).is_some());
    let Some(machine) = mesh_of(ctx, graph).filter(|_| split) else { return Ok(None) };
    let machine = machine.map_err(|d| vec![d])?;
    let split = device_costs(ctx, graph, &machine).map_err(|d| vec![d])?;
    let costs = &split.devices;
    let mut text = header(ctx, graph, &machine) + ", split by teg-shard\n";
    text += "device | ops | compute | peak memory | received | sent | finish\n";
    for (d, c) in costs.iter().enumerate() {
        text += &format!(
            "{d} | {} | {:.0} | {} B | {} B | {} B | {:.0}\n",
            c.ops, c.compute, c.peak_memory, c.received, c.sent, c.finish
        );
    }
    let time = costs.iter().map(|c| c.finish).fold(0.0, f64::max);
    let peak = costs.iter().map(|c| c.peak_memory).max().unwrap_or(0);
    let moved = costs.iter().fold(0u64, |n, c| n.saturating_add(c.received));
    let axes = machine.mesh().axes().iter().zip(&split.per_axis).map(|(a, b)| format!("{} {b} B", a.name));
    let axes = axes.collect::<Vec<_>>().join(", ");
    text += &format!("total: time {time:.0}, peak memory {peak} B on one device, moved {moved} B (across {axes})\n");
    Ok(Some(text))
}
