//! `reconcile-unrealized-casts`: removes the casts dialect conversion left behind where they cancel (a chain of
//! `builtin.unrealized_conversion_cast` that ends at the types it started from is replaced by its inputs), erases
//! unused ones, and reports every cast that still has a use, as MLIR's pass of the same name does.

use super::pass::{Changed, Pass, PassEnv, PassInfo};
use super::registry::PassEntry;
use crate::ir::conversion::UNREALIZED_CAST;
use crate::ir::print::op_summary;
use crate::ir::walk::{postorder, preorder};
use crate::ir::{Context, Diagnostic, OpId, ValueDef, ValueId};

/// The registration of `reconcile-unrealized-casts`.
pub const ENTRY: PassEntry = PassEntry { info: &INFO, create: |_| Box::new(Reconcile) };

static INFO: PassInfo = PassInfo {
    argument: "reconcile-unrealized-casts",
    name: "ReconcileUnrealizedCasts",
    description: "Simplify and eliminate unrealized conversion casts",
    anchor: None,
    options: &[],
    statistics: &[("num-reconciled", "Number of casts removed")],
};

struct Reconcile;

impl Pass for Reconcile {
    fn info(&self) -> &'static PassInfo {
        &INFO
    }

    fn run(&mut self, ctx: &mut Context, op: OpId, env: &mut PassEnv<'_>) -> Result<Changed, Vec<Diagnostic>> {
        let casts: Vec<OpId> = preorder(&ctx.body, op).into_iter().filter(|&o| is_cast(ctx, o)).collect();
        if casts.is_empty() {
            return Ok(Changed::No);
        }
        // Definitions come first, so a cast's input cast is already composed down to the chain's start.
        for &cast in &casts {
            compose(ctx, cast);
        }
        let removed = erase_unused(ctx, op);
        env.stats.add("num-reconciled", removed);
        let left: Vec<Diagnostic> =
            casts.iter().filter(|&&c| !ctx.body.is_erased(c)).map(|&c| unresolved(ctx, c)).collect();
        if !left.is_empty() {
            return Err(left);
        }
        Ok(Changed::Yes)
    }
}

fn is_cast(ctx: &Context, op: OpId) -> bool {
    ctx.op_name(op) == UNREALIZED_CAST
}

/// If `cast` reads exactly the results of another cast, reads that cast's inputs instead; if it then converts
/// its inputs to their own types, its results are replaced by them.
fn compose(ctx: &mut Context, cast: OpId) {
    let operands: Vec<ValueId> = ctx.body.operands(cast).collect();
    if let Some(inner) = whole_results_of_cast(ctx, &operands) {
        let inputs: Vec<ValueId> = ctx.body.operands(inner).collect();
        ctx.body.set_operands(cast, &inputs);
    }
    let inputs: Vec<ValueId> = ctx.body.operands(cast).collect();
    let results: Vec<ValueId> = ctx.body.results(cast).collect();
    let types = |vs: &[ValueId]| vs.iter().map(|&v| ctx.body.value_type(v)).collect::<Vec<_>>();
    if types(&inputs) == types(&results) {
        for (old, new) in results.into_iter().zip(inputs) {
            ctx.body.replace_all_uses(old, new);
        }
    }
}

/// The cast whose results are exactly `values`, in order.
fn whole_results_of_cast(ctx: &Context, values: &[ValueId]) -> Option<OpId> {
    let ValueDef::Result { op, .. } = ctx.body.value_def(*values.first()?) else { return None };
    let whole = is_cast(ctx, op) && ctx.body.results(op).eq(values.iter().copied());
    whole.then_some(op)
}

/// Erases unused casts (users first, so that chains go entirely); returns how many.
fn erase_unused(ctx: &mut Context, root: OpId) -> u64 {
    let mut erased = 0;
    for op in postorder(&ctx.body, root).into_iter().rev() {
        if is_cast(ctx, op) && !ctx.body.is_erased(op) && ctx.body.results(op).all(|v| !ctx.body.has_uses(v)) {
            ctx.body.drop_all_references(op);
            ctx.body.erase_op(op);
            erased += 1;
        }
    }
    erased
}

fn unresolved(ctx: &Context, cast: OpId) -> Diagnostic {
    let loc = ctx.body.op(cast).loc;
    Diagnostic::error(
        loc,
        format!("failed to legalize operation '{UNREALIZED_CAST}' that was explicitly marked illegal"),
    )
    .with_note(loc, format!("see current operation: {}", op_summary(ctx, cast)))
}
