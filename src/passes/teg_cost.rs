//! `teg-cost`: for every `teg.graph` with a `teg.mesh`, prices the plans written on its ops (`teg.shard`; an op
//! without one is not split) with the cost model of `crate::shard`: per op its plan, the spec of what it writes
//! and how its partial results are combined; per edge where a consumer needs another spec than its producer
//! gives, the collectives of the reshard with their bytes and time; then the totals: time, compute,
//! communication, peak memory per device (from the live ranges of the values) and bytes moved.

use super::pass::{Changed, Pass, PassEnv, PassInfo};
use super::registry::PassEntry;
use crate::dialects::teg::graphs_under;
use crate::dialects::teg::shard_problem::{prepare, Prepared};
use crate::ir::{Context, Diagnostic, OpId};
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
            let Some(prepared) = prepare(ctx, graph, true) else { continue };
            let Prepared { machine, graph: gp, strategies, tables } = prepared?;
            // Each op's plan is pinned; the cheapest way to combine its partial results is the exact optimum.
            let fail = |e: crate::shard::ShardError| vec![Diagnostic::error(ctx.body.op(graph).loc, e.to_string())];
            let (choice, _) = crate::shard::exact::optimum(&tables).map_err(fail)?;
            let costs = evaluate(&gp.problem, &strategies, &tables, &machine, &choice);
            let name = crate::ir::symbols::symbol_name(ctx, graph).unwrap_or_default();
            let mesh: Vec<String> = machine.mesh().axes().iter().map(|a| format!("{}={}", a.name, a.size)).collect();
            let devices = machine.mesh().num_devices();
            let mut text = format!("teg-cost @{name} on mesh {} ({devices} devices)\n", mesh.join(", "));
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
