//! The [`Rewriter`]: the only way a pattern changes IR. It reads through to the [`Context`], interns through
//! [`Rewriter::interners`], and mutates only through its own methods, each of which records what it touched:
//! ops it created (a driver visits them), ops whose operands, attributes or uses changed (the greedy driver
//! revisits them), and whether anything changed at all.

use crate::ir::attrs::AttrId;
use crate::ir::body::{BlockId, OpId, RegionId, ValueDef, ValueId};
use crate::ir::builder::{InsertPoint, OpState};
use crate::ir::{Context, Interners, Loc, TypeId};

/// What a rewriter did, for its driver.
#[derive(Clone, Debug, Default)]
pub struct ChangeLog {
    /// Ops created, in creation order.
    pub created: Vec<OpId>,
    /// Ops to revisit: changed in place, users of replaced values, definers of erased ops' operands.
    pub touched: Vec<OpId>,
    /// Ops erased.
    pub erased: Vec<OpId>,
    /// True once anything changed.
    pub changed: bool,
}

/// Mutations of the IR made on behalf of a driver. New ops go to the insertion point (by default right before
/// the op being rewritten) and take that op's location unless they name one.
pub struct Rewriter<'c> {
    ctx: &'c mut Context,
    point: InsertPoint,
    loc: Loc,
    log: ChangeLog,
}

impl std::ops::Deref for Rewriter<'_> {
    type Target = Context;
    fn deref(&self) -> &Context {
        self.ctx
    }
}

impl crate::ir::builder::Build for Rewriter<'_> {
    fn interners(&mut self) -> &mut Interners {
        Rewriter::interners(self)
    }
    fn insert(&mut self, state: OpState) -> OpId {
        self.create(state)
    }
}

impl<'c> Rewriter<'c> {
    /// A rewriter for `op`: inserts before it and gives new ops its location.
    pub fn at(ctx: &'c mut Context, op: OpId) -> Self {
        let loc = ctx.body.op(op).loc;
        let point = if ctx.body.op_parent(op).is_some() { InsertPoint::Before(op) } else { InsertPoint::Detached };
        Rewriter { ctx, point, loc, log: ChangeLog::default() }
    }

    /// A rewriter inserting at `point`, with unknown default location.
    pub fn new(ctx: &'c mut Context, point: InsertPoint) -> Self {
        Rewriter { ctx, point, loc: Loc::Unknown, log: ChangeLog::default() }
    }

    /// The IR, read-only.
    pub fn ir(&self) -> &Context {
        self.ctx
    }

    /// Interning of types, attributes, strings and locations (which never changes IR).
    pub fn interners(&mut self) -> &mut Interners {
        &mut self.ctx.interners
    }

    /// What changed so far.
    pub fn log(&self) -> &ChangeLog {
        &self.log
    }

    /// Ends the rewriter, handing its record to the driver.
    pub fn into_log(self) -> ChangeLog {
        self.log
    }

    /// True once anything changed.
    pub fn changed(&self) -> bool {
        self.log.changed
    }

    // Insertion points.

    /// Where new ops go.
    pub fn insertion_point(&self) -> InsertPoint {
        self.point
    }

    /// New ops go to `point`.
    pub fn set_insertion_point(&mut self, point: InsertPoint) {
        self.point = point;
    }

    /// New ops go right before `op`.
    pub fn set_insertion_point_before(&mut self, op: OpId) {
        self.point = InsertPoint::Before(op);
    }

    /// New ops go right after `op` (in creation order).
    pub fn set_insertion_point_after(&mut self, op: OpId) {
        self.point = match (self.ctx.body.next_op(op), self.ctx.body.op_parent(op)) {
            (Some(next), _) => InsertPoint::Before(next),
            (None, Some(block)) => InsertPoint::End(block),
            (None, None) => InsertPoint::Detached,
        };
    }

    /// New ops go to the start of `block` (in creation order).
    pub fn set_insertion_point_to_start(&mut self, block: BlockId) {
        self.point = match self.ctx.body.first_op(block) {
            Some(first) => InsertPoint::Before(first),
            None => InsertPoint::End(block),
        };
    }

    /// New ops go to the end of `block`.
    pub fn set_insertion_point_to_end(&mut self, block: BlockId) {
        self.point = InsertPoint::End(block);
    }

    // Creation.

    /// A fresh op description named `name` at the rewriter's default location.
    pub fn op_state(&mut self, name: &str) -> OpState {
        OpState::new(&mut self.ctx.interners, name, self.loc)
    }

    /// Creates the op `state` describes at the insertion point; returns it.
    pub fn create(&mut self, mut state: OpState) -> OpId {
        if state.loc == Loc::Unknown {
            state.loc = self.loc;
        }
        let op = state.create(self.ctx);
        match self.point {
            InsertPoint::Before(anchor) => self.ctx.body.insert_op_before(anchor, op),
            InsertPoint::End(block) => self.ctx.body.append_op(block, op),
            InsertPoint::Detached => {}
        }
        self.log.created.push(op);
        self.log.changed = true;
        op
    }

    /// Creates the op `state` describes and returns its single result.
    pub fn create_value(&mut self, state: OpState) -> ValueId {
        let op = self.create(state);
        self.ctx.body.result(op, 0)
    }

    /// A new empty region, to be given to an op under construction.
    pub fn create_region(&mut self) -> RegionId {
        self.ctx.body.create_region()
    }

    /// Appends a new block with arguments of `arg_types` to `region`; new ops then go to its end.
    pub fn create_block(&mut self, region: RegionId, arg_types: &[TypeId]) -> BlockId {
        let block = self.ctx.body.create_block();
        for &ty in arg_types {
            self.ctx.body.add_block_arg(block, ty, self.loc);
        }
        self.ctx.body.append_block(region, block);
        self.point = InsertPoint::End(block);
        self.log.changed = true;
        block
    }

    /// Appends an argument of type `ty` to `block`.
    pub fn add_block_arg(&mut self, block: BlockId, ty: TypeId) -> ValueId {
        self.log.changed = true;
        self.ctx.body.add_block_arg(block, ty, self.loc)
    }

    /// Detaches every block of `region` and returns them in order.
    pub fn take_blocks(&mut self, region: RegionId) -> Vec<BlockId> {
        self.log.changed = true;
        self.ctx.body.take_blocks(region)
    }

    /// Appends a detached `block` to `region`.
    pub fn append_block(&mut self, region: RegionId, block: BlockId) {
        self.log.changed = true;
        self.ctx.body.append_block(region, block);
    }

    /// Moves every block of `from` to the end of `to` (a region's body taken over by a new op).
    pub fn inline_region(&mut self, from: RegionId, to: RegionId) {
        let blocks = self.ctx.body.take_blocks(from);
        for block in blocks {
            self.ctx.body.append_block(to, block);
        }
        self.log.changed = true;
    }

    // Replacement and erasure.

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
        self.log.touched.extend(self.ctx.body.uses(old).map(|(u, _)| u));
        self.ctx.body.replace_all_uses(old, new);
        self.log.changed = true;
    }

    /// Erases `op` (its results must be unused); the defining ops of its operands are revisited.
    pub fn erase_op(&mut self, op: OpId) {
        for v in self.ctx.body.operands(op).collect::<Vec<_>>() {
            if let ValueDef::Result { op: def, .. } = self.ctx.body.value_def(v) {
                self.log.touched.push(def);
            }
        }
        self.ctx.body.drop_all_references(op);
        self.ctx.body.erase_op(op);
        self.log.erased.push(op);
        self.log.changed = true;
    }

    /// Moves `op` to just before `anchor`.
    pub fn move_op_before(&mut self, op: OpId, anchor: OpId) {
        self.ctx.body.move_op_before(op, anchor);
        self.modified(op);
    }

    /// Moves `op` to the end of `block`.
    pub fn move_op_to_end(&mut self, op: OpId, block: BlockId) {
        self.ctx.body.move_op_to_end(op, block);
        self.modified(op);
    }

    // In-place changes.

    /// Makes `op` read `values`.
    pub fn set_operands(&mut self, op: OpId, values: &[ValueId]) {
        self.ctx.body.set_operands(op, values);
        self.modified(op);
    }

    /// Makes operand `index` of `op` read `value`.
    pub fn set_operand(&mut self, op: OpId, index: usize, value: ValueId) {
        self.ctx.body.set_operand(op, index, value);
        self.modified(op);
    }

    /// Sets (or replaces) the discardable attribute `name` of `op`.
    pub fn set_attr(&mut self, op: OpId, name: &str, value: AttrId) {
        self.ctx.set_op_attr(op, name, value);
        self.modified(op);
    }

    /// Removes the discardable attribute `name` of `op`.
    pub fn remove_attr(&mut self, op: OpId, name: &str) {
        if self.ctx.remove_op_attr(op, name) {
            self.modified(op);
        }
    }

    /// Sets (or replaces) the property `name` of `op` (where the op holds it among its discardable attributes,
    /// as the generic form may write it, it is replaced there).
    pub fn set_prop(&mut self, op: OpId, name: &str, value: AttrId) {
        if self.ctx.dict_get(self.ctx.body.op(op).attrs, name).is_some() {
            return self.set_attr(op, name, value);
        }
        let key = self.ctx.sym(name);
        let mut entries = self.ctx.dict_entries(self.ctx.body.op(op).props).to_vec();
        entries.push((key, value));
        let dict = self.ctx.dict_attr(entries);
        self.ctx.body.op_mut(op).props = dict;
        self.modified(op);
    }

    /// Changes the type of a value (a result of `owner` or an argument of a block in it); its users are
    /// revisited.
    pub fn set_value_type(&mut self, value: ValueId, ty: TypeId) {
        self.log.touched.extend(self.ctx.body.uses(value).map(|(u, _)| u));
        self.ctx.body.set_value_type(value, ty);
        self.log.changed = true;
    }

    /// The context for a registry hook that reads IR and interns but, by its contract, changes no IR (folding).
    pub(crate) fn context_for_hook(&mut self) -> &mut Context {
        self.ctx
    }

    /// Records an in-place change of `op` so that it is revisited.
    fn modified(&mut self, op: OpId) {
        self.log.touched.push(op);
        self.log.changed = true;
    }
}
