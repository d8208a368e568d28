//! `builtin.unrealized_conversion_cast`: stands for a value of one type as values of other types (or the
//! reverse) while a dialect conversion is under way. The conversion driver inserts it where converted and
//! unconverted IR meet; `reconcile-unrealized-casts` removes the pairs that cancel. It has no meaning of its own.
//!
//! Pretty form (MLIR's): `%r = builtin.unrealized_conversion_cast %a, %b : i32, i32 to i64`.

use crate::ir::conversion::UNREALIZED_CAST;
use crate::ir::{Arity, OpInfo, OpTrait, Syntax};

/// The registration of `builtin.unrealized_conversion_cast`.
pub const INFO: OpInfo = OpInfo {
    operands: Arity::Any,
    results: Arity::AtLeast(1),
    traits: &[OpTrait::Pure],
    syntax: Syntax::Format("($operands^ `:` type($operands))? `to` type($results) attr-dict"),
    ..OpInfo::new(UNREALIZED_CAST, "a placeholder conversion between types during dialect conversion")
};

crate::define_op! {
    /// A typed `builtin.unrealized_conversion_cast`.
    pub struct UnrealizedCastOp = "builtin.unrealized_conversion_cast";
    operands {}
    results {}
    props {}
}
