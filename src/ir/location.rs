//! Source locations of ops and values: a position in a loaded file, an explicit `file:line:col`, a name,
//! a fusion of several, a call site, or unknown.
//!
//! The common case (the position an op was parsed from) is a plain `Copy` value; the rest are interned
//! [`LocData`] entries so that an op's location stays 12 bytes.

use super::attrs::AttrId;
use super::source::FileId;
use super::Symbol;

crate::define_id!(
    /// An interned structured location.
    LocId,
    "loc"
);

/// Where an op, value or diagnostic comes from.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub enum Loc {
    /// No location (`loc(unknown)`).
    #[default]
    Unknown,
    /// A byte offset in a file of the [`SourceMap`](super::SourceMap); prints as `"file":line:col`.
    Source {
        /// The file.
        file: FileId,
        /// Byte offset of the first character.
        offset: u32,
    },
    /// A structured location.
    Id(LocId),
}

/// A structured location, as written in `loc(...)`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum LocData {
    /// `"file":line:col` (1-based line and column).
    FileLineCol {
        /// The file name as written.
        file: Symbol,
        /// 1-based line.
        line: u32,
        /// 1-based column.
        col: u32,
    },
    /// `"name"` or `"name"(child)`.
    Name {
        /// The name.
        name: Symbol,
        /// The location the name refers to.
        child: Option<Loc>,
    },
    /// `fused[a, b]` or `fused<#meta>[a, b]`.
    Fused {
        /// The fused locations.
        locs: Box<[Loc]>,
        /// Optional metadata attribute.
        metadata: Option<AttrId>,
    },
    /// `callsite(callee at caller)`.
    CallSite {
        /// Where the code is.
        callee: Loc,
        /// Where it was called from.
        caller: Loc,
    },
}
