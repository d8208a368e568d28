//! `teg-auto-shard`: for every `teg.graph` with a `teg.mesh`, searches plans for its ops (the search core of
//! `crate::shard`: a greedy seed, exact windows, seeded mutations, a Pareto frontier of time, peak memory per
//! device and bytes moved) and writes the chosen plan on each op as `teg.shard`. Plans already written are pins:
//! the search keeps them. Prints the seed plan's costs, the chosen one's and the frontier. Deterministic for a
//! seed and a round count; `budget-ms` bounds the time.

use super::options::{OptionKind, OptionSpec, OptionValues};
use super::pass::{Changed, Pass, PassEnv, PassInfo};
use super::registry::PassEntry;
use crate::dialects::teg::graphs_under;
use crate::dialects::teg::shard_plan::set_plan;
use crate::dialects::teg::shard_problem::{prepare, Prepared};
use crate::ir::{Context, Diagnostic, OpId};
use crate::shard::{search, Costs, Objective, SearchOptions};
use std::time::Duration;

/// The registration of `teg-auto-shard`.
pub const ENTRY: PassEntry = PassEntry { info: &INFO, create };

static INFO: PassInfo = PassInfo {
    argument: "teg-auto-shard",
    name: "TegAutoShard",
    description: "Search shardings of every TEG graph over its teg.mesh and write them as teg.shard plans",
    anchor: None,
    options: &[
        OptionSpec { name: "seed", kind: OptionKind::UInt, default: "1", description: "Seed of the search" },
        OptionSpec {
            name: "budget-ms",
            kind: OptionKind::UInt,
            default: "1000",
            description: "Stop starting search rounds after this many milliseconds",
        },
        OptionSpec {
            name: "max-rounds",
            kind: OptionKind::UInt,
            default: "0",
            description:
                "Stop after this many rounds (0: only the budget stops it); with it the result is reproducible",
        },
        OptionSpec {
            name: "objective",
            kind: OptionKind::Enum(&["time", "memory", "bytes"]),
            default: "time",
            description: "What to minimize among plans that fit the memory per device",
        },
    ],
    statistics: &[("num-graphs", "Number of graphs sharded"), ("num-rounds", "Search rounds run")],
};

fn create(options: &OptionValues) -> Box<dyn Pass> {
    Box::new(AutoShard {
        seed: options.int("seed") as u64,
        budget: Duration::from_millis(options.int("budget-ms") as u64),
        max_rounds: options.int("max-rounds") as usize,
        objective: Objective::from_name(options.text("objective")).expect("validated enum"),
    })
}

struct AutoShard {
    seed: u64,
    budget: Duration,
    max_rounds: usize,
    objective: Objective,
}

impl Pass for AutoShard {
    fn info(&self) -> &'static PassInfo {
        &INFO
    }

    fn run(&mut self, ctx: &mut Context, root: OpId, env: &mut PassEnv<'_>) -> Result<Changed, Vec<Diagnostic>> {
        let mut changed = Changed::No;
        for graph in graphs_under(ctx, root) {
            let Some(prepared) = prepare(ctx, graph, false) else { continue };
            let Prepared { machine, graph: gp, strategies, tables } = prepared?;
            let options = SearchOptions {
                seed: self.seed,
                budget: self.budget,
                max_rounds: self.max_rounds,
                objective: self.objective,
                memory_limit: machine.memory_per_device().filter(|&m| m != u64::MAX),
            };
            let result = search(&gp.problem, &strategies, &tables, &machine, &options);
            for (k, &op) in gp.ops.iter().enumerate() {
                let index = &gp.problem.ops()[k].index;
                set_plan(ctx, op, &strategies.0[k][result.choice[k]].plan, index, &machine);
            }
            let name = crate::ir::symbols::symbol_name(ctx, graph).unwrap_or_default().to_string();
            let mut text = format!("teg-auto-shard @{name}: seed {}, {} rounds\n", self.seed, result.rounds);
            text += &format!("  seed plan: {}\n", costs(&result.seed_costs));
            text += &format!(
                "  chosen:    {}{}\n",
                costs(&result.costs),
                if result.feasible { "" } else { " (over the memory per device)" }
            );
            text += "  frontier:\n";
            for (c, _) in result.frontier.points() {
                text += &format!("    {}\n", costs(c));
            }
            let _ = env.out.write_all(text.as_bytes());
            env.stats.add("num-graphs", 1);
            env.stats.add("num-rounds", result.rounds as u64);
            changed = Changed::Yes;
        }
        Ok(changed)
    }
}

/// `time T, peak memory M B per device, moved B B`.
fn costs(c: &Costs) -> String {
    format!("time {:.0}, peak memory {} B per device, moved {:.0} B", c.time, c.peak_memory, c.moved)
}
