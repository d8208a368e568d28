//! Payloads that dialects attach to types and attributes without the core knowing their structure.
//!
//! A dialect implements [`DialectValue`] for its own struct; the core stores it behind [`DialectData`], which
//! provides the equality and hashing that interning needs. What other dialects may ask of a payload goes through
//! interfaces attached to its Rust type (`Registry::attach_payload_interface`), never through this trait.

use std::any::Any;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// What a dialect-defined type or attribute payload must provide.
pub trait DialectValue: Any + fmt::Debug + Send + Sync {
    /// The full mnemonic, `dialect.name`.
    fn name(&self) -> &str;
    /// The body printed between `<` and `>` (without them); `None` prints no brackets.
    fn print_body(&self) -> Option<String>;
    /// Structural equality with another payload (of any dialect).
    fn eq_dyn(&self, other: &dyn DialectValue) -> bool;
    /// Feeds the structure to a hasher; equal payloads must hash equally.
    fn hash_dyn(&self, state: &mut dyn Hasher);
    /// Upcast used for downcasting to the concrete payload (and for finding its interfaces).
    fn as_any(&self) -> &dyn Any;
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
        self.0.eq_dyn(&*other.0)
    }
}

impl Eq for DialectData {}

impl Hash for DialectData {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.name().hash(state);
        self.0.hash_dyn(state);
    }
}
