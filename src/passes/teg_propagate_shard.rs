//! `teg-propagate-shard`: sharding propagation. In every TEG graph with a `teg.mesh`, each op without a
//! `teg.shard` takes the plan that agrees with a planned neighbour along the index maps (`shard::propagate`), and
//! the plan is written as its `teg.shard`. Annotate the sources (or any ops), propagate, then `teg-shard`: the
//! GSPMD/Shardy workflow without a search. Ops no plan reaches, sinks, ops that cannot split and shards of a split
//! graph (`teg.devices`) keep none.

use super::pass::{Changed, Pass, PassEnv, PassInfo};
use super::registry::PassEntry;
use crate::dialects::teg::graphs_under;
use crate::dialects::teg::shard_plan::set_plan;
use crate::dialects::teg::shard_problem::{mesh_of, problem_of};
use crate::dialects::teg::transfers::DEVICES_ATTR;
use crate::ir::{Context, Diagnostic, OpId};
use crate::shard::propagate;

/// The registration of `teg-propagate-shard`.
pub const ENTRY: PassEntry = PassEntry { info: &INFO, create: |_| Box::new(Propagate) };

static INFO: PassInfo = PassInfo {
    argument: "teg-propagate-shard",
    name: "TegPropagateShard",
    description: "Give every TEG op without a teg.shard the plan its planned neighbours imply along the index maps",
    anchor: None,
    options: &[],
    statistics: &[("num-propagated", "Plans written")],
};

struct Propagate;

impl Pass for Propagate {
    fn info(&self) -> &'static PassInfo {
        &INFO
    }

    fn run(&mut self, ctx: &mut Context, root: OpId, env: &mut PassEnv<'_>) -> Result<Changed, Vec<Diagnostic>> {
        let mut given = 0;
        for graph in graphs_under(ctx, root) {
            let Some(machine) = mesh_of(ctx, graph) else { continue };
            let machine = machine.map_err(|d| vec![d])?;
            let gp = problem_of(ctx, graph, &machine, true)?;
            let mut plans: Vec<_> = gp.problem.ops().iter().map(|op| op.pinned.clone()).collect();
            given += propagate(&gp.problem, &machine, &mut plans);
            for ((op, problem_op), plan) in gp.ops.iter().zip(gp.problem.ops()).zip(&plans) {
                let shard = ctx.op_attr(*op, DEVICES_ATTR).is_some(); // Already split: it takes no plan.
                if let (None, Some(plan), false) = (&problem_op.pinned, plan, shard) {
                    set_plan(ctx, *op, plan, &problem_op.index, &machine);
                }
            }
        }
        env.stats.add("num-propagated", given as u64);
        Ok(if given > 0 { Changed::Yes } else { Changed::No })
    }
}
