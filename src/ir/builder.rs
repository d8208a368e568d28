//! Building ops in code: an [`OpState`] collects what the op is made of and an [`OpBuilder`] inserts it at an
//! insertion point.

use super::attrs::AttrId;
use super::body::{BlockId, OpId, OpSpec, RegionId, ValueId};
use super::location::Loc;
use super::types::TypeId;
use super::{Context, Interners, Symbol};

/// The parts of an op under construction.
#[derive(Clone, Debug)]
pub struct OpState {
    /// Op name.
    pub name: Symbol,
    /// Location.
    pub loc: Loc,
    /// Operands.
    pub operands: Vec<ValueId>,
    /// Result types.
    pub result_types: Vec<TypeId>,
    /// Discardable attributes (any order).
    pub attrs: Vec<(Symbol, AttrId)>,
    /// Properties (any order).
    pub props: Vec<(Symbol, AttrId)>,
    /// Detached regions.
    pub regions: Vec<RegionId>,
    /// Successor blocks.
    pub successors: Vec<BlockId>,
}

impl OpState {
    /// An empty state for an op called `name`.
    pub fn new(ctx: &mut Interners, name: &str, loc: Loc) -> Self {
        OpState {
            name: ctx.sym(name),
            loc,
            operands: Vec::new(),
            result_types: Vec::new(),
            attrs: Vec::new(),
            props: Vec::new(),
            regions: Vec::new(),
            successors: Vec::new(),
        }
    }

    /// Adds an attribute.
    pub fn attr(mut self, ctx: &mut Interners, name: &str, value: AttrId) -> Self {
        self.attrs.push((ctx.sym(name), value));
        self
    }

    /// Sets the operands.
    pub fn operands(mut self, operands: &[ValueId]) -> Self {
        self.operands = operands.to_vec();
        self
    }

    /// Sets the result types.
    pub fn results(mut self, types: &[TypeId]) -> Self {
        self.result_types = types.to_vec();
        self
    }

    /// Adds a property (an inherent attribute).
    pub fn prop(mut self, ctx: &mut Interners, name: &str, value: AttrId) -> Self {
        self.props.push((ctx.sym(name), value));
        self
    }

    /// Adds a region.
    pub fn region(mut self, r: RegionId) -> Self {
        self.regions.push(r);
        self
    }

    /// Creates the (detached) op.
    pub fn create(mut self, ctx: &mut Context) -> OpId {
        super::registry::fill_defaults(ctx, self.name, &mut self.props, &self.attrs);
        let attrs = ctx.dict_attr(self.attrs);
        let props = ctx.dict_attr(self.props);
        ctx.body.create_op(OpSpec {
            name: self.name,
            loc: self.loc,
            operands: &self.operands,
            result_types: &self.result_types,
            attrs,
            props,
            regions: &self.regions,
            successors: &self.successors,
        })
    }
}

/// Something that creates ops at an insertion point: an [`OpBuilder`] or a rewriter. Typed op builders
/// (`define_op!`) take any of them.
pub trait Build {
    /// Interning for the op's parts.
    fn interners(&mut self) -> &mut Interners;
    /// Creates the op `state` describes at the insertion point.
    fn insert(&mut self, state: OpState) -> OpId;
}

impl Build for OpBuilder<'_> {
    fn interners(&mut self) -> &mut Interners {
        &mut self.ctx.interners
    }
    fn insert(&mut self, state: OpState) -> OpId {
        OpBuilder::insert(self, state)
    }
}

/// Where new ops go.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum InsertPoint {
    /// At the end of a block.
    End(BlockId),
    /// Right before an op.
    Before(OpId),
    /// Nowhere: ops stay detached.
    Detached,
}

/// Creates ops at an insertion point.
pub struct OpBuilder<'c> {
    /// The context ops are created in.
    pub ctx: &'c mut Context,
    /// Where created ops are inserted.
    pub point: InsertPoint,
}

impl<'c> OpBuilder<'c> {
    /// A builder that inserts at `point`.
    pub fn new(ctx: &'c mut Context, point: InsertPoint) -> Self {
        OpBuilder { ctx, point }
    }

    /// Creates the op described by `state` and inserts it.
    pub fn insert(&mut self, state: OpState) -> OpId {
        let op = state.create(self.ctx);
        match self.point {
            InsertPoint::End(b) => self.ctx.body.append_op(b, op),
            InsertPoint::Before(anchor) => self.ctx.body.insert_op_before(anchor, op),
            InsertPoint::Detached => {}
        }
        op
    }

    /// Creates a region with one empty entry block with arguments of `arg_types`; returns both.
    pub fn region_with_block(&mut self, arg_types: &[TypeId], loc: Loc) -> (RegionId, BlockId) {
        let region = self.ctx.body.create_region();
        let block = self.ctx.body.create_block();
        for &t in arg_types {
            self.ctx.body.add_block_arg(block, t, loc);
        }
        self.ctx.body.append_block(region, block);
        (region, block)
    }
}
