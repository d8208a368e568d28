//! Dialect conversion: a target says which ops are legal (by op, by dialect, or by a predicate); patterns rewrite
//! illegal ops until none is left, or the conversion fails naming the first op no pattern could legalize.
//! Conversions (layout resolution, lowering to the NPU) are passes built on this driver.

use super::diag::Diagnostic;
use super::interner::FxHashMap;
use super::print::op_summary;
use super::registry::dialect_of;
use super::rewrite::{RewritePattern, Rewriter};
use super::walk::preorder;
use super::{Context, OpId};

/// Whether an op may stay after the conversion.
#[derive(Copy, Clone, Debug)]
pub enum Legality {
    /// It may stay.
    Legal,
    /// It must be rewritten.
    Illegal,
    /// It may stay if the predicate says so.
    Dynamic(fn(&Context, OpId) -> bool),
}

/// What the converted IR may contain.
#[derive(Clone, Debug, Default)]
pub struct ConversionTarget {
    ops: FxHashMap<String, Legality>,
    dialects: FxHashMap<String, Legality>,
}

impl ConversionTarget {
    /// A target with nothing declared.
    pub fn new() -> Self {
        Self::default()
    }

    /// Declares the legality of one op.
    pub fn op(mut self, name: &str, legality: Legality) -> Self {
        self.ops.insert(name.to_string(), legality);
        self
    }

    /// Declares the legality of every op of a dialect (an op's own declaration wins).
    pub fn dialect(mut self, name: &str, legality: Legality) -> Self {
        self.dialects.insert(name.to_string(), legality);
        self
    }

    /// `Some(true)` legal, `Some(false)` illegal, `None` undeclared.
    pub fn is_legal(&self, ctx: &Context, op: OpId) -> Option<bool> {
        let name = ctx.op_name(op);
        let legality = self.ops.get(name).or_else(|| self.dialects.get(dialect_of(name)))?;
        Some(match legality {
            Legality::Legal => true,
            Legality::Illegal => false,
            Legality::Dynamic(f) => f(ctx, op),
        })
    }

    fn explicitly_illegal(&self, ctx: &Context, op: OpId) -> bool {
        let name = ctx.op_name(op);
        matches!(self.ops.get(name).or_else(|| self.dialects.get(dialect_of(name))), Some(Legality::Illegal))
    }
}

/// Which ops must be converted.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ConversionMode {
    /// Illegal ops must go; undeclared ones may stay.
    Partial,
    /// Every op must end up legal; undeclared ones must be converted too.
    Full,
}

/// What a successful conversion did.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct ConversionOutcome {
    /// Patterns applied.
    pub rewrites: u64,
}

/// Rewrites the ops nested under `root` until every one satisfies `target` (per `mode`).
pub fn apply_conversion(
    ctx: &mut Context,
    root: OpId,
    target: &ConversionTarget,
    patterns: &[&dyn RewritePattern],
    mode: ConversionMode,
) -> Result<ConversionOutcome, Diagnostic> {
    let mut sorted: Vec<&dyn RewritePattern> = patterns.to_vec();
    sorted.sort_by_key(|p| std::cmp::Reverse(p.benefit()));
    let mut outcome = ConversionOutcome::default();
    let budget = preorder(&ctx.body, root).len().saturating_mul(16).max(10_000) as u64;
    loop {
        let needs = |ctx: &Context, op: OpId| match target.is_legal(ctx, op) {
            Some(legal) => !legal,
            None => mode == ConversionMode::Full,
        };
        let Some(op) = preorder(&ctx.body, root).into_iter().find(|&op| needs(ctx, op)) else { return Ok(outcome) };
        if outcome.rewrites >= budget || !rewrite_one(ctx, op, &sorted) {
            return Err(failure(ctx, target, op));
        }
        outcome.rewrites += 1;
    }
}

fn rewrite_one(ctx: &mut Context, op: OpId, patterns: &[&dyn RewritePattern]) -> bool {
    let name = ctx.op_name(op).to_string();
    let mut rw = Rewriter::new(ctx, Some(op));
    patterns.iter().filter(|p| p.root().is_none_or(|r| r == name)).any(|p| p.match_and_rewrite(op, &mut rw))
}

fn failure(ctx: &Context, target: &ConversionTarget, op: OpId) -> Diagnostic {
    let name = ctx.op_name(op);
    let why = if target.explicitly_illegal(ctx, op) { " that was explicitly marked illegal" } else { "" };
    Diagnostic::error(ctx.body.op(op).loc, format!("failed to legalize operation '{name}'{why}"))
        .with_note(ctx.body.op(op).loc, format!("see current operation: {}", op_summary(ctx, op)))
}
