//! ZSpace: the integer geometry of tensors and block operators (Tapestry's `zspace`). Points are `[i64]`
//! coordinates; [`ZRange`] boxes hold them; an [`Ipf`] projects an operator's index space onto the boxes of a
//! tensor; [`check_cover`] decides whether shards cover a range exactly; [`dim_kinds`] reads off what each index
//! dimension is. A library of its own: it imports nothing else of the crate, so dialects and passes can share it.

pub mod cover;
pub mod ipf;
pub mod kinds;
pub mod range;

pub use cover::check_cover;
pub use ipf::{Ipf, ZAffineMap};
pub use kinds::{dim_kinds, Access, DimKind, DimRole};
pub use range::ZRange;

use std::fmt;

/// A geometry error: what does not fit, with the numbers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ZError(pub String);

impl fmt::Display for ZError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ZError {}
