//! Rewrite patterns: a rule that matches one op and rewrites it through the [`Rewriter`], and the
//! [`PatternSet`] a driver builds once to find the rules for an op without comparing names.

use super::rewriter::Rewriter;
use crate::ir::interner::FxHashMap;
use crate::ir::{Context, OpId, Symbol};

/// A match-and-rewrite rule for one op kind.
pub trait RewritePattern: Sync {
    /// A name for debugging and statistics.
    fn name(&self) -> &'static str;
    /// The op name it applies to (`None`: any op).
    fn root(&self) -> Option<&'static str>;
    /// Patterns with higher benefit are tried first.
    fn benefit(&self) -> u16 {
        1
    }
    /// Rewrites `op` through `rw` if it matches; returns whether it did. A pattern that returns false must not
    /// have changed anything.
    fn match_and_rewrite(&self, op: OpId, rw: &mut Rewriter<'_>) -> bool;
}

impl std::fmt::Debug for dyn RewritePattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RewritePattern({})", self.name())
    }
}

/// Patterns grouped by the op name they apply to, each group by decreasing benefit (patterns for any op merged
/// in), built once per driver run so that finding an op's patterns is one lookup of its interned name.
pub struct PatternSet<'p, P: ?Sized> {
    by_root: FxHashMap<Symbol, Vec<&'p P>>,
    any: Vec<&'p P>,
}

impl<'p, P: ?Sized> PatternSet<'p, P> {
    /// Groups `patterns` by `root` (`None` applies to every op) and orders each group by `benefit`, keeping the
    /// given order among equal benefits.
    pub fn new(
        ctx: &mut Context,
        patterns: &[&'p P],
        root: impl Fn(&P) -> Option<&'static str>,
        benefit: impl Fn(&P) -> u16,
    ) -> Self {
        let any: Vec<&P> = patterns.iter().copied().filter(|p| root(p).is_none()).collect();
        let mut by_root: FxHashMap<Symbol, Vec<&P>> = FxHashMap::default();
        for &p in patterns {
            if let Some(name) = root(p) {
                by_root.entry(ctx.sym(name)).or_default().push(p);
            }
        }
        let order = |group: &mut Vec<&'p P>| group.sort_by_key(|p| std::cmp::Reverse(benefit(p)));
        for group in by_root.values_mut() {
            group.extend(any.iter().copied());
            order(group);
        }
        let mut set = PatternSet { by_root, any };
        order(&mut set.any);
        set
    }

    /// The patterns that may apply to `op`, most beneficial first.
    pub fn for_op(&self, ctx: &Context, op: OpId) -> &[&'p P] {
        self.by_root.get(&ctx.body.op(op).name).unwrap_or(&self.any)
    }
}

impl<'p> PatternSet<'p, dyn RewritePattern + 'p> {
    /// The set of ordinary rewrite patterns.
    pub fn of(ctx: &mut Context, patterns: &[&'p (dyn RewritePattern + 'p)]) -> Self {
        PatternSet::new(ctx, patterns, |p| p.root(), |p| p.benefit())
    }
}
