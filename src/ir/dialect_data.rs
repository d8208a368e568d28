//! Payloads that dialects attach to types and attributes without the core knowing their structure.
//!
//! A dialect implements [`DialectValue`] for its own struct; the core stores it behind [`DialectData`], which
//! provides the equality and hashing that interning needs. What other dialects may ask of a payload goes through
//! interfaces attached to its Rust type (`Registry::attach_payload_interface`), never through this trait.

use std::any::Any;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// What a dialect-defined type or attribute payload must provide (equality, hashing and downcasting come with
/// `Eq + Hash`, through [`DynValue`]).
pub trait DialectValue: DynValue + fmt::Debug + Send + Sync {
    /// The full mnemonic, `dialect.name`.
    fn name(&self) -> &str;
    /// The body printed between `<` and `>` (without them); `None` prints no brackets.
    fn print_body(&self) -> Option<String>;
}

/// Equality, hashing and downcasting of a value seen as `dyn`, for every `Eq + Hash` type.
pub trait DynValue: Any {
    /// Structural equality with another value of any type (false across types).
    fn eq_dyn(&self, other: &dyn Any) -> bool;
    /// Feeds the structure to a hasher; equal values hash equally.
    fn hash_dyn(&self, state: &mut dyn Hasher);
    /// Upcast used for downcasting to the concrete type (and for finding a payload's interfaces).
    fn as_any(&self) -> &dyn Any;
}

impl<T: Any + Eq + Hash> DynValue for T {
    fn eq_dyn(&self, other: &dyn Any) -> bool {
        other.downcast_ref::<T>() == Some(self)
    }

    fn hash_dyn(&self, mut state: &mut dyn Hasher) {
        self.hash(&mut state);
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A shared, interning-friendly handle to a dialect payload.
#[derive(Clone, Debug)]
pub struct DialectData(pub Arc<dyn DialectValue>);

impl DialectData {
    /// The payload as the concrete type `T`, if it is one.
    pub fn downcast<T: DialectValue>(&self) -> Option<&T> {
        self.0.as_any().downcast_ref::<T>()
    }
}

impl PartialEq for DialectData {
    fn eq(&self, other: &Self) -> bool {
        self.0.eq_dyn(other.0.as_any())
    }
}

impl Eq for DialectData {}

impl Hash for DialectData {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.name().hash(state);
        self.0.hash_dyn(state);
    }
}
