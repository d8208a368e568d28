//! Pattern rewriting: `RewritePattern` (match and rewrite one op), the `Rewriter` every mutation goes through
//! (so the driver learns what changed), op folding, and the greedy driver that applies patterns and folds to a
//! fixed point with an iteration bound.

use super::attrs::AttrId;
use super::body::{OpId, ValueDef, ValueId};
use super::builder::OpState;
use super::entity::EntityId;
use super::registry::OpTrait;
use super::walk::{postorder, preorder};
use super::Context;

/// What folding an op produced for one result.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Folded {
    /// The result is this constant (materialized by the dialect's constant op).
    Constant(AttrId),
    /// The result is this existing value.
    Value(ValueId),
}

/// An op's folding hook: given the constant value of each operand (if known), the folded results, or `None`.
pub type FoldFn = fn(&mut Context, OpId, &[Option<AttrId>]) -> Option<Vec<Folded>>;

/// Creates a constant op for `value` of type `ty` (a dialect hook used by folding).
pub type MaterializeFn = fn(&mut Context, AttrId, super::TypeId, super::Loc) -> Option<OpState>;

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
    /// Rewrites `op` through `rw` if it matches; returns whether it did.
    fn match_and_rewrite(&self, op: OpId, rw: &mut Rewriter<'_>) -> bool;
}

/// Mutations of the IR made on behalf of a driver: new ops go before the op being rewritten, and every change
/// is recorded so that the driver can revisit what it touched.
pub struct Rewriter<'c> {
    /// The IR.
    pub ctx: &'c mut Context,
    anchor: Option<OpId>,
    touched: Vec<OpId>,
    changed: bool,
}

impl<'c> Rewriter<'c> {
    /// A rewriter that inserts new ops before `anchor`.
    pub fn new(ctx: &'c mut Context, anchor: Option<OpId>) -> Self {
        Rewriter { ctx, anchor, touched: Vec::new(), changed: false }
    }

    /// Moves the insertion point to just before `op`.
    pub fn set_insertion_point(&mut self, op: OpId) {
        self.anchor = Some(op);
    }

    /// Creates an op at the insertion point (with the anchor's location if the state has none).
    pub fn create(&mut self, mut state: OpState) -> OpId {
        if state.loc == super::Loc::Unknown {
            if let Some(a) = self.anchor {
                state.loc = self.ctx.body.op(a).loc;
            }
        }
        let op = state.create(self.ctx);
        if let Some(a) = self.anchor {
            self.ctx.body.insert_op_before(a, op);
        }
        self.touched.push(op);
        self.changed = true;
        op
    }

    /// Replaces every use of `op`'s results by `values` and erases `op`.
    pub fn replace_op(&mut self, op: OpId, values: &[ValueId]) {
        let results: Vec<ValueId> = self.ctx.body.results(op).collect();
        assert_eq!(results.len(), values.len(), "replacement must give one value per result");
        for (old, &new) in results.into_iter().zip(values) {
            self.replace_all_uses(old, new);
        }
        self.erase_op(op);
    }

    /// Makes every user of `old` read `new`; the users are revisited.
    pub fn replace_all_uses(&mut self, old: ValueId, new: ValueId) {
        let users: Vec<OpId> = self.ctx.body.uses(old).map(|(u, _)| u).collect();
        self.touched.extend(users);
        self.ctx.body.replace_all_uses(old, new);
        self.changed = true;
    }

    /// Erases `op` (its results must be unused); the defining ops of its operands are revisited.
    pub fn erase_op(&mut self, op: OpId) {
        for v in self.ctx.body.operands(op).collect::<Vec<_>>() {
            if let ValueDef::Result { op: def, .. } = self.ctx.body.value_def(v) {
                self.touched.push(def);
            }
        }
        self.ctx.body.erase_op(op);
        self.changed = true;
    }

    /// Records an in-place change of `op` (attributes, operands) so that it is revisited.
    pub fn modified(&mut self, op: OpId) {
        self.touched.push(op);
        self.changed = true;
    }

    /// True once anything changed.
    pub fn changed(&self) -> bool {
        self.changed
    }
}

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
}

impl Default for GreedyConfig {
    fn default() -> Self {
        GreedyConfig { max_iterations: 10, max_rewrites: -1, top_down: true, fold: true }
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
    let mut sorted: Vec<&dyn RewritePattern> = patterns.to_vec();
    sorted.sort_by_key(|p| std::cmp::Reverse(p.benefit()));
    let mut outcome = GreedyOutcome::default();
    let mut constants = Constants::default();
    for _ in 0..config.max_iterations.max(1) {
        let before = outcome;
        let mut worklist = Worklist::default();
        let ops = if config.top_down { preorder(&ctx.body, root) } else { postorder(&ctx.body, root) };
        // A sweep visits each op a bounded number of times, so that patterns that keep creating work (a cycle)
        // end in a non-converged outcome instead of a hang.
        let mut budget = ops.len().saturating_mul(VISITS_PER_OP).max(MIN_VISITS);
        // The worklist pops from the back, so push in reverse to visit in walk order.
        ops.into_iter().rev().for_each(|op| worklist.push(op));
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
            visit(ctx, op, &sorted, config, &mut outcome, &mut worklist, &mut constants);
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
    patterns: &[&dyn RewritePattern],
    config: GreedyConfig,
    outcome: &mut GreedyOutcome,
    worklist: &mut Worklist,
    constants: &mut Constants,
) {
    let mut rw = Rewriter::new(ctx, Some(op));
    if is_trivially_dead(rw.ctx, op) {
        rw.erase_op(op);
        outcome.erased += 1;
    } else if config.fold && (unique_constant(&mut rw, op, constants) || try_fold(&mut rw, op, constants)) {
        outcome.folds += 1;
    } else {
        let name = rw.ctx.op_name(op).to_string();
        let applies = |p: &&&dyn RewritePattern| p.root().is_none_or(|r| r == name);
        if patterns.iter().filter(applies).any(|p| p.match_and_rewrite(op, &mut rw)) {
            outcome.rewrites += 1;
        }
    }
    for t in rw.touched {
        worklist.push(t);
    }
}

/// True for an op without side effects (the `Pure` trait, nested ops included) whose results nobody uses.
pub fn is_trivially_dead(ctx: &Context, op: OpId) -> bool {
    ctx.body.results(op).all(|v| !ctx.body.has_uses(v)) && is_pure_tree(ctx, op) && !is_terminator(ctx, op)
}

fn is_terminator(ctx: &Context, op: OpId) -> bool {
    ctx.registry.op(ctx.op_name(op)).is_some_and(|r| r.info.has_trait(OpTrait::Terminator))
}

/// True if `op` and everything nested in it is `Pure`.
pub fn is_pure_tree(ctx: &Context, op: OpId) -> bool {
    let pure = |o: OpId| ctx.registry.op(ctx.op_name(o)).is_some_and(|r| r.info.has_trait(OpTrait::Pure));
    pure(op) && preorder(&ctx.body, op).into_iter().all(|o| pure(o) || is_terminator(ctx, o))
}

/// The constant an op produces, if it is `ConstantLike` (its `value` attribute).
pub fn constant_value(ctx: &Context, v: ValueId) -> Option<AttrId> {
    let ValueDef::Result { op, .. } = ctx.body.value_def(v) else { return None };
    let info = ctx.registry.op(ctx.op_name(op))?;
    if !info.info.has_trait(OpTrait::ConstantLike) {
        return None;
    }
    ctx.op_attr(op, "value")
}

/// Constants materialized by folding, one per (block, value, type), as MLIR's operation folder keeps them.
type Constants = super::interner::FxHashMap<(super::BlockId, AttrId, super::TypeId), OpId>;

/// Folds `op` with its dialect's hook: replaces its results by existing values or new constants.
fn try_fold(rw: &mut Rewriter<'_>, op: OpId, constants: &mut Constants) -> bool {
    let ctx = &*rw.ctx;
    let Some(reg) = ctx.registry.op(ctx.op_name(op)) else { return false };
    let (Some(fold), false) = (reg.info.fold, reg.info.has_trait(OpTrait::ConstantLike)) else { return false };
    let known: Vec<Option<AttrId>> = ctx.body.operands(op).map(|v| constant_value(ctx, v)).collect();
    let Some(folded) = fold(rw.ctx, op, &known) else { return false };
    let mut values = Vec::with_capacity(folded.len());
    for (i, f) in folded.into_iter().enumerate() {
        let result = rw.ctx.body.result(op, i);
        match f {
            Folded::Value(v) => values.push(v),
            Folded::Constant(attr) => match materialize(rw, op, attr, result, constants) {
                Some(v) => values.push(v),
                None => return false,
            },
        }
    }
    rw.replace_op(op, &values);
    true
}

/// A constant op for a folded value: an existing one in the entry block of the nearest isolated-from-above
/// ancestor, or a new one created at the start of that block (so that folded constants are shared and hoisted).
fn materialize(
    rw: &mut Rewriter<'_>,
    op: OpId,
    attr: AttrId,
    result: ValueId,
    constants: &mut Constants,
) -> Option<ValueId> {
    let ty = rw.ctx.body.value_type(result);
    let block = constant_block(rw.ctx, op)?;
    let key = (block, attr, ty);
    if let Some(&c) = constants.get(&key).filter(|&&c| !rw.ctx.body.is_erased(c)) {
        return Some(rw.ctx.body.result(c, 0));
    }
    let dialect = super::registry::dialect_of(rw.ctx.op_name(op)).to_string();
    let hook = rw.ctx.registry.dialect(&dialect)?.materialize_constant?;
    let loc = rw.ctx.body.op(op).loc;
    let state = hook(rw.ctx, attr, ty, loc)?;
    let anchor = rw.anchor;
    rw.anchor = rw.ctx.body.first_op(block);
    let constant = rw.create(state);
    if rw.anchor.is_none() {
        rw.ctx.body.append_op(block, constant);
    }
    rw.anchor = anchor;
    constants.insert(key, constant);
    Some(rw.ctx.body.result(constant, 0))
}

/// Hoists a constant op to its constant block and merges it with an equal one there; true if it was merged away.
fn unique_constant(rw: &mut Rewriter<'_>, op: OpId, constants: &mut Constants) -> bool {
    let ctx = &*rw.ctx;
    let is_constant = ctx.registry.op(ctx.op_name(op)).is_some_and(|r| r.info.has_trait(OpTrait::ConstantLike));
    let (Some(value), true, 1) = (ctx.op_attr(op, "value"), is_constant, ctx.body.num_results(op)) else {
        return false;
    };
    let Some(block) = constant_block(ctx, op) else { return false };
    let key = (block, value, ctx.body.value_type(ctx.body.result(op, 0)));
    match constants.get(&key).copied().filter(|&c| c != op && !ctx.body.is_erased(c)) {
        Some(existing) => {
            let v = rw.ctx.body.result(existing, 0);
            rw.replace_op(op, &[v]);
            true
        }
        None => {
            if rw.ctx.body.op_parent(op) != Some(block) {
                match rw.ctx.body.first_op(block) {
                    Some(first) => rw.ctx.body.move_op_before(op, first),
                    None => rw.ctx.body.move_op_to_end(op, block),
                }
            }
            constants.insert(key, op);
            false
        }
    }
}

/// The entry block of the region of the nearest isolated-from-above ancestor of `op` (else `op`'s own block).
fn constant_block(ctx: &Context, op: OpId) -> Option<super::BlockId> {
    let mut cur = op;
    while let Some(parent) = ctx.body.parent_op(cur) {
        let isolated =
            ctx.registry.op(ctx.op_name(parent)).is_some_and(|r| r.info.has_trait(OpTrait::IsolatedFromAbove));
        if isolated {
            let block = ctx.body.op_parent(cur)?;
            let region = ctx.body.block_parent(block)?;
            return ctx.body.region(region).blocks.first().copied();
        }
        cur = parent;
    }
    ctx.body.op_parent(op)
}

/// A LIFO worklist without duplicates.
#[derive(Default)]
struct Worklist {
    stack: Vec<OpId>,
    queued: Vec<bool>,
}

impl Worklist {
    fn push(&mut self, op: OpId) {
        let i = op.index();
        if i >= self.queued.len() {
            self.queued.resize(i + 1, false);
        }
        if !self.queued[i] {
            self.queued[i] = true;
            self.stack.push(op);
        }
    }

    fn pop(&mut self) -> Option<OpId> {
        let op = self.stack.pop()?;
        self.queued[op.index()] = false;
        Some(op)
    }
}

impl std::fmt::Debug for dyn RewritePattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RewritePattern({})", self.name())
    }
}
