//! `teg-conv-dense`: rewrites strided and dilated convolutions into dense convolutions over strided slices of
//! their input, interleaved back (the dialect's `DenseConv` pattern, applied by the greedy driver), so that no
//! shard of them reads a row no window uses. Values are unchanged; floats are summed in the same order.

use super::pass::{Changed, Pass, PassEnv, PassInfo};
use super::registry::PassEntry;
use crate::dialects::teg::conv_dense::DenseConv;
use crate::ir::rewrite::{apply_patterns_greedily, GreedyConfig, RewritePattern};
use crate::ir::{Context, Diagnostic, OpId};

/// The registration of `teg-conv-dense`.
pub const ENTRY: PassEntry = PassEntry { info: &INFO, create: |_| Box::new(Dense) };

static INFO: PassInfo = PassInfo {
    argument: "teg-conv-dense",
    name: "TegConvDense",
    description: "Rewrite strided and dilated teg.conv2d into dense convolutions over strided views",
    anchor: None,
    options: &[],
    statistics: &[("num-rewritten", "Convolution axes made dense")],
};

struct Dense;

impl Pass for Dense {
    fn info(&self) -> &'static PassInfo {
        &INFO
    }

    fn run(&mut self, ctx: &mut Context, root: OpId, env: &mut PassEnv<'_>) -> Result<Changed, Vec<Diagnostic>> {
        let patterns: [&dyn RewritePattern; 1] = [&DenseConv];
        let outcome = apply_patterns_greedily(ctx, root, &patterns, GreedyConfig::default());
        env.stats.add("num-rewritten", outcome.rewrites);
        Ok(if outcome.changed() { Changed::Yes } else { Changed::No })
    }
}
