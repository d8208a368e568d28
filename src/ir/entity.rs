//! Typed `u32` ids and the dense vectors they index: the storage discipline of the whole IR.
//!
//! Every IR object lives in an append-only arena and is named by a `Copy` id. Ids are never reused, so a
//! stale id can be detected (tombstones) but never aliases a newer object.

use std::marker::PhantomData;

/// Defines a 32-bit id newtype (stored as index + 1 in a `NonZeroU32`, so `Option<Id>` stays 4 bytes);
/// `$prefix` is used by `Debug` (`op7`, `v3`).
#[macro_export]
macro_rules! define_id {
    ($(#[$m:meta])* $name:ident, $prefix:literal) => {
        $(#[$m])*
        #[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(std::num::NonZeroU32);

        impl $crate::ir::entity::EntityId for $name {
            fn from_index(index: usize) -> Self {
                let raw = u32::try_from(index + 1).expect("arena exceeds u32::MAX entries");
                $name(std::num::NonZeroU32::new(raw).unwrap())
            }
            fn index(self) -> usize {
                self.0.get() as usize - 1
            }
        }

        impl std::fmt::Debug for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, concat!($prefix, "{}"), self.0.get() - 1)
            }
        }
    };
}

/// An id that indexes an [`IdVec`].
pub trait EntityId: Copy + Eq {
    /// Builds the id of the `index`-th arena entry.
    fn from_index(index: usize) -> Self;
    /// The arena position this id names.
    fn index(self) -> usize;
}

/// A vector indexed by a typed id; `push` hands out the id of the new entry.
#[derive(Clone, Debug)]
pub struct IdVec<I, T> {
    items: Vec<T>,
    _id: PhantomData<fn(I) -> I>,
}

impl<I: EntityId, T> IdVec<I, T> {
    /// An empty arena.
    pub fn new() -> Self {
        IdVec { items: Vec::new(), _id: PhantomData }
    }

    /// Appends `item` and returns its id.
    pub fn push(&mut self, item: T) -> I {
        let id = I::from_index(self.items.len());
        self.items.push(item);
        id
    }

    /// The id the next `push` will return.
    pub fn next_id(&self) -> I {
        I::from_index(self.items.len())
    }

    /// Number of entries ever pushed (tombstones included).
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// True when nothing was ever pushed.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// All ids with their entries, in push order.
    pub fn iter(&self) -> impl Iterator<Item = (I, &T)> {
        self.items.iter().enumerate().map(|(i, t)| (I::from_index(i), t))
    }

    /// Reserves room for `n` more entries.
    pub fn reserve(&mut self, n: usize) {
        self.items.reserve(n);
    }
}

impl<I: EntityId, T> Default for IdVec<I, T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<I: EntityId, T> std::ops::Index<I> for IdVec<I, T> {
    type Output = T;
    fn index(&self, id: I) -> &T {
        &self.items[id.index()]
    }
}

impl<I: EntityId, T> std::ops::IndexMut<I> for IdVec<I, T> {
    fn index_mut(&mut self, id: I) -> &mut T {
        &mut self.items[id.index()]
    }
}
