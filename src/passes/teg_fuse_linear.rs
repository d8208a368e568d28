//! `teg-fuse-linear`: fuses `teg.add(teg.matmul(x, w), b)`, `b` a bias over the output dimension, into
//! `teg.linear(x, w, b)` when the matmul's plan leaves its summed dimension whole (the inverse of the expansion
//! `teg-shard` applies to a linear whose summed dimension is split). The rewrite is the dialect's `FuseLinear`
//! pattern, applied by the greedy driver.

use super::pass::{Changed, Pass, PassEnv, PassInfo};
use super::registry::PassEntry;
use crate::dialects::teg::fuse_linear::FuseLinear;
use crate::ir::rewrite::{apply_patterns_greedily, GreedyConfig, RewritePattern};
use crate::ir::{Context, Diagnostic, OpId};

/// The registration of `teg-fuse-linear`.
pub const ENTRY: PassEntry = PassEntry { info: &INFO, create: |_| Box::new(Fuse) };

static INFO: PassInfo = PassInfo {
    argument: "teg-fuse-linear",
    name: "TegFuseLinear",
    description: "Fuse a matmul and the add of a bias into teg.linear when the summed dimension is not split",
    anchor: None,
    options: &[],
    statistics: &[("num-fused", "Linears made")],
};

struct Fuse;

impl Pass for Fuse {
    fn info(&self) -> &'static PassInfo {
        &INFO
    }

    fn run(&mut self, ctx: &mut Context, root: OpId, env: &mut PassEnv<'_>) -> Result<Changed, Vec<Diagnostic>> {
        let patterns: [&dyn RewritePattern; 1] = [&FuseLinear];
        let outcome = apply_patterns_greedily(ctx, root, &patterns, GreedyConfig::default());
        env.stats.add("num-fused", outcome.rewrites);
        Ok(if outcome.changed() { Changed::Yes } else { Changed::No })
    }
}
