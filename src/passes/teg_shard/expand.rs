//! The local expansion `teg-shard` applies before splitting: a `teg.linear` whose summed dimension is split.

use crate::dialects::teg::ops::{decode, Contraction, OpKind};
use crate::dialects::teg::shard_plan::{placement_of, set_placement, Placement};
use crate::interfaces::sharding::index_maps_of;
use crate::ir::builder::OpState;
use crate::ir::rewrite::Rewriter;
use crate::ir::{Context, Diagnostic, OpId, ValueDef, ValueId};
use crate::machine::Machine;
use crate::shard::{AxisSet, Plan};
use std::collections::HashMap;

/// Rewrites each `teg.linear` whose plan splits its summed `in` into `teg.matmul` (with that plan) and `teg.add` of
/// the bias (with the plan's output dimensions): each shard of a split `in` holds a partial sum, and the bias must
/// be added once, after they are combined. The whitepaper's local expansion, applied before splitting.
pub(super) fn expand_split_linears(ctx: &mut Context, graph: OpId, machine: &Machine) -> Result<(), Diagnostic> {
    let ops: Vec<OpId> = crate::dialects::teg::graph_ops(ctx, graph).collect();
    for op in ops {
        if !matches!(decode(ctx, op), Ok(OpKind::Contraction(Contraction::Linear))) {
            continue;
        }
        let Some(maps) = index_maps_of(ctx, op) else { continue };
        let Some(placement) = placement_of(ctx, op, &maps.index, machine) else { continue };
        let placement = placement?;
        if maps.reductions.iter().all(|(d, _)| placement.plan.0[*d].is_empty()) {
            continue;
        }
        let by_name: HashMap<&str, (AxisSet, &Option<Vec<u64>>)> = maps
            .index
            .iter()
            .map(|d| d.0.as_str())
            .zip(placement.plan.0.iter().copied().zip(&placement.sizes))
            .collect();
        let operands: Vec<ValueId> = ctx.body.operands(op).collect();
        let result = ctx.body.results(op).next().expect("one result");
        let ty = ctx.body.value_type(result);
        let loc = ctx.body.op(op).loc;
        let mut rw = Rewriter::at(ctx, op);
        let state = OpState::new(rw.interners(), "teg.matmul", loc).operands(&operands[..2]).results(&[ty]);
        let product = rw.create_value(state);
        let state = OpState::new(rw.interners(), "teg.add", loc).operands(&[product, operands[2]]).results(&[ty]);
        let sum = rw.create_value(state);
        rw.replace_op(op, &[sum]);
        for value in [product, sum] {
            let ValueDef::Result { op: new, .. } = ctx.body.value_def(value) else { continue };
            let Some(index) = index_maps_of(ctx, new).map(|m| m.index) else { continue };
            let of = |d: &(String, u64)| by_name.get(d.0.as_str()).copied().unwrap_or((AxisSet::EMPTY, &None));
            let plan = Plan(index.iter().map(|d| of(d).0).collect());
            let sizes = index.iter().map(|d| of(d).1.clone()).collect();
            set_placement(ctx, new, &Placement { plan, sizes }, &index, machine);
        }
    }
    Ok(())
}
