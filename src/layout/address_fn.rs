//! Address functions: a notation's own function from coordinates to offsets, for the layouts that no digit or
//! coordinate stage can say (a CK `pad`/`merge`/`modulo`/`xor` of a coordinate mixing others unevenly, an XLA
//! repeated tile splitting a combined coordinate inside a digit), evaluated coordinate by coordinate. The
//! [`AddressFn`] trait is what a notation implements (in its own file), and [`Computed`] the computed stage's
//! function behind it, so the core form knows no notation by name. Exact, but only tables and equality of the
//! same function are structural; everything else goes through tables.

use super::strided::{fail, LayoutError};
use std::any::Any;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// A notation's function from logical coordinates to buffer offsets. `Display` writes the layout in its own
/// notation; equality and hashing are the notation's structural ones (its `Eq + Hash`, through [`DynLayout`]).
pub trait AddressFn: DynLayout + fmt::Debug + fmt::Display + Send + Sync + 'static {
    /// The notation's name (`ck`, `xla`), which prefixes the function when it is printed.
    fn notation(&self) -> &'static str;

    /// The buffer size.
    fn cosize(&self) -> Result<u64, LayoutError>;

    /// The offset of the element at coordinate `e` (in the logical space's extents), or `None` if it is not
    /// stored.
    fn offset(&self, e: &[u64]) -> Option<u64>;

    /// Whether every offset lies in `[0, cosize)` by the function's construction, so that validating the layout
    /// need not evaluate it at every coordinate.
    fn in_bounds_by_construction(&self) -> bool {
        false
    }

    /// Steps one call of [`AddressFn::offset`] takes, in units of one transform: what bounds the validation.
    fn steps_per_offset(&self) -> u64 {
        1
    }
}

/// Equality and hashing of an address function seen as `dyn`, for every `Eq + Hash` layout.
pub trait DynLayout: Any {
    /// Whether `other` is the same layout of the same notation.
    fn eq_dyn(&self, other: &dyn Any) -> bool;
    /// Hashes the layout, agreeing with [`DynLayout::eq_dyn`].
    fn hash_dyn(&self, state: &mut dyn Hasher);
    /// The layout as `Any`, for `eq_dyn` to downcast the other side.
    fn as_any(&self) -> &dyn Any;
}

impl<T: Any + Eq + Hash> DynLayout for T {
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

/// The function of a computed stage: a notation's address function, shared. Equal when it is the same layout of
/// the same notation; printed `notation(layout)`.
#[derive(Clone)]
pub struct Computed(Arc<dyn AddressFn>);

/// Steps spent checking a computed layout when it is validated (every offset must lie in the buffer): elements
/// times [`AddressFn::steps_per_offset`].
pub const CHECK_LIMIT: u64 = 1 << 22;

impl Computed {
    /// The computed stage's function for a notation's layout.
    pub fn new(f: impl AddressFn) -> Computed {
        Computed(Arc::new(f))
    }

    /// The buffer size.
    pub fn cosize(&self) -> Result<u64, LayoutError> {
        self.0.cosize()
    }

    /// The offset of the element at coordinate `e`, or `None` if it is not stored.
    pub fn offset(&self, e: &[u64]) -> Option<u64> {
        self.0.offset(e)
    }

    /// Checks that every element of the `extents` space lands in `[0, cosize)` (up to [`CHECK_LIMIT`] steps;
    /// a larger layout is an error that says so rather than an unchecked one), unless the function guarantees it.
    pub fn check(&self, extents: &[u64]) -> Result<(), LayoutError> {
        if self.0.in_bounds_by_construction() {
            return self.cosize().map(|_| ());
        }
        let size = extents.iter().try_fold(1u64, |a, &b| a.checked_mul(b)).unwrap_or(u64::MAX);
        let steps = self.0.steps_per_offset();
        if size.saturating_mul(steps) > CHECK_LIMIT {
            return fail(format!(
                "{self} has no strided form and {size} elements of {steps} steps each, more than the {CHECK_LIMIT} steps checked"
            ));
        }
        let cosize = self.cosize()?;
        for i in 0..size {
            let e = row_major_coordinate(i, extents);
            if let Some(o) = self.offset(&e) {
                if o >= cosize {
                    return fail(format!("{self} puts element {e:?} at offset {o}, past its buffer of {cosize}"));
                }
            }
        }
        Ok(())
    }
}

/// The coordinate of element number `i` (row-major, the last coordinate fastest) of a space with `extents`.
fn row_major_coordinate(mut i: u64, extents: &[u64]) -> Vec<u64> {
    let mut e = vec![0; extents.len()];
    for k in (0..extents.len()).rev() {
        e[k] = i % extents[k];
        i /= extents[k];
    }
    e
}

impl PartialEq for Computed {
    fn eq(&self, other: &Computed) -> bool {
        self.0.notation() == other.0.notation() && self.0.eq_dyn(other.0.as_any())
    }
}

impl Eq for Computed {}

impl Hash for Computed {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.notation().hash(state);
        self.0.hash_dyn(state);
    }
}

impl fmt::Debug for Computed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Computed").field(&self.0).finish()
    }
}

impl fmt::Display for Computed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}({})", self.0.notation(), self.0)
    }
}
