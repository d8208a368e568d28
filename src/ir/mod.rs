//! The dialect-agnostic IR core: arenas of ops, values, blocks and regions; interned types, attributes and
//! locations; the registry; the printer; the verifier; diagnostics.
//!
//! **Architecture invariant:** nothing in `ir` imports another module of the crate. Dialects, the parser and
//! passes build on it; it knows none of them.

pub mod affine;
pub mod asm;
pub mod attrs;
pub mod body;
pub mod builder;
pub mod clone;
mod context;
pub mod conversion;
pub mod diag;
pub mod dialect_data;
pub mod dominance;
pub mod entity;
pub mod float_bits;
pub mod footprint;
pub mod format;
pub mod infer_types;
pub mod interface_map;
pub mod interner;
pub mod location;
pub mod op;
pub mod print;
pub mod region_simplify;
pub mod registry;
pub mod rewrite;
pub mod source;
pub mod symbols;
pub mod types;
pub mod verify;
pub mod walk;

pub use affine::{AffineExpr, AffineMap, AffineOp};
pub use attrs::{Attr, AttrId, DenseData, DenseElem};
pub use body::{BlockId, Body, OpId, OpSpec, RegionId, ValueDef, ValueId};
pub use context::{Context, Interners, Symbol};
pub use diag::{Diagnostic, Severity};
pub use location::{Loc, LocData};
pub use registry::{Arity, AttrDefault, AttrKind, AttrSpec, DialectInfo, OpInfo, OpTrait, Registry, Syntax};
pub use source::{FileId, SourceMap};
pub use types::{FloatKind, TypeId, TypeKind};
