//! `cse`: common subexpression elimination. A pure op without regions that repeats an earlier op (same name,
//! attributes, properties, operands and result types) visible from it is replaced by that op; trivially dead ops
//! are erased on the way. Values visible from a block are those of the block's earlier ops and of enclosing
//! regions (not across isolated-from-above ops).

use super::pass::{Changed, Pass, PassEnv, PassInfo};
use super::registry::PassEntry;
use crate::interfaces::memory_effects::{has_no_effects, is_trivially_dead};
use crate::ir::interner::{FxHashMap, FxHasher};
use crate::ir::print::is_isolated;
use crate::ir::{BlockId, Context, Diagnostic, OpId, ValueId};
use std::hash::{Hash, Hasher};

/// The registration of `cse`.
pub const ENTRY: PassEntry = PassEntry { info: &INFO, create: |_| Box::new(Cse) };

static INFO: PassInfo = PassInfo {
    argument: "cse",
    name: "CSE",
    description: "Eliminate common sub-expressions",
    anchor: None,
    options: &[],
    statistics: &[("num-cse'd", "Number of operations CSE'd"), ("num-dce'd", "Number of operations DCE'd")],
};

struct Cse;

/// What makes two ops interchangeable.
/// Ops seen in a block, by the hash of what makes two ops equivalent (name, attributes, properties, operands,
/// result types). A hash match is confirmed with [`same_op`]; keeping only hashes keeps the table small and cache
/// friendly on million-op functions.
type Scope = FxHashMap<u64, OpId>;

impl Pass for Cse {
    fn info(&self) -> &'static PassInfo {
        &INFO
    }

    fn run(&mut self, ctx: &mut Context, op: OpId, env: &mut PassEnv<'_>) -> Result<Changed, Vec<Diagnostic>> {
        let mut scopes: Vec<Scope> = Vec::new();
        let mut counts = (0u64, 0u64);
        cse_regions(ctx, op, &mut scopes, &mut counts);
        env.stats.add("num-cse'd", counts.0);
        env.stats.add("num-dce'd", counts.1);
        Ok(if counts.0 + counts.1 > 0 { Changed::Yes } else { Changed::No })
    }
}

fn cse_regions(ctx: &mut Context, op: OpId, scopes: &mut Vec<Scope>, counts: &mut (u64, u64)) {
    let inherited = if is_isolated(ctx, op) { std::mem::take(scopes) } else { Vec::new() };
    for r in ctx.body.regions(op).to_vec() {
        for b in ctx.body.region(r).blocks.clone() {
            scopes.push(FxHashMap::default());
            cse_block(ctx, b, scopes, counts);
            scopes.pop();
        }
    }
    if !inherited.is_empty() {
        *scopes = inherited;
    }
}

fn cse_block(ctx: &mut Context, block: BlockId, scopes: &mut Vec<Scope>, counts: &mut (u64, u64)) {
    let ops: Vec<OpId> = ctx.body.block_ops(block).collect();
    for op in ops {
        if is_trivially_dead(ctx, op) {
            ctx.body.drop_all_references(op);
            ctx.body.erase_op(op);
            counts.1 += 1;
            continue;
        }
        if !ctx.body.regions(op).is_empty() {
            cse_regions(ctx, op, scopes, counts);
            continue;
        }
        if ctx.body.num_results(op) == 0 || !has_no_effects(ctx, op) {
            continue;
        }
        let key = hash_of(ctx, op);
        match scopes.iter().rev().find_map(|s| s.get(&key).copied()).filter(|&e| same_op(ctx, e, op)) {
            Some(existing) => {
                let pairs: Vec<(ValueId, ValueId)> = ctx.body.results(op).zip(ctx.body.results(existing)).collect();
                for (old, new) in pairs {
                    ctx.body.replace_all_uses(old, new);
                }
                ctx.body.erase_op(op);
                counts.0 += 1;
            }
            None => {
                // (On a 64-bit hash collision with a different op, the first one stays: a missed merge, never a
                // wrong one.)
                scopes.last_mut().expect("a block scope is open").entry(key).or_insert(op);
            }
        }
    }
}

fn hash_of(ctx: &Context, op: OpId) -> u64 {
    let data = ctx.body.op(op);
    let mut h = FxHasher::default();
    (data.name, data.attrs, data.props).hash(&mut h);
    ctx.body.operands(op).for_each(|v| v.hash(&mut h));
    ctx.body.results(op).for_each(|v| ctx.body.value_type(v).hash(&mut h));
    h.finish()
}

/// Whether `a` and `b` compute the same thing: same name, attributes, properties, operands and result types.
fn same_op(ctx: &Context, a: OpId, b: OpId) -> bool {
    let (da, db) = (ctx.body.op(a), ctx.body.op(b));
    let types = |o: OpId| ctx.body.results(o).map(|v| ctx.body.value_type(v));
    (da.name, da.attrs, da.props) == (db.name, db.attrs, db.props)
        && ctx.body.operands(a).eq(ctx.body.operands(b))
        && types(a).eq(types(b))
}
