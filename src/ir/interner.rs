//! Uniquing tables: equal types, attributes and strings get one id, so comparing them is comparing ids.
//!
//! Backed by `IndexSet`, so an id is the insertion index and iteration order is deterministic.

use super::entity::EntityId;
use indexmap::IndexSet;
use std::hash::Hash;
use std::marker::PhantomData;

/// A uniquing table from values of `T` to dense ids of type `I`.
#[derive(Clone, Debug)]
pub struct Interner<I, T> {
    set: IndexSet<T, FxBuild>,
    _id: PhantomData<fn(I) -> I>,
}

impl<I: EntityId, T: Hash + Eq> Interner<I, T> {
    /// An empty table.
    pub fn new() -> Self {
        Interner { set: IndexSet::default(), _id: PhantomData }
    }

    /// The id of `value`, adding it if it is new.
    pub fn intern(&mut self, value: T) -> I {
        I::from_index(self.set.insert_full(value).0)
    }

    /// The id of `value` if it was interned before.
    pub fn lookup<Q>(&self, value: &Q) -> Option<I>
    where
        T: std::borrow::Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.set.get_index_of(value).map(I::from_index)
    }

    /// The value behind `id`.
    pub fn get(&self, id: I) -> &T {
        &self.set[id.index()]
    }

    /// Number of distinct values.
    pub fn len(&self) -> usize {
        self.set.len()
    }

    /// True when nothing was interned.
    pub fn is_empty(&self) -> bool {
        self.set.is_empty()
    }
}

impl<I: EntityId, T: Hash + Eq> Default for Interner<I, T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<I: EntityId, T: Hash + Eq> std::ops::Index<I> for Interner<I, T> {
    type Output = T;
    fn index(&self, id: I) -> &T {
        self.get(id)
    }
}

/// A fast non-cryptographic hasher (the Fx multiply-rotate scheme) for the parser's and interners' tables;
/// keys there are small and not attacker-controlled in a way that matters for a batch tool.
#[derive(Default, Clone, Copy)]
pub struct FxHasher {
    hash: u64,
}

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FxHasher {
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl std::hash::Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().unwrap()));
        }
        for &b in chunks.remainder() {
            self.add(b as u64);
        }
    }
    fn write_u8(&mut self, i: u8) {
        self.add(i as u64);
    }
    fn write_u32(&mut self, i: u32) {
        self.add(i as u64);
    }
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
    fn finish(&self) -> u64 {
        // The product's well-mixed high bits move down to where hash tables take their bucket index; without this,
        // keys that differ only in their last bytes (`%c123`, `%c124`) collide.
        self.hash.rotate_left(26)
    }
}

/// `BuildHasher` for [`FxHasher`].
pub type FxBuild = std::hash::BuildHasherDefault<FxHasher>;

/// A `HashMap` with the Fx hasher, for lookup tables whose iteration order never reaches output.
pub type FxHashMap<K, V> = std::collections::HashMap<K, V, FxBuild>;
/// A `HashSet` with [`FxHasher`].
pub type FxHashSet<T> = std::collections::HashSet<T, FxBuild>;
