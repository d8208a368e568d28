//! The conversion driver. It visits the ops under a root in pre-order (definitions before uses in SSA
//! regions) from one worklist; an op the target accepts is left alone, any other is offered to its patterns with
//! its converted operands, and the ops a pattern created are visited next (only those: nothing is rescanned), so
//! the run is linear in the number of ops. On failure the body is restored from a snapshot taken at the start.

use super::pattern::{ConversionPattern, OpAdaptor};
use super::rewriter::{source_cast, ConversionRewriter, Replacements, UNREALIZED_CAST};
use super::target::ConversionTarget;
use super::type_converter::TypeConverter;
use crate::ir::diag::Diagnostic;
use crate::ir::print::op_summary;
use crate::ir::rewrite::worklist::Worklist;
use crate::ir::rewrite::{PatternSet, Rewriter};
use crate::ir::walk::preorder;
use crate::ir::{Context, OpId, ValueId};

/// Which ops must be converted.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ConversionMode {
    /// Illegal ops must go; ops the target does not mention are converted if a pattern applies, else kept.
    Partial,
    /// Every op must end up legal: ops the target does not mention must be converted too.
    Full,
}

/// What a successful conversion did.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct ConversionOutcome {
    /// Patterns applied.
    pub rewrites: u64,
    /// Casts left where a converted value meets a use that was not converted.
    pub casts: u64,
}

/// Average pattern applications per op allowed: a bound on patterns that keep re-creating what they convert.
const VISITS_PER_OP: usize = 64;
/// Visits always allowed, however small the IR.
const MIN_VISITS: usize = 10_000;

type Patterns<'p> = PatternSet<'p, dyn ConversionPattern + 'p>;

/// Converts the ops nested under `root` until every one satisfies `target` (per `mode`), converting types with
/// `types`. On failure the IR is left exactly as it was and the diagnostic names the op that could not be
/// legalized.
pub fn apply_conversion(
    ctx: &mut Context,
    root: OpId,
    target: &ConversionTarget,
    patterns: &[&dyn ConversionPattern],
    types: &TypeConverter,
    mode: ConversionMode,
) -> Result<ConversionOutcome, Diagnostic> {
    let snapshot = ctx.body.clone();
    let set = PatternSet::new(ctx, patterns, |p| p.root(), |p| p.benefit());
    let mut run = Run { target, types, mode, replaced: Replacements::default(), created_casts: Vec::new() };
    let result = run.convert(ctx, root, &set);
    match result {
        Ok(mut outcome) => {
            run.erase_replaced(ctx);
            outcome.casts = run.erase_dead_casts(ctx);
            Ok(outcome)
        }
        Err(diag) => {
            ctx.body = snapshot;
            Err(diag)
        }
    }
}

/// The state of one conversion run.
struct Run<'a> {
    target: &'a ConversionTarget,
    types: &'a TypeConverter,
    mode: ConversionMode,
    /// What was replaced by values of other types, and the casts that stand for converted values.
    replaced: Replacements,
    /// Every cast the driver inserted, in creation order.
    created_casts: Vec<OpId>,
}

impl Run<'_> {
    fn convert(&mut self, ctx: &mut Context, root: OpId, set: &Patterns<'_>) -> Result<ConversionOutcome, Diagnostic> {
        let ops = preorder(&ctx.body, root);
        let mut budget = ops.len().saturating_mul(VISITS_PER_OP).max(MIN_VISITS);
        let mut worklist = Worklist::default();
        worklist.push_in_order(&ops);
        let mut outcome = ConversionOutcome::default();
        while let Some(op) = worklist.pop() {
            if self.replaced.is_done(op) || ctx.body.is_erased(op) || ctx.body.op_parent(op).is_none() {
                continue;
            }
            let legal = self.target.is_legal(ctx, op, self.types);
            if legal == Some(true) {
                continue;
            }
            let must = legal == Some(false) || self.mode == ConversionMode::Full;
            if budget == 0 {
                return Err(failure(ctx, self.target, op));
            }
            budget -= 1;
            match self.rewrite(ctx, op, set.for_op(ctx, op)) {
                Some(created) => {
                    outcome.rewrites += 1;
                    // An op changed in place is checked again after what the pattern created.
                    worklist.push(op);
                    worklist.push_in_order(&created);
                }
                None if must => return Err(failure(ctx, self.target, op)),
                None => {}
            }
        }
        Ok(outcome)
    }

    /// Offers `op` to `patterns` with its converted operands; the ops created if one applied.
    fn rewrite(&mut self, ctx: &mut Context, op: OpId, patterns: &[&dyn ConversionPattern]) -> Option<Vec<OpId>> {
        if patterns.is_empty() {
            return None;
        }
        let mut rw = Rewriter::at(ctx, op);
        let adaptor = self.adaptor(&mut rw, op);
        let mut crw = ConversionRewriter::new(rw, self.types, &mut self.replaced);
        let applied = patterns.iter().any(|p| p.match_and_rewrite(op, &adaptor, &mut crw));
        let log = crw.into_inner().into_log();
        let casts = &self.replaced.casts;
        self.created_casts.extend(log.created.iter().copied().filter(|o| casts.contains(o)));
        applied.then_some(log.created)
    }

    /// The converted operands of `op`: the values a cast of the driver stands for, else the value cast to its
    /// converted types if the converter changes its type (a target materialization), else the value itself.
    fn adaptor(&mut self, rw: &mut Rewriter<'_>, op: OpId) -> OpAdaptor {
        let operands: Vec<ValueId> = rw.body.operands(op).collect();
        let groups = operands.into_iter().map(|v| self.converted(rw, v)).collect();
        OpAdaptor::new(groups)
    }

    fn converted(&mut self, rw: &mut Rewriter<'_>, v: ValueId) -> Vec<ValueId> {
        if let Some(group) = self.replaced.group(rw, v) {
            return group;
        }
        let ty = rw.body.value_type(v);
        let types = self.types.convert(rw.interners(), ty);
        if types == [ty] {
            return vec![v];
        }
        let state = rw.op_state(UNREALIZED_CAST).operands(&[v]).results(&types);
        let cast = rw.create(state);
        self.created_casts.push(cast);
        rw.body.results(cast).collect()
    }

    /// Erases the ops replaced by values of other types, users first. A result some op still uses (one the
    /// conversion left alone) is first replaced by a cast of its replacement back to its type, put where the op
    /// was.
    fn erase_replaced(&mut self, ctx: &mut Context) {
        for &op in self.replaced.ops.iter().rev() {
            for result in ctx.body.results(op).collect::<Vec<_>>() {
                let Some(group) = self.replaced.replaced(result).filter(|_| ctx.body.has_uses(result)) else {
                    continue;
                };
                let group = group.to_vec();
                let ty = ctx.body.value_type(result);
                let mut rw = Rewriter::at(ctx, op);
                let cast = source_cast(&mut rw, &group, ty);
                let value = rw.body.result(cast, 0);
                rw.replace_all_uses(result, value);
                self.created_casts.push(cast);
            }
            ctx.body.drop_all_references(op);
            ctx.body.erase_op(op);
        }
    }

    /// Erases the driver's casts that ended up unused (newest first, so a cast feeding another goes too);
    /// returns how many remain.
    fn erase_dead_casts(&self, ctx: &mut Context) -> u64 {
        let mut left = 0;
        for &cast in self.created_casts.iter().rev() {
            if ctx.body.is_erased(cast) {
                continue;
            }
            if ctx.body.results(cast).any(|v| ctx.body.has_uses(v)) {
                left += 1;
            } else {
                ctx.body.drop_all_references(cast);
                ctx.body.erase_op(cast);
            }
        }
        left
    }
}

fn failure(ctx: &Context, target: &ConversionTarget, op: OpId) -> Diagnostic {
    let name = ctx.op_name(op);
    let why = if target.explicitly_illegal(ctx, op) { " that was explicitly marked illegal" } else { "" };
    Diagnostic::error(ctx.body.op(op).loc, format!("failed to legalize operation '{name}'{why}"))
        .with_note(ctx.body.op(op).loc, format!("see current operation: {}", op_summary(ctx, op)))
}
