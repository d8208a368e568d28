//! The dialect's attributes: one payload per notation, each printed back in its own notation.

use super::cute::{CuteLayout, IntTuple};
use super::cute_algebra::Swizzle;
use super::repr::{Layout, LayoutError};
use super::table::Order;
use crate::ir::dialect_data::DialectValue;
use std::any::Any;
use std::hash::{Hash, Hasher};

/// `#layout.cute<...>`: a CuTe layout, optionally composed with a swizzle and an offset
/// (`Sw<b,m,s> o offset o shape:stride`, the offset omitted when 0).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CuteAttr {
    /// `(bits, base, shift)` of the swizzle applied to `offset + L(i)`.
    pub swizzle: Option<(i64, i64, i64)>,
    /// Added to the layout's offsets before the swizzle.
    pub offset: i64,
    /// The layout's shape.
    pub shape: IntTuple,
    /// The layout's stride.
    pub stride: IntTuple,
}

impl CuteAttr {
    /// The attribute of a plain layout.
    pub fn plain(l: CuteLayout) -> CuteAttr {
        CuteAttr { swizzle: None, offset: 0, shape: l.shape, stride: l.stride }
    }

    /// The layout without its swizzle, checked.
    pub fn layout(&self) -> Result<CuteLayout, LayoutError> {
        CuteLayout::new(self.shape.clone(), self.stride.clone())
    }

    /// The swizzle, checked.
    pub fn swizzle(&self) -> Result<Option<Swizzle>, LayoutError> {
        let Some((b, m, s)) = self.swizzle else { return Ok(None) };
        let small = |v: i64| u32::try_from(v).map_err(|_| LayoutError(format!("swizzle parameter {v} out of range")));
        let shift = i32::try_from(s).map_err(|_| LayoutError(format!("swizzle shift {s} out of range")))?;
        Swizzle::new(small(b)?, small(m)?, shift).map(Some)
    }

    /// Checks the attribute: congruent positive shapes, a valid swizzle.
    pub fn validate(&self) -> Result<(), LayoutError> {
        self.layout()?;
        self.swizzle()?;
        Ok(())
    }
}

impl std::fmt::Display for CuteAttr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some((b, m, s)) = self.swizzle {
            write!(f, "Sw<{b},{m},{s}> o ")?;
            if self.offset != 0 {
                write!(f, "{} o ", self.offset)?;
            }
        }
        write!(f, "{}:{}", self.shape, self.stride)
    }
}

/// A layout attribute of any notation.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum LayoutAttr {
    /// `#layout.cute<...>`.
    Cute(CuteAttr),
}

impl LayoutAttr {
    /// The core layout it means (without a swizzle, which is not affine).
    pub fn to_repr(&self) -> Result<Layout, LayoutError> {
        match self {
            LayoutAttr::Cute(c) => c.layout()?.to_repr(),
        }
    }

    /// The order in which the notation numbers logical elements.
    pub fn order(&self) -> Order {
        match self {
            LayoutAttr::Cute(_) => Order::Colex,
        }
    }
}

impl DialectValue for LayoutAttr {
    fn name(&self) -> &str {
        match self {
            LayoutAttr::Cute(_) => "layout.cute",
        }
    }

    fn print_body(&self) -> Option<String> {
        match self {
            LayoutAttr::Cute(c) => Some(c.to_string()),
        }
    }

    fn eq_dyn(&self, other: &dyn DialectValue) -> bool {
        other.as_any().downcast_ref::<LayoutAttr>() == Some(self)
    }

    fn hash_dyn(&self, mut state: &mut dyn Hasher) {
        self.hash(&mut state);
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
