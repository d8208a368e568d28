//! `teg-prune`: removes from every TEG graph the ops that no sink or sequence point observes: everything that
//! neither they nor what they read (transitively) reads. Sources stay, whether read or not: they are the graph's
//! inputs, which `tap-run` binds by name. One backward walk from the observers (an explicit stack, each op visited
//! once), then one sweep that erases the rest, users first.

use super::pass::{Changed, Pass, PassEnv, PassInfo};
use super::registry::PassEntry;
use crate::dialects::teg::ops::{decode, OpKind};
use crate::dialects::teg::{graph_ops, graphs_under};
use crate::ir::body::ValueDef;
use crate::ir::{Context, Diagnostic, OpId};
use std::collections::HashSet;

/// The registration of `teg-prune`.
pub const ENTRY: PassEntry = PassEntry { info: &INFO, create: |_| Box::new(Prune) };

static INFO: PassInfo = PassInfo {
    argument: "teg-prune",
    name: "TegPrune",
    description: "Remove the TEG ops that no sink or sequence point observes",
    anchor: None,
    options: &[],
    statistics: &[("num-pruned", "Ops removed")],
};

struct Prune;

impl Pass for Prune {
    fn info(&self) -> &'static PassInfo {
        &INFO
    }

    fn run(&mut self, ctx: &mut Context, root: OpId, env: &mut PassEnv<'_>) -> Result<Changed, Vec<Diagnostic>> {
        let mut pruned = 0u64;
        for graph in graphs_under(ctx, root) {
            let ops: Vec<OpId> = graph_ops(ctx, graph).collect();
            let observed = observed(ctx, &ops);
            for &op in ops.iter().rev() {
                if !observed.contains(&op) {
                    ctx.body.drop_all_references(op);
                    ctx.body.erase_op(op);
                    pruned += 1;
                }
            }
        }
        env.stats.add("num-pruned", pruned);
        Ok(if pruned > 0 { Changed::Yes } else { Changed::No })
    }
}

/// The ops of `ops` that sinks, sequence points and sources are, or read, transitively.
fn observed(ctx: &Context, ops: &[OpId]) -> HashSet<OpId> {
    let mut stack: Vec<OpId> = ops.iter().copied().filter(|&op| matches!(decode(ctx, op), Ok(OpKind::Io(_)))).collect();
    let mut seen: HashSet<OpId> = stack.iter().copied().collect();
    while let Some(op) = stack.pop() {
        for v in ctx.body.operands(op) {
            if let ValueDef::Result { op: producer, .. } = ctx.body.value_def(v) {
                if seen.insert(producer) {
                    stack.push(producer);
                }
            }
        }
    }
    seen
}
