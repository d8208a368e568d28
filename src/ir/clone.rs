//! Deep copies of ops and regions, remapping values and blocks defined inside the copy.

use super::body::{BlockId, OpId, OpSpec, RegionId, ValueId};
use super::interner::FxHashMap;
use super::Context;

/// Maps original values and blocks to their copies; values not in the map are used as they are.
#[derive(Default, Debug)]
pub struct CloneMap {
    /// Original value to copy.
    pub values: FxHashMap<ValueId, ValueId>,
    /// Original block to copy.
    pub blocks: FxHashMap<BlockId, BlockId>,
}

impl CloneMap {
    fn value(&self, v: ValueId) -> ValueId {
        self.values.get(&v).copied().unwrap_or(v)
    }
}

/// Copies `op` with everything nested in it; the copy is detached. Results are recorded in `map`.
pub fn clone_op(ctx: &mut Context, op: OpId, map: &mut CloneMap) -> OpId {
    let regions: Vec<RegionId> = ctx.body.regions(op).to_vec();
    let new_regions: Vec<RegionId> = regions.iter().map(|&r| clone_region(ctx, r, map)).collect();
    let operands: Vec<ValueId> = ctx.body.operands(op).map(|v| map.value(v)).collect();
    let result_types: Vec<_> = ctx.body.results(op).map(|v| ctx.body.value_type(v)).collect();
    let successors: Vec<BlockId> =
        ctx.body.successors(op).iter().map(|b| map.blocks.get(b).copied().unwrap_or(*b)).collect();
    let data = ctx.body.op(op).clone();
    let copy = ctx.body.create_op(OpSpec {
        name: data.name,
        loc: data.loc,
        operands: &operands,
        result_types: &result_types,
        attrs: data.attrs,
        props: data.props,
        regions: &new_regions,
        successors: &successors,
    });
    let pairs: Vec<_> = ctx.body.results(op).zip(ctx.body.results(copy)).collect();
    map.values.extend(pairs);
    copy
}

/// Copies a region (blocks, arguments, ops); the copy is detached.
pub fn clone_region(ctx: &mut Context, region: RegionId, map: &mut CloneMap) -> RegionId {
    let copy = ctx.body.create_region();
    let blocks = ctx.body.region(region).blocks.clone();
    // Create all blocks and arguments first so that branches to later blocks can be remapped.
    for &b in &blocks {
        let nb = ctx.body.create_block();
        let data = ctx.body.block(b).clone();
        for (i, &arg) in data.args.iter().enumerate() {
            let loc = data.arg_locs.get(i).copied().unwrap_or_default();
            let na = ctx.body.add_block_arg(nb, ctx.body.value_type(arg), loc);
            map.values.insert(arg, na);
        }
        map.blocks.insert(b, nb);
        ctx.body.append_block(copy, nb);
    }
    let mut copies = Vec::new();
    for &b in &blocks {
        let nb = map.blocks[&b];
        let ops: Vec<OpId> = ctx.body.block_ops(b).collect();
        for op in ops {
            let c = clone_op(ctx, op, map);
            ctx.body.append_op(nb, c);
            copies.push(c);
        }
    }
    remap_forward_uses(ctx, &copies, map);
    copy
}

/// In graph regions an op may use a value defined later; once every op is copied, point such uses at the copies.
fn remap_forward_uses(ctx: &mut Context, copies: &[OpId], map: &CloneMap) {
    for &c in copies {
        for op in std::iter::once(c).chain(super::walk::preorder(&ctx.body, c)) {
            for i in 0..ctx.body.num_operands(op) {
                let v = ctx.body.operand(op, i);
                let mapped = map.value(v);
                if mapped != v {
                    ctx.body.set_operand(op, i, mapped);
                }
            }
        }
    }
}
