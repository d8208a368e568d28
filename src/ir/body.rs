//! The mutable IR graph: ops, values, blocks and regions in arenas, with use lists and block op lists.
//!
//! **Invariants** (kept by every method here, re-checked by the verifier):
//! - every operand slot is linked into the use list of the value it reads, and only there;
//! - an op is in at most one block, linked between its `prev`/`next` siblings;
//! - the results of an op are consecutive values;
//! - erased entries are tombstones: their ids are never reused and never reachable from live IR.
//!
//! Operand slots, region lists and successor lists live in shared pools and ops hold ranges into them, which
//! keeps an op at 64 bytes; replacing a list with one of a different length appends a fresh range.

use super::attrs::AttrId;
use super::entity::{EntityId, IdVec};
use super::location::Loc;
use super::types::TypeId;
use super::Symbol;

crate::define_id!(
    /// An operation.
    OpId,
    "op"
);
crate::define_id!(
    /// An SSA value: an op result or a block argument.
    ValueId,
    "v"
);
crate::define_id!(
    /// A basic block.
    BlockId,
    "bb"
);
crate::define_id!(
    /// A region: a list of blocks owned by an op.
    RegionId,
    "region"
);
crate::define_id!(
    /// One operand slot in the operand pool.
    OperandSlotId,
    "slot"
);

/// A contiguous range in one of the body's pools.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
struct Span32 {
    start: u32,
    len: u32,
}

impl Span32 {
    fn range(self) -> std::ops::Range<usize> {
        self.start as usize..(self.start + self.len) as usize
    }
}

/// An operation: name, operands, results, attributes, properties, regions, successors and location.
#[derive(Clone, Debug)]
pub struct OpData {
    /// The op name, `dialect.op`.
    pub name: Symbol,
    /// Where the op comes from.
    pub loc: Loc,
    /// Discardable attributes, an interned dictionary.
    pub attrs: AttrId,
    /// Inherent attributes (MLIR "properties", printed `<{...}>`), an interned dictionary.
    pub props: AttrId,
    operands: Span32,
    results: Span32,
    regions: Span32,
    successors: Span32,
    parent: Option<BlockId>,
    prev: Option<OpId>,
    next: Option<OpId>,
    erased: bool,
}

/// Where a value is defined.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ValueDef {
    /// Result `index` of `op`.
    Result {
        /// The defining op.
        op: OpId,
        /// Result position.
        index: u32,
    },
    /// Argument `index` of `block`.
    BlockArg {
        /// The block.
        block: BlockId,
        /// Argument position.
        index: u32,
    },
    /// Not defined yet: a forward reference the parser will replace.
    Placeholder,
}

/// An SSA value: its type, definition and the head of its use list.
#[derive(Clone, Debug)]
pub struct ValueData {
    /// The value's type.
    pub ty: TypeId,
    /// Where it is defined.
    pub def: ValueDef,
    first_use: Option<OperandSlotId>,
}

#[derive(Clone, Debug)]
struct OperandSlot {
    value: ValueId,
    owner: OpId,
    prev_use: Option<OperandSlotId>,
    next_use: Option<OperandSlotId>,
}

/// A basic block: arguments and a linked list of ops.
#[derive(Clone, Debug, Default)]
pub struct BlockData {
    /// Block arguments, in order.
    pub args: Vec<ValueId>,
    /// Locations of the arguments, parallel to `args` (may be shorter: missing means unknown).
    pub arg_locs: Vec<Loc>,
    first: Option<OpId>,
    last: Option<OpId>,
    parent: Option<RegionId>,
}

/// A region: blocks in order, owned by at most one op.
#[derive(Clone, Debug, Default)]
pub struct RegionData {
    /// The blocks; the first is the entry block.
    pub blocks: Vec<BlockId>,
    parent: Option<OpId>,
}

/// What a new op is made of; see [`Body::create_op`].
#[derive(Clone, Copy, Debug)]
pub struct OpSpec<'a> {
    /// Op name.
    pub name: Symbol,
    /// Location.
    pub loc: Loc,
    /// Operand values.
    pub operands: &'a [ValueId],
    /// Result types (one result value is created per type).
    pub result_types: &'a [TypeId],
    /// Attribute dictionary.
    pub attrs: AttrId,
    /// Property dictionary.
    pub props: AttrId,
    /// Regions (must be detached).
    pub regions: &'a [RegionId],
    /// Successor blocks.
    pub successors: &'a [BlockId],
}

/// All IR objects of a context.
#[derive(Clone, Debug, Default)]
pub struct Body {
    ops: IdVec<OpId, OpData>,
    values: IdVec<ValueId, ValueData>,
    blocks: IdVec<BlockId, BlockData>,
    regions: IdVec<RegionId, RegionData>,
    operand_pool: IdVec<OperandSlotId, OperandSlot>,
    region_pool: Vec<RegionId>,
    successor_pool: Vec<BlockId>,
}

impl Body {
    // ----- creation -----

    /// Creates a detached op; its result values are created with it.
    pub fn create_op(&mut self, spec: OpSpec<'_>) -> OpId {
        let op = self.ops.next_id();
        let results = Span32 { start: self.values.len() as u32, len: spec.result_types.len() as u32 };
        for (i, &ty) in spec.result_types.iter().enumerate() {
            self.values.push(ValueData { ty, def: ValueDef::Result { op, index: i as u32 }, first_use: None });
        }
        let regions = push_span(&mut self.region_pool, spec.regions);
        let successors = push_span(&mut self.successor_pool, spec.successors);
        self.ops.push(OpData {
            name: spec.name,
            loc: spec.loc,
            attrs: spec.attrs,
            props: spec.props,
            operands: Span32::default(),
            results,
            regions,
            successors,
            parent: None,
            prev: None,
            next: None,
            erased: false,
        });
        for &r in spec.regions {
            debug_assert!(self.regions[r].parent.is_none(), "region already owned");
            self.regions[r].parent = Some(op);
        }
        self.set_operands(op, spec.operands);
        op
    }

    /// Creates an empty detached region.
    pub fn create_region(&mut self) -> RegionId {
        self.regions.push(RegionData::default())
    }

    /// Creates an empty detached block.
    pub fn create_block(&mut self) -> BlockId {
        self.blocks.push(BlockData::default())
    }

    /// Appends an argument of type `ty` to `block`.
    pub fn add_block_arg(&mut self, block: BlockId, ty: TypeId, loc: Loc) -> ValueId {
        let index = self.blocks[block].args.len() as u32;
        let v = self.values.push(ValueData { ty, def: ValueDef::BlockArg { block, index }, first_use: None });
        let data = &mut self.blocks[block];
        data.args.push(v);
        if loc != Loc::Unknown {
            data.arg_locs.resize(index as usize, Loc::Unknown);
            data.arg_locs.push(loc);
        }
        v
    }

    /// Creates a value with no definition yet (a parser forward reference).
    pub fn create_placeholder(&mut self, ty: TypeId) -> ValueId {
        self.values.push(ValueData { ty, def: ValueDef::Placeholder, first_use: None })
    }

    /// Appends `block` at the end of `region`.
    pub fn append_block(&mut self, region: RegionId, block: BlockId) {
        debug_assert!(self.blocks[block].parent.is_none(), "block already in a region");
        self.blocks[block].parent = Some(region);
        self.regions[region].blocks.push(block);
    }

    // ----- access -----

    /// The op's data.
    pub fn op(&self, op: OpId) -> &OpData {
        &self.ops[op]
    }

    /// The op's data, mutable (name, location, attributes).
    pub fn op_mut(&mut self, op: OpId) -> &mut OpData {
        &mut self.ops[op]
    }

    /// The value's data.
    pub fn value(&self, v: ValueId) -> &ValueData {
        &self.values[v]
    }

    /// Changes the type of a value (used when a definition refines a forward reference).
    pub fn set_value_type(&mut self, v: ValueId, ty: TypeId) {
        self.values[v].ty = ty;
    }

    /// The block's data.
    pub fn block(&self, b: BlockId) -> &BlockData {
        &self.blocks[b]
    }

    /// Rewrites the locations of a block's arguments.
    pub fn map_arg_locs(&mut self, block: BlockId, f: &dyn Fn(Loc) -> Loc) {
        for l in &mut self.blocks[block].arg_locs {
            *l = f(*l);
        }
    }

    /// The region's data.
    pub fn region(&self, r: RegionId) -> &RegionData {
        &self.regions[r]
    }

    /// Number of ops ever created (erased ones included); an upper bound for dense side tables.
    pub fn op_capacity(&self) -> usize {
        self.ops.len()
    }

    /// Number of values ever created.
    pub fn value_capacity(&self) -> usize {
        self.values.len()
    }

    /// Number of blocks ever created.
    pub fn block_capacity(&self) -> usize {
        self.blocks.len()
    }

    /// True once `op` has been erased.
    pub fn is_erased(&self, op: OpId) -> bool {
        self.ops[op].erased
    }

    /// The operand values of `op`, in order.
    pub fn operands(&self, op: OpId) -> impl ExactSizeIterator<Item = ValueId> + '_ {
        let span = self.ops[op].operands;
        (span.start..span.start + span.len).map(move |i| self.operand_pool[OperandSlotId::from_index(i as usize)].value)
    }

    /// Operand `index` of `op`.
    pub fn operand(&self, op: OpId, index: usize) -> ValueId {
        let span = self.ops[op].operands;
        assert!(index < span.len as usize, "operand index out of range");
        self.operand_pool[OperandSlotId::from_index(span.start as usize + index)].value
    }

    /// Number of operands of `op`.
    pub fn num_operands(&self, op: OpId) -> usize {
        self.ops[op].operands.len as usize
    }

    /// The result values of `op`, in order.
    pub fn results(&self, op: OpId) -> impl ExactSizeIterator<Item = ValueId> + Clone {
        self.ops[op].results.range().map(ValueId::from_index)
    }

    /// Result `index` of `op`.
    pub fn result(&self, op: OpId, index: usize) -> ValueId {
        let span = self.ops[op].results;
        assert!(index < span.len as usize, "result index out of range");
        ValueId::from_index(span.start as usize + index)
    }

    /// Number of results of `op`.
    pub fn num_results(&self, op: OpId) -> usize {
        self.ops[op].results.len as usize
    }

    /// The regions of `op`.
    pub fn regions(&self, op: OpId) -> &[RegionId] {
        &self.region_pool[self.ops[op].regions.range()]
    }

    /// The successor blocks of `op`.
    pub fn successors(&self, op: OpId) -> &[BlockId] {
        &self.successor_pool[self.ops[op].successors.range()]
    }

    /// The block containing `op`, if it is attached.
    pub fn op_parent(&self, op: OpId) -> Option<BlockId> {
        self.ops[op].parent
    }

    /// The region containing `block`, if attached.
    pub fn block_parent(&self, block: BlockId) -> Option<RegionId> {
        self.blocks[block].parent
    }

    /// The op owning `region`, if attached.
    pub fn region_parent(&self, region: RegionId) -> Option<OpId> {
        self.regions[region].parent
    }

    /// The op whose region contains `op`.
    pub fn parent_op(&self, op: OpId) -> Option<OpId> {
        let block = self.ops[op].parent?;
        self.regions[self.blocks[block].parent?].parent
    }

    /// The op after `op` in its block.
    pub fn next_op(&self, op: OpId) -> Option<OpId> {
        self.ops[op].next
    }

    /// The op before `op` in its block.
    pub fn prev_op(&self, op: OpId) -> Option<OpId> {
        self.ops[op].prev
    }

    /// The ops of `block`, in order.
    pub fn block_ops(&self, block: BlockId) -> BlockOps<'_> {
        BlockOps { body: self, next: self.blocks[block].first }
    }

    /// The first op of `block`.
    pub fn first_op(&self, block: BlockId) -> Option<OpId> {
        self.blocks[block].first
    }

    /// The last op of `block` (its terminator, in a well-formed SSACFG block).
    pub fn last_op(&self, block: BlockId) -> Option<OpId> {
        self.blocks[block].last
    }

    /// The uses of `v` as `(user op, operand index)`, most recent first.
    pub fn uses(&self, v: ValueId) -> Uses<'_> {
        Uses { body: self, next: self.values[v].first_use }
    }

    /// True if anything reads `v`.
    pub fn has_uses(&self, v: ValueId) -> bool {
        self.values[v].first_use.is_some()
    }

    /// Where `v` is defined.
    pub fn value_def(&self, v: ValueId) -> ValueDef {
        self.values[v].def
    }

    /// The type of `v`.
    pub fn value_type(&self, v: ValueId) -> TypeId {
        self.values[v].ty
    }

    // ----- operands and use lists -----

    /// Replaces all operands of `op` with `values`.
    pub fn set_operands(&mut self, op: OpId, values: &[ValueId]) {
        let old = self.ops[op].operands;
        for i in old.range() {
            self.unlink_use(OperandSlotId::from_index(i));
        }
        let span = if values.len() as u32 == old.len && old.len > 0 {
            old
        } else {
            Span32 { start: self.operand_pool.len() as u32, len: values.len() as u32 }
        };
        for (i, &value) in values.iter().enumerate() {
            let slot = OperandSlotId::from_index(span.start as usize + i);
            let data = OperandSlot { value, owner: op, prev_use: None, next_use: None };
            if slot.index() < self.operand_pool.len() {
                self.operand_pool[slot] = data;
            } else {
                self.operand_pool.push(data);
            }
            self.link_use(slot);
        }
        self.ops[op].operands = span;
    }

    /// Makes operand `index` of `op` read `value`.
    pub fn set_operand(&mut self, op: OpId, index: usize, value: ValueId) {
        let span = self.ops[op].operands;
        assert!(index < span.len as usize, "operand index out of range");
        let slot = OperandSlotId::from_index(span.start as usize + index);
        self.unlink_use(slot);
        self.operand_pool[slot].value = value;
        self.link_use(slot);
    }

    /// Makes every reader of `old` read `new` instead.
    pub fn replace_all_uses(&mut self, old: ValueId, new: ValueId) {
        if old == new {
            return;
        }
        while let Some(slot) = self.values[old].first_use {
            self.unlink_use(slot);
            self.operand_pool[slot].value = new;
            self.link_use(slot);
        }
    }

    fn link_use(&mut self, slot: OperandSlotId) {
        let value = self.operand_pool[slot].value;
        let head = self.values[value].first_use;
        self.operand_pool[slot].next_use = head;
        self.operand_pool[slot].prev_use = None;
        if let Some(h) = head {
            self.operand_pool[h].prev_use = Some(slot);
        }
        self.values[value].first_use = Some(slot);
    }

    fn unlink_use(&mut self, slot: OperandSlotId) {
        let OperandSlot { value, prev_use, next_use, .. } = self.operand_pool[slot];
        match prev_use {
            Some(p) => self.operand_pool[p].next_use = next_use,
            None => self.values[value].first_use = next_use,
        }
        if let Some(n) = next_use {
            self.operand_pool[n].prev_use = prev_use;
        }
        self.operand_pool[slot].prev_use = None;
        self.operand_pool[slot].next_use = None;
    }

    // ----- regions and successors -----

    /// Replaces the successor list of `op`.
    pub fn set_successors(&mut self, op: OpId, blocks: &[BlockId]) {
        let span = self.ops[op].successors;
        if span.len as usize == blocks.len() {
            self.successor_pool[span.range()].copy_from_slice(blocks);
        } else {
            self.ops[op].successors = push_span(&mut self.successor_pool, blocks);
        }
    }

    /// Gives `op` an additional (detached) region.
    pub fn add_region(&mut self, op: OpId, region: RegionId) {
        let mut list = self.regions(op).to_vec();
        list.push(region);
        self.ops[op].regions = push_span(&mut self.region_pool, &list);
        self.regions[region].parent = Some(op);
    }

    /// Detaches every block of `region` and returns them in order (to be appended to another region).
    pub fn take_blocks(&mut self, region: RegionId) -> Vec<BlockId> {
        let blocks = std::mem::take(&mut self.regions[region].blocks);
        for &b in &blocks {
            self.blocks[b].parent = None;
        }
        blocks
    }

    // ----- placement -----

    /// Appends a detached op at the end of `block`.
    pub fn append_op(&mut self, block: BlockId, op: OpId) {
        let last = self.blocks[block].last;
        self.link_op(op, block, last, None);
    }

    /// Inserts a detached op right before `anchor`.
    pub fn insert_op_before(&mut self, anchor: OpId, op: OpId) {
        let block = self.ops[anchor].parent.expect("anchor op is not in a block");
        let prev = self.ops[anchor].prev;
        self.link_op(op, block, prev, Some(anchor));
    }

    /// Inserts a detached op right after `anchor`.
    pub fn insert_op_after(&mut self, anchor: OpId, op: OpId) {
        let block = self.ops[anchor].parent.expect("anchor op is not in a block");
        let next = self.ops[anchor].next;
        self.link_op(op, block, Some(anchor), next);
    }

    fn link_op(&mut self, op: OpId, block: BlockId, prev: Option<OpId>, next: Option<OpId>) {
        assert!(self.ops[op].parent.is_none(), "op is already in a block");
        let data = &mut self.ops[op];
        data.parent = Some(block);
        data.prev = prev;
        data.next = next;
        match prev {
            Some(p) => self.ops[p].next = Some(op),
            None => self.blocks[block].first = Some(op),
        }
        match next {
            Some(n) => self.ops[n].prev = Some(op),
            None => self.blocks[block].last = Some(op),
        }
    }

    /// Removes `op` from its block without destroying it (it can be inserted elsewhere).
    pub fn unlink_op(&mut self, op: OpId) {
        let Some(block) = self.ops[op].parent else { return };
        let OpData { prev, next, .. } = self.ops[op];
        match prev {
            Some(p) => self.ops[p].next = next,
            None => self.blocks[block].first = next,
        }
        match next {
            Some(n) => self.ops[n].prev = prev,
            None => self.blocks[block].last = prev,
        }
        let data = &mut self.ops[op];
        data.parent = None;
        data.prev = None;
        data.next = None;
    }

    /// Moves `op` to just before `anchor` (possibly in another block).
    pub fn move_op_before(&mut self, op: OpId, anchor: OpId) {
        self.unlink_op(op);
        self.insert_op_before(anchor, op);
    }

    /// Moves `op` to the end of `block`.
    pub fn move_op_to_end(&mut self, op: OpId, block: BlockId) {
        self.unlink_op(op);
        self.append_op(block, op);
    }

    // ----- erasure -----

    /// Erases `op` and everything nested in it. **Pre:** no result of `op` is used outside `op` itself.
    pub fn erase_op(&mut self, op: OpId) {
        assert!(!self.ops[op].erased, "op erased twice");
        for r in self.regions(op).to_vec() {
            self.erase_region_contents(r);
        }
        self.unlink_op(op);
        let span = self.ops[op].operands;
        for i in span.range() {
            self.unlink_use(OperandSlotId::from_index(i));
        }
        for v in self.results(op) {
            assert!(!self.has_uses(v), "erasing {op:?} whose result {v:?} is still used");
        }
        self.ops[op].erased = true;
    }

    /// Erases every op of `region` (innermost first, so that uses inside the region disappear first).
    pub fn erase_region_contents(&mut self, region: RegionId) {
        let blocks = std::mem::take(&mut self.regions[region].blocks);
        for &b in &blocks {
            let ops: Vec<OpId> = self.block_ops(b).collect();
            for &op in &ops {
                self.drop_all_references(op);
            }
            for &op in ops.iter().rev() {
                self.erase_op(op);
            }
            self.blocks[b].parent = None;
        }
    }

    /// Erases `blocks` of `region` with their ops. **Pre:** nothing outside `blocks` uses a value defined in them
    /// or names one of them as a successor (true of unreachable blocks in verified IR).
    pub fn erase_blocks(&mut self, region: RegionId, blocks: &[BlockId]) {
        let ops: Vec<OpId> = blocks.iter().flat_map(|&b| self.block_ops(b).collect::<Vec<_>>()).collect();
        for &op in &ops {
            self.drop_all_references(op);
            self.set_successors(op, &[]);
        }
        for &op in ops.iter().rev() {
            self.erase_op(op);
        }
        let dead: indexmap::IndexSet<BlockId> = blocks.iter().copied().collect();
        self.regions[region].blocks.retain(|b| !dead.contains(b));
        for &b in blocks {
            self.blocks[b].parent = None;
        }
    }

    /// Clears the operands of `op` and of everything nested in it, so the whole subtree can be erased in any order.
    pub fn drop_all_references(&mut self, op: OpId) {
        self.set_operands(op, &[]);
        for r in self.regions(op).to_vec() {
            for b in self.regions[r].blocks.clone() {
                let ops: Vec<OpId> = self.block_ops(b).collect();
                for o in ops {
                    self.drop_all_references(o);
                }
            }
        }
    }
}

fn push_span<T: Copy>(pool: &mut Vec<T>, items: &[T]) -> Span32 {
    if items.is_empty() {
        return Span32::default();
    }
    let start = pool.len() as u32;
    pool.extend_from_slice(items);
    Span32 { start, len: items.len() as u32 }
}

/// Iterator over the ops of a block.
pub struct BlockOps<'a> {
    body: &'a Body,
    next: Option<OpId>,
}

impl Iterator for BlockOps<'_> {
    type Item = OpId;
    fn next(&mut self) -> Option<OpId> {
        let op = self.next?;
        self.next = self.body.ops[op].next;
        Some(op)
    }
}

/// Iterator over the uses of a value, as `(user, operand index)`.
pub struct Uses<'a> {
    body: &'a Body,
    next: Option<OperandSlotId>,
}

impl Iterator for Uses<'_> {
    type Item = (OpId, usize);
    fn next(&mut self) -> Option<(OpId, usize)> {
        let slot = self.next?;
        let data = &self.body.operand_pool[slot];
        self.next = data.next_use;
        let start = self.body.ops[data.owner].operands.start as usize;
        Some((data.owner, slot.index() - start))
    }
}
