//! The layout interface, on attributes (the role of MLIR's `MemRefLayoutAttrInterface`): an attribute that says
//! where a tensor's elements sit gives its meaning in the layout library's core form; element counts, offsets
//! and access patterns follow from that. An op of any dialect checks or uses a layout through it without
//! importing the dialect that defines the attribute.

use crate::ir::dialect_data::DialectValue;
use crate::ir::{AttrId, Interners};
use crate::layout::address::{access_pattern, AccessPattern};
use crate::layout::core_form::GeneralLayout;
use crate::layout::strided::LayoutError;
use crate::layout::table::Order;

/// The interface: a layout attribute's meaning.
pub trait LayoutInterface: Sync {
    /// The layout `payload` (an attribute payload this implementation is attached to) in the core form.
    fn core_form(&self, payload: &dyn DialectValue) -> Result<GeneralLayout, LayoutError>;
}

/// A layout attribute seen through its interface.
#[derive(Copy, Clone)]
pub struct LayoutRef<'a> {
    imp: &'static dyn LayoutInterface,
    payload: &'a dyn DialectValue,
}

/// `attr` as a layout, if it is an attribute implementing the interface.
pub fn layout_of(ints: &Interners, attr: AttrId) -> Option<LayoutRef<'_>> {
    let (imp, payload) = ints.attr_interface::<dyn LayoutInterface>(attr)?;
    Some(LayoutRef { imp, payload })
}

impl LayoutRef<'_> {
    /// The layout in the core form, or why it is not a valid layout.
    pub fn core_form(&self) -> Result<GeneralLayout, LayoutError> {
        self.imp.core_form(self.payload)
    }

    /// How many logical elements it places.
    pub fn element_count(&self) -> Result<u64, LayoutError> {
        Ok(self.core_form()?.size())
    }

    /// The buffer offset of each logical element in `order` (`None` for an element stored nowhere).
    pub fn offsets(&self, order: Order) -> Result<Vec<Option<i64>>, LayoutError> {
        self.core_form()?.offsets(order)
    }

    /// Loops visiting the stored elements in `order`, for a layout that is strided (an error otherwise).
    pub fn access_pattern(&self, order: Order) -> Result<AccessPattern, LayoutError> {
        let core = self.core_form()?;
        let strided = core.as_strided().ok_or_else(|| LayoutError("the layout is not strided".into()))?;
        access_pattern(strided, order)
    }
}
