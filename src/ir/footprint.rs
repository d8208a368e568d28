//! How deep and how large an interned type, attribute or location is when written out as a tree, computed once
//! when it is interned (from its children's footprints), so that a value built through aliases can be bounded
//! before anything walks it: printers, verifiers and location lookups recurse over these trees.

use super::attrs::{Attr, AttrId, DenseData};
use super::location::{Loc, LocData};
use super::types::{TypeId, TypeKind};

/// The deepest value an alias may name: levels of nested types, attributes or locations. Text alone cannot
/// nest deeper than the parser's bracket limit, so every value the parser builds stays below twice this.
pub const MAX_ALIAS_DEPTH: u32 = 256;

/// The most nodes an alias may name when written out as a tree: a chain of aliases that each use the previous one
/// twice doubles at every line ("billion laughs").
pub const MAX_ALIAS_NODES: u64 = 1 << 24;

/// The shape of an interned value as a tree.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Footprint {
    /// Levels of nesting: 1 for a leaf.
    pub depth: u32,
    /// Nodes of the value written out as a tree (saturating): shared children count once per use.
    pub nodes: u64,
    /// For a location: whether a `file:line:col` is somewhere inside.
    pub positioned: bool,
}

impl Footprint {
    /// A value with nothing inside.
    pub const LEAF: Footprint = Footprint { depth: 1, nodes: 1, positioned: false };

    /// Whether an alias may name this value; the limit passed, as a message, if not.
    pub fn check_alias(self) -> Result<(), String> {
        if self.depth > MAX_ALIAS_DEPTH {
            Err(format!("alias nests {} levels deep (at most {MAX_ALIAS_DEPTH})", self.depth))
        } else if self.nodes > MAX_ALIAS_NODES {
            Err(format!("alias expands to {} nodes (at most {MAX_ALIAS_NODES})", self.nodes))
        } else {
            Ok(())
        }
    }
}

/// A type, attribute or location inside another one.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Child {
    /// A type.
    Type(TypeId),
    /// An attribute.
    Attr(AttrId),
    /// A location.
    Loc(Loc),
}

/// The values directly inside a type.
pub fn type_children(kind: &TypeKind) -> Vec<Child> {
    match kind {
        TypeKind::Tensor { elem, encoding, .. } => {
            std::iter::once(Child::Type(*elem)).chain(encoding.map(Child::Attr)).collect()
        }
        TypeKind::Function { inputs, results } => {
            inputs.iter().chain(results.iter()).map(|&t| Child::Type(t)).collect()
        }
        TypeKind::Tuple(items) => items.iter().map(|&t| Child::Type(t)).collect(),
        _ => Vec::new(),
    }
}

/// The values directly inside an attribute.
pub fn attr_children(attr: &Attr) -> Vec<Child> {
    match attr {
        Attr::Int { ty, .. } | Attr::Float { ty, .. } | Attr::Type(ty) | Attr::Dense { ty, .. } => {
            vec![Child::Type(*ty)]
        }
        Attr::Array(items) => items.iter().map(|&a| Child::Attr(a)).collect(),
        Attr::Dict(entries) => entries.iter().map(|e| Child::Attr(e.1)).collect(),
        _ => Vec::new(),
    }
}

/// The values directly inside a structured location.
pub fn loc_children(data: &LocData) -> Vec<Child> {
    match data {
        LocData::FileLineCol { .. } => Vec::new(),
        LocData::Name { child, .. } => child.iter().map(|&l| Child::Loc(l)).collect(),
        LocData::Fused { locs, metadata } => {
            locs.iter().map(|&l| Child::Loc(l)).chain(metadata.map(Child::Attr)).collect()
        }
        LocData::CallSite { callee, caller } => vec![Child::Loc(*callee), Child::Loc(*caller)],
    }
}

/// The footprint of a node over `children` (whose footprints `of` gives), plus its own leaves: a dense
/// attribute's elements, or the position of a `file:line:col` location.
pub fn of_node(children: Vec<Child>, of: impl Fn(Child) -> Footprint, own: Own) -> Footprint {
    let start = Footprint { nodes: 1u64.saturating_add(own.leaves), positioned: own.positioned, ..Footprint::LEAF };
    children.into_iter().map(of).fold(start, |acc, c| Footprint {
        depth: acc.depth.max(c.depth.saturating_add(1)),
        nodes: acc.nodes.saturating_add(c.nodes),
        positioned: acc.positioned || c.positioned,
    })
}

/// What a node holds of its own, besides its children.
#[derive(Copy, Clone, Debug, Default)]
pub struct Own {
    /// Leaves printed as part of the node (a dense attribute's elements).
    pub leaves: u64,
    /// A `file:line:col` location.
    pub positioned: bool,
}

impl Own {
    /// What `attr` holds of its own.
    pub fn attr(attr: &Attr) -> Own {
        let leaves = match attr {
            Attr::Dense { data: DenseData::Elements(e), .. } => e.len() as u64,
            _ => 0,
        };
        Own { leaves, positioned: false }
    }

    /// What `data` holds of its own.
    pub fn loc(data: &LocData) -> Own {
        Own { leaves: 0, positioned: matches!(data, LocData::FileLineCol { .. }) }
    }
}
