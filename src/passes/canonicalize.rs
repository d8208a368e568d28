//! `canonicalize`: applies every registered op's folding hook and canonicalization patterns with the greedy
//! driver, erasing dead pure ops, until a fixed point or an iteration limit.

use super::options::{OptionKind, OptionSpec, OptionValues};
use super::pass::{Changed, Pass, PassEnv, PassInfo};
use super::registry::PassEntry;
use crate::interfaces::memory_effects::is_trivially_dead;
use crate::ir::region_simplify::erase_unreachable_blocks;
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
            description: "Perform control flow optimizations to the region tree (unreachable blocks are erased; \
                          aggressive block merging is not implemented and behaves as normal)",
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
        ("num-blocks-erased", "Number of unreachable blocks erased"),
    ],
};

fn create(options: &OptionValues) -> Box<dyn Pass> {
    let config = GreedyConfig {
        max_iterations: options.int("max-iterations").clamp(0, u32::MAX as i64) as u32,
        max_rewrites: options.int("max-num-rewrites"),
        top_down: options.bool("top-down"),
        fold: true,
        is_dead: is_trivially_dead,
    };
    let region_simplify = options.text("region-simplify") != "disabled";
    Box::new(Canonicalize { config, region_simplify, test_convergence: options.bool("test-convergence") })
}

struct Canonicalize {
    config: GreedyConfig,
    region_simplify: bool,
    test_convergence: bool,
}

impl Pass for Canonicalize {
    fn info(&self) -> &'static PassInfo {
        &INFO
    }

    fn run(&mut self, ctx: &mut Context, op: OpId, env: &mut PassEnv<'_>) -> Result<Changed, Vec<Diagnostic>> {
        let registry = ctx.registry.clone();
        let patterns: Vec<&dyn RewritePattern> =
            registry.ops().flat_map(|r| r.info.canonicalization.iter().copied()).collect();
        let mut changed = false;
        // As MLIR's driver: pattern sweeps to a fixed point, then a region clean-up; repeat while the clean-up
        // changed something (erased blocks can make more patterns apply).
        for _ in 0..self.config.max_iterations.max(1) {
            let outcome = apply_patterns_greedily(ctx, op, &patterns, self.config);
            env.stats.add("num-folds", outcome.folds);
            env.stats.add("num-rewrites", outcome.rewrites);
            env.stats.add("num-erased", outcome.erased);
            changed |= outcome.changed();
            if self.test_convergence && !outcome.converged {
                let msg = format!("Canonicalizer failed to converge within {} iterations", self.config.max_iterations);
                return Err(vec![op_error(ctx, op, msg)]);
            }
            let blocks = if self.region_simplify { erase_unreachable_blocks(&mut ctx.body, op) } else { 0 };
            env.stats.add("num-blocks-erased", blocks as u64);
            changed |= blocks > 0;
            if blocks == 0 {
                break;
            }
        }
        Ok(if changed { Changed::Yes } else { Changed::No })
    }
}
