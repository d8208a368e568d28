//! The dialect's attributes: one payload per notation, each printed back in its own notation.

use crate::ir::dialect_data::DialectValue;
use crate::layout::core_form::GeneralLayout;
use crate::layout::format::Tabulation;
use crate::layout::notation::ck::CkLayout;
use crate::layout::notation::cute::{CuteLayout, IntTuple};
use crate::layout::notation::furiosa::FuriosaLayout;
use crate::layout::notation::xla::XlaLayout;
use crate::layout::strided::{Layout, LayoutError};
use crate::layout::swizzle::Swizzle;
use crate::layout::table::Order;
use std::hash::Hash;

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
    /// The general core form it means: what tables, equivalence and `layout-print{format=core}` read.
    pub fn to_core(&self) -> Result<GeneralLayout, LayoutError> {
        match self {
            LayoutAttr::Cute(c) => {
                let inner = c.layout()?.to_repr_at(c.offset)?;
                Ok(GeneralLayout { swizzle: c.swizzle()?, ..GeneralLayout::from(inner) })
            }
            LayoutAttr::Xla(x) => x.to_core(),
            LayoutAttr::Furiosa(f) => crate::layout::notation::furiosa_to_core::to_core(f),
            LayoutAttr::Ck(c) => c.to_core(),
        }
    }

    /// The strided core layout it means, for the algebra, views and loops: an error naming the stage or swizzle
    /// when it has none, so that nothing compares or views a layout as if its stages were not there.
    pub fn to_repr(&self) -> Result<Layout, LayoutError> {
        self.to_core()?
            .into_strided()
            .map_err(|e| LayoutError(format!("the layout {} has no strided form: {e}", self.show())))
    }

    /// The attribute as written in the IR.
    pub fn show(&self) -> String {
        format!("#{}<{}>", self.name(), self.print_body().unwrap_or_default())
    }

    /// Checks what parsing cannot: sizes, preconditions, and that the layout has a core form. (A CuTe layout is
    /// a function of its coordinates first: it may reach negative offsets, which a core form, a buffer, cannot.)
    pub fn validate(&self) -> Result<(), LayoutError> {
        match self {
            LayoutAttr::Cute(c) => c.validate(),
            LayoutAttr::Furiosa(f) => {
                f.validate().and_then(|_| crate::layout::notation::furiosa_to_core::to_core(f)).map(|_| ())
            }
            LayoutAttr::Xla(x) => x.validate(),
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

impl LayoutAttr {
    /// Tabulates the layout if it has at most `limit` elements and positions (else says how many it has).
    pub fn tabulate(&self, limit: u64) -> Result<Tabulation, LayoutError> {
        Tabulation::of(&self.to_core()?, self.order(), limit)
    }

    /// The loop nest that visits the stored elements in the notation's order.
    pub fn access_pattern(&self) -> Result<crate::layout::address::AccessPattern, LayoutError> {
        let strided = self.to_core()?.into_strided();
        let strided = strided.map_err(|e| LayoutError(format!("{e}: it needs a general address form, not loops")))?;
        crate::layout::address::access_pattern(&strided, self.order())
    }
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
}

/// The layout interface of layout attributes: their core form.
pub struct LayoutAttrInterface;

impl crate::interfaces::layout::LayoutInterface for LayoutAttrInterface {
    fn core_form(&self, payload: &dyn DialectValue) -> Result<GeneralLayout, LayoutError> {
        let attr = payload.as_any().downcast_ref::<LayoutAttr>().ok_or_else(|| LayoutError("not a layout".into()))?;
        attr.to_core()
    }
}
