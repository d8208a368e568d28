//! Tapestry: an MLIR-style multi-level IR toolkit.
//!
//! Text flows `parse` → `ir` (verified) → `passes` → `ir::print`, and diagnostics from every stage are
//! rendered by `render`. See `ARCHITECTURE.md` for the module map and the dependency rules.
#![warn(missing_docs)]

pub mod array;
pub mod dialects;
pub mod driver;
pub mod filecheck;
pub mod interfaces;
pub mod ir;
pub mod layout;
pub mod machine;
pub mod parse;
pub mod passes;
pub mod render;
pub mod zspace;
