//! Conversion patterns: like rewrite patterns, but they receive the op's operands already converted (an
//! [`OpAdaptor`]: each original operand as the values it became) and rewrite through a [`ConversionRewriter`].

use super::rewriter::ConversionRewriter;
use crate::ir::{OpId, ValueId};

/// A rule that converts one op kind.
pub trait ConversionPattern {
    /// A name for debugging and statistics.
    fn name(&self) -> &'static str;
    /// The op name it applies to (`None`: any op).
    fn root(&self) -> Option<&'static str>;
    /// Patterns with higher benefit are tried first.
    fn benefit(&self) -> u16 {
        1
    }
    /// Converts `op` if it matches, reading its converted operands from `operands`; returns whether it did. A
    /// pattern that returns false must not have changed anything.
    fn match_and_rewrite(&self, op: OpId, operands: &OpAdaptor, rw: &mut ConversionRewriter<'_, '_>) -> bool;
}

/// The converted operands of an op: for each original operand, the values that stand for it now (one for a
/// one-to-one conversion, several for one-to-many).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OpAdaptor {
    groups: Vec<Vec<ValueId>>,
}

impl OpAdaptor {
    /// An adaptor over the given groups.
    pub fn new(groups: Vec<Vec<ValueId>>) -> Self {
        OpAdaptor { groups }
    }

    /// The value operand `index` became, if it became exactly one.
    pub fn get(&self, index: usize) -> Option<ValueId> {
        match self.groups.get(index)?.as_slice() {
            [v] => Some(*v),
            _ => None,
        }
    }

    /// The values operand `index` became.
    pub fn group(&self, index: usize) -> &[ValueId] {
        self.groups.get(index).map_or(&[], |g| g.as_slice())
    }

    /// Every converted value, in operand order.
    pub fn flat(&self) -> Vec<ValueId> {
        self.groups.iter().flatten().copied().collect()
    }

    /// Number of original operands.
    pub fn len(&self) -> usize {
        self.groups.len()
    }

    /// True for an op without operands.
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }
}
