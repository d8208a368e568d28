//! `canonicalize`: applies every registered op's folding hook and canonicalization patterns with the greedy
//! driver, erasing dead pure ops, until a fixed point or an iteration limit.

use super::options::{OptionKind, OptionSpec, OptionValues};
use super::pass::{Changed, Pass, PassInfo, Statistics};
use super::registry::PassEntry;
use crate::ir::rewrite::{apply_patterns_greedily, GreedyConfig, RewritePattern};
use crate::ir::verify::op_error;
use crate::ir::{Context, Diagnostic, OpId};

/// The registration of `canonicalize`.
pub const ENTRY: PassEntry = PassEntry { info: &INFO, create };

static INFO: PassInfo = PassInfo {
    argument: "canonicalize",
    name: "Canonicalizer",
    description: "Canonicalize operations",
    anchor: None,
    options: &[
        OptionSpec {
            name: "max-iterations",
            kind: OptionKind::Int,
            default: "10",
            description: "Max. iterations between applying patterns / simplifying regions",
        },
        OptionSpec {
            name: "max-num-rewrites",
            kind: OptionKind::Int,
            default: "-1",
            description: "Max. number of pattern rewrites within an iteration",
        },
        OptionSpec {
            name: "region-simplify",
            kind: OptionKind::Enum(&["disabled", "normal", "aggressive"]),
            default: "normal",
            description: "Perform control flow optimizations to the region tree",
        },
        OptionSpec {
            name: "test-convergence",
            kind: OptionKind::Bool,
            default: "false",
            description: "Test only: Fail pass on non-convergence to detect cyclic pattern",
        },
        OptionSpec {
            name: "top-down",
            kind: OptionKind::Bool,
            default: "true",
            description: "Seed the worklist in general top-down order",
        },
    ],
    statistics: &[
        ("num-folds", "Number of operations folded"),
        ("num-rewrites", "Number of pattern rewrites applied"),
        ("num-erased", "Number of dead operations erased"),
    ],
};

fn create(options: &OptionValues) -> Box<dyn Pass> {
    let config = GreedyConfig {
        max_iterations: options.int("max-iterations").clamp(0, u32::MAX as i64) as u32,
        max_rewrites: options.int("max-num-rewrites"),
        top_down: options.bool("top-down"),
        fold: true,
    };
    Box::new(Canonicalize { config, test_convergence: options.bool("test-convergence") })
}

struct Canonicalize {
    config: GreedyConfig,
    test_convergence: bool,
}

impl Pass for Canonicalize {
    fn info(&self) -> &'static PassInfo {
        &INFO
    }

    fn run(&mut self, ctx: &mut Context, op: OpId, stats: &mut Statistics) -> Result<Changed, Vec<Diagnostic>> {
        let registry = ctx.registry.clone();
        let patterns: Vec<&dyn RewritePattern> =
            registry.ops().flat_map(|r| r.info.canonicalization.iter().copied()).collect();
        let outcome = apply_patterns_greedily(ctx, op, &patterns, self.config);
        stats.add("num-folds", outcome.folds);
        stats.add("num-rewrites", outcome.rewrites);
        stats.add("num-erased", outcome.erased);
        if self.test_convergence && !outcome.converged {
            let msg = format!("Canonicalizer failed to converge within {} iterations", self.config.max_iterations);
            return Err(vec![op_error(ctx, op, msg)]);
        }
        Ok(if outcome.changed() { Changed::Yes } else { Changed::No })
    }
}
