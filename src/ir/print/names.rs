//! SSA and block naming for the printer, following MLIR: `%argN` for entry-block arguments, `%N` for op
//! results and other block arguments, `^bbN` per region; numbering restarts inside isolated-from-above ops and
//! nested regions continue from their parent region's count.

use crate::ir::body::{BlockId, OpId, RegionId, ValueId};
use crate::ir::entity::EntityId;
use crate::ir::registry::OpTrait;
use crate::ir::Context;

/// The printed name of a value.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ValueName {
    /// `%argN`.
    Arg(u32),
    /// `%N`, or `%N#i` for result `i` of a multi-result op.
    Num {
        /// The op's (or block argument's) number.
        n: u32,
        /// Result index, when the op has several results.
        result: Option<u32>,
    },
}

/// Names for every value and block under one op.
pub struct Names {
    values: Vec<Option<ValueName>>,
    blocks: Vec<u32>,
}

impl Names {
    /// Numbers everything nested under `root`.
    pub fn compute(ctx: &Context, root: OpId) -> Names {
        let mut names =
            Names { values: vec![None; ctx.body.value_capacity()], blocks: vec![u32::MAX; ctx.body.block_capacity()] };
        for &r in ctx.body.regions(root) {
            names.number_region(ctx, r, 0, 0);
        }
        names
    }

    fn number_region(&mut self, ctx: &Context, region: RegionId, mut next_value: u32, mut next_arg: u32) {
        let body = &ctx.body;
        for (i, &block) in body.region(region).blocks.iter().enumerate() {
            self.blocks[block.index()] = i as u32;
            for &arg in &body.block(block).args {
                let name = if i == 0 {
                    next_arg += 1;
                    ValueName::Arg(next_arg - 1)
                } else {
                    next_value += 1;
                    ValueName::Num { n: next_value - 1, result: None }
                };
                self.values[arg.index()] = Some(name);
            }
            for op in body.block_ops(block) {
                next_value += self.number_results(ctx, op, next_value);
            }
        }
        for &block in &body.region(region).blocks {
            for op in body.block_ops(block) {
                let isolated = is_isolated(ctx, op);
                for &r in body.regions(op) {
                    if isolated {
                        self.number_region(ctx, r, 0, 0);
                    } else {
                        self.number_region(ctx, r, next_value, next_arg);
                    }
                }
            }
        }
    }

    fn number_results(&mut self, ctx: &Context, op: OpId, n: u32) -> u32 {
        let count = ctx.body.num_results(op);
        for (i, v) in ctx.body.results(op).enumerate() {
            let result = (count > 1).then_some(i as u32);
            self.values[v.index()] = Some(ValueName::Num { n, result });
        }
        u32::from(count > 0)
    }

    /// The name of `v`, if it was numbered.
    pub fn value(&self, v: ValueId) -> Option<ValueName> {
        self.values.get(v.index()).copied().flatten()
    }

    /// The number of `block` within its region.
    pub fn block(&self, b: BlockId) -> Option<u32> {
        self.blocks.get(b.index()).copied().filter(|&n| n != u32::MAX)
    }
}

/// True if `op`'s regions start a fresh naming scope.
pub fn is_isolated(ctx: &Context, op: OpId) -> bool {
    ctx.registered(op).is_some_and(|r| r.info.has_trait(OpTrait::IsolatedFromAbove))
}
