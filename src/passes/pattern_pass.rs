//! A pass that is only a set of rewrite patterns applied by the greedy driver (MLIR's pattern-driven passes):
//! `teg-fuse-linear`, `teg-conv-dense` and `teg-keep-partial` are each a table entry over one of these.

use super::pass::{Changed, Pass, PassEnv, PassInfo};
use crate::ir::rewrite::{apply_patterns_greedily, GreedyConfig, RewritePattern};
use crate::ir::{Context, Diagnostic, OpId};

/// Applies `patterns` greedily to everything under the op it runs on; counts the rewrites in statistic `counter`.
pub struct PatternPass {
    /// The pass's registration.
    pub info: &'static PassInfo,
    /// The patterns it applies.
    pub patterns: &'static [&'static dyn RewritePattern],
    /// The statistic counting rewrites (declared in `info`).
    pub counter: &'static str,
}

impl Pass for PatternPass {
    fn info(&self) -> &'static PassInfo {
        self.info
    }

    fn run(&mut self, ctx: &mut Context, root: OpId, env: &mut PassEnv<'_>) -> Result<Changed, Vec<Diagnostic>> {
        let outcome = apply_patterns_greedily(ctx, root, self.patterns, GreedyConfig::default());
        env.stats.add(self.counter, outcome.rewrites);
        Ok(if outcome.changed() { Changed::Yes } else { Changed::No })
    }
}
