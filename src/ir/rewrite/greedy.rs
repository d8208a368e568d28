//! The greedy driver: applies patterns (by benefit) and folding to every op nested under a root until nothing
//! changes or a limit is hit, revisiting what each rewrite touched; trivially dead pure ops are erased on the way.

use super::fold::{fold_hook, try_fold, unique_constant, Constants};
use super::pattern::{PatternSet, RewritePattern};
use super::rewriter::Rewriter;
use super::worklist::Worklist;
use crate::ir::body::OpId;
use crate::ir::registry::OpTrait;
use crate::ir::walk::{postorder, preorder};
use crate::ir::Context;

/// Settings of the greedy driver (the options of `canonicalize`).
#[derive(Copy, Clone, Debug)]
pub struct GreedyConfig {
    /// Full sweeps over the IR at most (a sweep that changes nothing ends the run).
    pub max_iterations: u32,
    /// Rewrites at most (negative: unlimited).
    pub max_rewrites: i64,
    /// Visit parents before children (else children first).
    pub top_down: bool,
    /// Use the ops' folding hooks.
    pub fold: bool,
    /// Which unused ops may be erased on the way: by default those the core knows to be free of effects (the
    /// `Pure` trait); passes that may read the memory-effects interface pass its answer instead.
    pub is_dead: fn(&Context, OpId) -> bool,
}

impl Default for GreedyConfig {
    fn default() -> Self {
        GreedyConfig { max_iterations: 10, max_rewrites: -1, top_down: true, fold: true, is_dead: is_trivially_dead }
    }
}

/// Why the greedy driver stopped, and what it did.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct GreedyOutcome {
    /// A sweep changed nothing (a fixed point); false if a limit stopped it.
    pub converged: bool,
    /// Patterns applied.
    pub rewrites: u64,
    /// Ops folded away.
    pub folds: u64,
    /// Dead ops erased.
    pub erased: u64,
}

impl GreedyOutcome {
    /// True if the IR changed.
    pub fn changed(&self) -> bool {
        self.rewrites + self.folds + self.erased > 0
    }
}

/// Average visits per op allowed in one sweep of the greedy driver.
const VISITS_PER_OP: usize = 64;
/// Visits always allowed in one sweep, however small the IR.
const MIN_VISITS: usize = 10_000;

/// Applies `patterns` (by benefit) and folding to every op nested under `root` until nothing changes or a limit
/// is hit. Pure ops whose results are unused are erased on the way.
pub fn apply_patterns_greedily(
    ctx: &mut Context,
    root: OpId,
    patterns: &[&dyn RewritePattern],
    config: GreedyConfig,
) -> GreedyOutcome {
    let set = PatternSet::of(ctx, patterns);
    let mut outcome = GreedyOutcome::default();
    let mut constants = Constants::default();
    for _ in 0..config.max_iterations.max(1) {
        let before = outcome;
        let mut worklist = Worklist::default();
        let ops = if config.top_down { preorder(&ctx.body, root) } else { postorder(&ctx.body, root) };
        // A sweep visits each op a bounded number of times, so that patterns that keep creating work (a cycle)
        // end in a non-converged outcome instead of a hang.
        let mut budget = ops.len().saturating_mul(VISITS_PER_OP).max(MIN_VISITS);
        worklist.push_in_order(&ops);
        while let Some(op) = worklist.pop() {
            if budget == 0 {
                return outcome;
            }
            budget -= 1;
            if ctx.body.is_erased(op) || ctx.body.op_parent(op).is_none() {
                continue;
            }
            if config.max_rewrites >= 0 && outcome.rewrites >= config.max_rewrites as u64 {
                return outcome;
            }
            visit(ctx, op, &set, config, &mut outcome, &mut worklist, &mut constants);
        }
        if outcome == before {
            outcome.converged = true;
            return outcome;
        }
    }
    outcome
}

fn visit(
    ctx: &mut Context,
    op: OpId,
    patterns: &PatternSet<'_, dyn RewritePattern + '_>,
    config: GreedyConfig,
    outcome: &mut GreedyOutcome,
    worklist: &mut Worklist,
    constants: &mut Constants,
) {
    let fold = if config.fold { fold_hook(ctx, op) } else { None };
    let mut rw = Rewriter::at(ctx, op);
    if (config.is_dead)(&rw, op) {
        rw.erase_op(op);
        outcome.erased += 1;
    } else if config.fold
        && (unique_constant(&mut rw, op, constants) || fold.is_some_and(|f| try_fold(&mut rw, op, f, constants)))
    {
        outcome.folds += 1;
    } else if patterns.for_op(&rw, op).iter().any(|p| p.match_and_rewrite(op, &mut rw)) {
        outcome.rewrites += 1;
    }
    let log = rw.into_log();
    for t in log.touched.into_iter().chain(log.created) {
        worklist.push(t);
    }
}

/// True for an op the core knows to be free of effects (the `Pure` trait, nested ops included) whose results
/// nobody uses (the greedy driver's default; the memory-effects interface knows more).
pub fn is_trivially_dead(ctx: &Context, op: OpId) -> bool {
    ctx.body.results(op).all(|v| !ctx.body.has_uses(v)) && is_pure_tree(ctx, op) && !is_terminator(ctx, op)
}

fn is_terminator(ctx: &Context, op: OpId) -> bool {
    ctx.has_trait(op, OpTrait::Terminator)
}

/// True if `op` and everything nested in it is `Pure`.
pub fn is_pure_tree(ctx: &Context, op: OpId) -> bool {
    let pure = |o: OpId| ctx.has_trait(o, OpTrait::Pure);
    pure(op) && preorder(&ctx.body, op).into_iter().all(|o| pure(o) || is_terminator(ctx, o))
}
