//! The building blocks of the families' tables: attribute declarations, the registration of a value op inside a
//! graph, the common pretty formats, and entries.

use super::attrs::Attrs;
use super::{Decode, Entry, OpKind};
use crate::dialects::teg::verify::verify_op;
use crate::ir::{Arity, AttrKind, AttrSpec, OpInfo, OpTrait, Syntax};

/// A required attribute.
pub const fn attr(name: &'static str, kind: AttrKind) -> AttrSpec {
    AttrSpec { name, kind, optional: false, default: None }
}

/// An attribute that may be left out.
pub const fn optional(name: &'static str, kind: AttrKind) -> AttrSpec {
    AttrSpec { name, kind, optional: true, default: None }
}

/// Value ops live in a graph or in the body of a user-declared block operator.
pub const PARENTS: &[&str] = &["teg.graph", "teg.block"];
const IN_GRAPH: &[OpTrait] = &[OpTrait::Pure, OpTrait::HasParent(PARENTS)];

/// The operands and, when the rule does not infer it, the result type.
pub const SAME: &str = "$operands attr-dict (`:` type($results)^)?";
/// The operands' types, then the result type unless inferred.
pub const TYPED: &str = "$operands attr-dict `:` type($operands) (`->` type($results)^)?";
/// A generator: its attributes and result type.
pub const GENERATOR: &str = "attr-dict `:` type($results)";

/// A value-producing op inside a graph: `operands` in, one tensor out.
pub const fn value_op(
    name: &'static str,
    summary: &'static str,
    operands: Arity,
    attrs: &'static [AttrSpec],
    format: &'static str,
) -> OpInfo {
    OpInfo {
        operands,
        results: Arity::Exact(1),
        traits: IN_GRAPH,
        attrs,
        verify: Some(verify_op),
        syntax: Syntax::Format(format),
        ..OpInfo::new(name, summary)
    }
}

/// An op whose kind does not depend on its attributes.
pub const fn fixed(info: OpInfo, kind: OpKind) -> Entry {
    Entry { info, decode: Decode::Fixed(kind) }
}

/// An op decoded from its attributes by `read`.
pub const fn with(info: OpInfo, read: fn(&Attrs) -> Result<OpKind, String>) -> Entry {
    Entry { info, decode: Decode::With(read) }
}
