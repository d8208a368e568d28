//! Dialect conversion, on MLIR's model: a [`ConversionTarget`] says which ops may remain, a [`TypeConverter`]
//! says what each type becomes (possibly several types, as a tensor becomes its shards), and
//! [`ConversionPattern`]s rewrite illegal ops given their already-converted operands. The [driver] visits ops
//! definitions first, revisits only what a rewrite created, and is linear in the number of ops; where a converted
//! value meets an unconverted use it inserts `builtin.unrealized_conversion_cast` (a materialization) that the
//! `reconcile-unrealized-casts` pass later removes in cancelling pairs. A conversion that fails restores the IR
//! exactly as it was and reports the op it could not legalize.

pub mod driver;
pub mod pattern;
pub mod rewriter;
pub mod target;
pub mod type_converter;

pub use driver::{apply_conversion, ConversionMode, ConversionOutcome};
pub use pattern::{ConversionPattern, OpAdaptor};
pub use rewriter::{ConversionRewriter, UNREALIZED_CAST};
pub use target::{ConversionTarget, Legality};
pub use type_converter::TypeConverter;
