//! The dialect's attributes: one payload per notation, each printed back in its own notation.

use super::ck::CkLayout;
use super::cute::{CuteLayout, IntTuple};
use super::cute_algebra::Swizzle;
use super::furiosa::FuriosaLayout;
use super::repr::{Layout, LayoutError};
use super::table::{offsets, positions, Order, Slot};
use super::xla::XlaLayout;
use crate::ir::dialect_data::DialectValue;
use std::any::Any;
use std::hash::{Hash, Hasher};

/// `#layout.cute<...>`: a CuTe layout, optionally composed with an offset and a swizzle
/// (`Sw<b,m,s> o offset o shape:stride`, each part omitted when absent or 0).
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
        }
        if self.offset != 0 {
            write!(f, "{} o ", self.offset)?;
        }
        write!(f, "{}:{}", self.shape, self.stride)
    }
}

/// A layout attribute of any notation.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum LayoutAttr {
    /// `#layout.cute<...>`.
    Cute(CuteAttr),
    /// `#layout.xla<...>`.
    Xla(XlaLayout),
    /// `#layout.furiosa<...>`.
    Furiosa(FuriosaLayout),
    /// `#layout.ck<...>`.
    Ck(CkLayout),
}

impl LayoutAttr {
    /// The core layout it means. A swizzled CuTe layout has none yet (a swizzle is not a sum of digits): an error,
    /// so that nothing compares or views it as if it were unswizzled.
    pub fn to_repr(&self) -> Result<Layout, LayoutError> {
        match self {
            LayoutAttr::Cute(c) if c.swizzle.is_some() => {
                Err(LayoutError(format!("the swizzled layout {c} has no core form yet (only its table)")))
            }
            LayoutAttr::Cute(c) => c.layout()?.to_repr_at(c.offset),
            LayoutAttr::Xla(x) => x.to_repr(),
            LayoutAttr::Furiosa(f) => super::furiosa_lower::to_repr(f),
            LayoutAttr::Ck(c) => c.to_repr(),
        }
    }

    /// Checks what parsing cannot: sizes, preconditions, and (Furiosa) that the mapping has a strided meaning.
    pub fn validate(&self) -> Result<(), LayoutError> {
        match self {
            LayoutAttr::Cute(c) => c.validate(),
            LayoutAttr::Xla(x) => x.validate(),
            LayoutAttr::Furiosa(f) => f.validate().and_then(|_| super::furiosa_lower::to_repr(f)).map(|_| ()),
            LayoutAttr::Ck(c) => c.validate(),
        }
    }

    /// The order in which the notation numbers logical elements.
    pub fn order(&self) -> Order {
        match self {
            LayoutAttr::Cute(_) => Order::Colex,
            LayoutAttr::Xla(_) | LayoutAttr::Furiosa(_) | LayoutAttr::Ck(_) => Order::RowMajor,
        }
    }
}

/// A layout tabulated in its notation's element order: what `layout-print` shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tabulation {
    /// Number of logical elements.
    pub size: u64,
    /// Buffer size, padding included.
    pub cosize: u64,
    /// The offset of each element (`None`: not stored).
    pub offsets: Vec<Option<i64>>,
    /// What each buffer position holds.
    pub positions: Vec<Slot>,
}

impl LayoutAttr {
    /// Tabulates the layout if it has at most `limit` elements and positions (else says how many it has).
    pub fn tabulate(&self, limit: u64) -> Result<Tabulation, LayoutError> {
        // A swizzled layout is tabulated from its unswizzled layout, then swizzled offset by offset.
        let repr = match self {
            LayoutAttr::Cute(c) if c.swizzle.is_some() => c.layout()?.to_repr()?,
            _ => self.to_repr()?,
        };
        let too_big = |what: &str, n: u64| LayoutError(format!("{n} {what} are more than the limit of {limit}"));
        if repr.size() > limit {
            return Err(too_big("elements", repr.size()));
        }
        match self {
            LayoutAttr::Cute(c) => match c.swizzle()? {
                None => Ok(self.tabulate_repr(&repr, limit)?),
                Some(sw) => {
                    let offs: Vec<Option<i64>> =
                        offsets(&repr, self.order()).into_iter().map(|o| o.map(|o| sw.apply(c.offset + o))).collect();
                    if let Some(neg) = offs.iter().flatten().find(|&&o| o < 0) {
                        return Err(LayoutError(format!("the swizzled layout reaches offset {neg}")));
                    }
                    let cosize = offs.iter().flatten().max().map_or(0, |m| *m as u64 + 1);
                    if cosize > limit {
                        return Err(too_big("positions", cosize));
                    }
                    let positions = slots_of(&offs, cosize);
                    Ok(Tabulation { size: repr.size(), cosize, offsets: offs, positions })
                }
            },
            LayoutAttr::Xla(_) | LayoutAttr::Furiosa(_) | LayoutAttr::Ck(_) => self.tabulate_repr(&repr, limit),
        }
    }

    fn tabulate_repr(&self, repr: &Layout, limit: u64) -> Result<Tabulation, LayoutError> {
        if repr.cosize > limit {
            return Err(LayoutError(format!("{} positions are more than the limit of {limit}", repr.cosize)));
        }
        let order = self.order();
        Ok(Tabulation {
            size: repr.size(),
            cosize: repr.cosize,
            offsets: offsets(repr, order),
            positions: positions(repr, order),
        })
    }
}

impl LayoutAttr {
    /// The loop nest that visits the stored elements in the notation's order.
    pub fn access_pattern(&self) -> Result<super::address::AccessPattern, LayoutError> {
        if let LayoutAttr::Cute(c) = self {
            if c.swizzle.is_some() {
                return Err(LayoutError(format!("the swizzle of {c} needs a general address form, not loops")));
            }
        }
        super::address::access_pattern(&self.to_repr()?, self.order())
    }
}

/// Positions from element offsets alone (every unused position is Top padding).
fn slots_of(offsets: &[Option<i64>], cosize: u64) -> Vec<Slot> {
    let mut live: Vec<Vec<u64>> = vec![Vec::new(); cosize as usize];
    for (i, o) in offsets.iter().enumerate() {
        if let Some(o) = o {
            live[*o as usize].push(i as u64);
        }
    }
    live.into_iter()
        .map(|v| if v.is_empty() { Slot::Padding(super::repr::PadKind::Top) } else { Slot::Live(v) })
        .collect()
}

impl DialectValue for LayoutAttr {
    fn name(&self) -> &str {
        match self {
            LayoutAttr::Cute(_) => "layout.cute",
            LayoutAttr::Xla(_) => "layout.xla",
            LayoutAttr::Furiosa(_) => "layout.furiosa",
            LayoutAttr::Ck(_) => "layout.ck",
        }
    }

    fn print_body(&self) -> Option<String> {
        match self {
            LayoutAttr::Cute(c) => Some(c.to_string()),
            LayoutAttr::Xla(x) => Some(x.to_string()),
            LayoutAttr::Furiosa(f) => Some(f.to_string()),
            LayoutAttr::Ck(c) => Some(c.to_string()),
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
