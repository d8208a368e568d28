//! `teg-keep-partial`: keeps partial results partial across linear ops. After `teg-shard`, an add, sub or neg of
//! values assembled by alike `teg.reshard`s (partial sums, or plain pieces) is applied to the pieces where they
//! lie and reshards once (the dialect's `CombineLater` pattern, applied by the greedy driver). Run `cse` after it:
//! the consumers' shards give identical piece ops.

use super::pass::{Changed, Pass, PassEnv, PassInfo};
use super::registry::PassEntry;
use crate::dialects::teg::keep_partial::COMBINE_LATER;
use crate::ir::rewrite::{apply_patterns_greedily, GreedyConfig, RewritePattern};
use crate::ir::{Context, Diagnostic, OpId};

/// The registration of `teg-keep-partial`.
pub const ENTRY: PassEntry = PassEntry { info: &INFO, create: |_| Box::new(KeepPartial) };

static INFO: PassInfo = PassInfo {
    argument: "teg-keep-partial",
    name: "TegKeepPartial",
    description: "Apply adds, subs and negs of resharded values to the pieces before the reshard",
    anchor: None,
    options: &[],
    statistics: &[("num-deferred", "Linear ops moved before a reshard")],
};

struct KeepPartial;

impl Pass for KeepPartial {
    fn info(&self) -> &'static PassInfo {
        &INFO
    }

    fn run(&mut self, ctx: &mut Context, root: OpId, env: &mut PassEnv<'_>) -> Result<Changed, Vec<Diagnostic>> {
        let patterns: Vec<&dyn RewritePattern> = COMBINE_LATER.iter().map(|p| p as &dyn RewritePattern).collect();
        let outcome = apply_patterns_greedily(ctx, root, &patterns, GreedyConfig::default());
        env.stats.add("num-deferred", outcome.rewrites);
        Ok(if outcome.changed() { Changed::Yes } else { Changed::No })
    }
}
