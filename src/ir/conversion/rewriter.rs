//! The rewriter conversion patterns use: a [`Rewriter`] (it derefs to one) that also knows the type converter,
//! replaces results by values of other types or counts, and converts the entry blocks of regions. A result
//! replaced by values of other types is not rewired at once: the op stays until the conversion ends, later
//! patterns read the replacement through their adaptor, and only a use nobody converted gets a cast back to the
//! old type (so a chain of conversions creates no casts at all).

use super::type_converter::TypeConverter;
use crate::ir::body::{BlockId, OpId, RegionId, ValueDef, ValueId};
use crate::ir::entity::EntityId;
use crate::ir::interner::FxHashSet;
use crate::ir::rewrite::Rewriter;
use crate::ir::TypeId;

/// The op the driver inserts where converted and unconverted values meet.
pub const UNREALIZED_CAST: &str = "builtin.unrealized_conversion_cast";

/// What the conversion has replaced so far, shared by the driver and its rewriters. Side tables are dense
/// (indexed by value and op ids), so that a conversion of a million ops does no hashing per op.
#[derive(Default)]
pub(crate) struct Replacements {
    /// Per value id, the range of `pool` holding what the value became, if it was replaced by values of other
    /// types or counts.
    groups: Vec<Option<(u32, u32)>>,
    pool: Vec<ValueId>,
    /// Ops replaced that way, in order: erased when the conversion ends.
    pub(crate) ops: Vec<OpId>,
    /// Per op id, whether it is one of `ops`.
    replaced_ops: Vec<bool>,
    /// Casts back to an original type (of converted entry-block arguments); they stand for their operands.
    pub(crate) casts: FxHashSet<OpId>,
}

impl Replacements {
    /// Records that `v` became `group`.
    fn set_group(&mut self, v: ValueId, group: &[ValueId]) {
        let i = v.index();
        if i >= self.groups.len() {
            self.groups.resize(i + 1, None);
        }
        self.groups[i] = Some((self.pool.len() as u32, group.len() as u32));
        self.pool.extend_from_slice(group);
    }

    /// What `v` became, if it was replaced by values of other types (not through a cast).
    pub(crate) fn replaced(&self, v: ValueId) -> Option<&[ValueId]> {
        let (start, len) = (*self.groups.get(v.index())?)?;
        Some(&self.pool[start as usize..(start + len) as usize])
    }

    /// Records that `op` was replaced and waits to be erased.
    fn defer(&mut self, op: OpId) {
        let i = op.index();
        if i >= self.replaced_ops.len() {
            self.replaced_ops.resize(i + 1, false);
        }
        self.replaced_ops[i] = true;
        self.ops.push(op);
    }

    /// True if `op` was replaced or is a cast the conversion made: nothing more to do with it.
    pub(crate) fn is_done(&self, op: OpId) -> bool {
        self.replaced_ops.get(op.index()).copied().unwrap_or(false) || self.casts.contains(&op)
    }

    /// The values that stand for `v` now, if it was replaced.
    pub(crate) fn group(&self, rw: &Rewriter<'_>, v: ValueId) -> Option<Vec<ValueId>> {
        if let Some(group) = self.replaced(v) {
            return Some(group.to_vec());
        }
        let ValueDef::Result { op, .. } = rw.body.value_def(v) else { return None };
        self.casts.contains(&op).then(|| rw.body.operands(op).collect())
    }
}

/// A rewriter for conversion patterns.
pub struct ConversionRewriter<'c, 'd> {
    rw: Rewriter<'c>,
    types: &'d TypeConverter,
    replaced: &'d mut Replacements,
}

impl<'c> std::ops::Deref for ConversionRewriter<'c, '_> {
    type Target = Rewriter<'c>;
    fn deref(&self) -> &Rewriter<'c> {
        &self.rw
    }
}

impl<'c> std::ops::DerefMut for ConversionRewriter<'c, '_> {
    fn deref_mut(&mut self) -> &mut Rewriter<'c> {
        &mut self.rw
    }
}

impl<'c, 'd> ConversionRewriter<'c, 'd> {
    pub(crate) fn new(rw: Rewriter<'c>, types: &'d TypeConverter, replaced: &'d mut Replacements) -> Self {
        ConversionRewriter { rw, types, replaced }
    }

    pub(crate) fn into_inner(self) -> Rewriter<'c> {
        self.rw
    }

    /// The type converter of this conversion.
    pub fn types(&self) -> &'d TypeConverter {
        self.types
    }

    /// What `ty` becomes under the conversion.
    pub fn convert_type(&mut self, ty: TypeId) -> Vec<TypeId> {
        let types = self.types;
        types.convert(self.rw.interners(), ty)
    }

    /// What a list of types becomes, flattened.
    pub fn convert_types(&mut self, tys: &[TypeId]) -> Vec<TypeId> {
        let types = self.types;
        types.convert_all(self.rw.interners(), tys)
    }

    /// Replaces `op`'s results one for one by `values` (of any types) and erases it.
    pub fn replace_op(&mut self, op: OpId, values: &[ValueId]) {
        let groups: Vec<Vec<ValueId>> = values.iter().map(|&v| vec![v]).collect();
        self.replace_op_with_groups(op, &groups);
    }

    /// Replaces each result of `op` by a group of values (one-to-many) and erases `op`. A result whose
    /// replacement is one value of its own type is replaced directly; for any other, later patterns get the
    /// group through their adaptor, and `op` stays (out of the way) until the conversion ends.
    pub fn replace_op_with_groups(&mut self, op: OpId, groups: &[Vec<ValueId>]) {
        let results: Vec<ValueId> = self.rw.body.results(op).collect();
        assert_eq!(results.len(), groups.len(), "replacement must give one group per result");
        let mut deferred = false;
        for (old, group) in results.into_iter().zip(groups) {
            let ty = self.rw.body.value_type(old);
            if matches!(group.as_slice(), [v] if self.rw.body.value_type(*v) == ty) {
                self.rw.replace_all_uses(old, group[0]);
            } else {
                self.replaced.set_group(old, group);
                deferred = true;
            }
        }
        if deferred {
            self.replaced.defer(op);
        } else {
            self.rw.erase_op(op);
        }
    }

    /// Converts the argument types of the entry block of `region` (a function body, say): each argument becomes
    /// the arguments its type converts to, and a cast back stands for it until its users are converted.
    pub fn convert_region_types(&mut self, region: RegionId) {
        let Some(&entry) = self.rw.body.region(region).blocks.first() else { return };
        let args = self.rw.body.block(entry).args.clone();
        let converted: Vec<Vec<TypeId>> = args.iter().map(|&a| self.convert_type(self.rw.body.value_type(a))).collect();
        if args.iter().zip(&converted).all(|(&a, c)| c.as_slice() == [self.rw.body.value_type(a)]) {
            return;
        }
        let new_entry = self.rebuild_entry(region, entry);
        let point = self.rw.insertion_point();
        for (&old, types) in args.iter().zip(&converted) {
            let group: Vec<ValueId> = types.iter().map(|&t| self.rw.add_block_arg(new_entry, t)).collect();
            self.rw.set_insertion_point_to_start(new_entry);
            let ty = self.rw.body.value_type(old);
            let direct = matches!(group.as_slice(), [v] if self.rw.body.value_type(*v) == ty);
            let new = if direct { group[0] } else { self.source_cast(&group, ty) };
            self.rw.replace_all_uses(old, new);
        }
        self.rw.set_insertion_point(point);
    }

    /// Moves the ops of `entry` into a new argument-less entry block of `region`.
    fn rebuild_entry(&mut self, region: RegionId, entry: BlockId) -> BlockId {
        let rest = self.rw.take_blocks(region);
        let point = self.rw.insertion_point();
        let new_entry = self.rw.create_block(region, &[]);
        self.rw.set_insertion_point(point);
        for op in self.rw.body.block_ops(entry).collect::<Vec<_>>() {
            self.rw.move_op_to_end(op, new_entry);
        }
        for block in rest.into_iter().filter(|&b| b != entry) {
            self.rw.append_block(region, block);
        }
        new_entry
    }

    /// A cast of `group` to `ty` at the insertion point, recorded as a materialization.
    fn source_cast(&mut self, group: &[ValueId], ty: TypeId) -> ValueId {
        let cast = source_cast(&mut self.rw, group, ty);
        self.replaced.casts.insert(cast);
        self.rw.body.result(cast, 0)
    }
}

/// A `builtin.unrealized_conversion_cast` of `group` to `ty` at the insertion point.
pub(crate) fn source_cast(rw: &mut Rewriter<'_>, group: &[ValueId], ty: TypeId) -> OpId {
    let state = rw.op_state(UNREALIZED_CAST).operands(group).results(&[ty]);
    rw.create(state)
}
