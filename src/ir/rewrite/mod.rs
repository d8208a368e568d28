//! Pattern rewriting, in MLIR's split: [`pattern`] (what a rewrite rule is and how a driver finds the rules for
//! an op), [`rewriter`] (the only way a pattern changes IR; it records every change so that drivers know what to
//! revisit), [`fold`] (op folding and constant materialization) and [`greedy`] (the driver that applies patterns
//! and folds to a fixed point). Dialect conversion (`ir::conversion`) is the other driver over the same parts.

pub mod fold;
pub mod greedy;
pub mod pattern;
pub mod rewriter;
pub(crate) mod worklist;

pub use fold::{constant_value, FoldFn, Folded, MaterializeFn};
pub use greedy::{apply_patterns_greedily, is_pure_tree, is_trivially_dead, GreedyConfig, GreedyOutcome};
pub use pattern::{PatternSet, RewritePattern};
pub use rewriter::Rewriter;
