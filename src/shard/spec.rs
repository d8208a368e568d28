//! Plans and tensor specs. A [`Plan`] gives each index dimension of an op the set of mesh axes it is split over;
//! a [`TensorSpec`] gives each dimension of a tensor the axes it is split over, and the axes over which the
//! tensor is partial (each device holds a term of a sum still to combine, Shardy's `unreduced`, DTensor's
//! `Partial`). An axis not in a spec is one the tensor is replicated along.

use crate::machine::Mesh;
use std::fmt;

/// A set of mesh axes, by position in the mesh (bit `a` for axis `a`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AxisSet(pub u16);

impl AxisSet {
    /// No axis.
    pub const EMPTY: AxisSet = AxisSet(0);

    /// The set of one axis.
    pub fn one(axis: usize) -> AxisSet {
        AxisSet(1 << axis)
    }

    /// Whether it holds no axis.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Whether it holds `axis`.
    pub fn has(self, axis: usize) -> bool {
        self.0 & (1 << axis) != 0
    }

    /// Both sets' axes.
    pub fn union(self, other: AxisSet) -> AxisSet {
        AxisSet(self.0 | other.0)
    }

    /// The axes of `self` not in `other`.
    pub fn minus(self, other: AxisSet) -> AxisSet {
        AxisSet(self.0 & !other.0)
    }

    /// Whether the sets share an axis.
    pub fn meets(self, other: AxisSet) -> bool {
        self.0 & other.0 != 0
    }

    /// The axes, in mesh order.
    pub fn axes(self) -> impl Iterator<Item = usize> {
        (0..16).filter(move |&a| self.has(a))
    }

    /// The number of devices a split over these axes makes (the product of their sizes).
    pub fn parts(self, mesh: &Mesh) -> u64 {
        self.axes().map(|a| mesh.axes()[a].size as u64).product()
    }

    /// `x,y` (or `_` when empty).
    pub fn display<'m>(self, mesh: &'m Mesh) -> impl fmt::Display + 'm {
        AxisNames(self, mesh)
    }
}

struct AxisNames<'m>(AxisSet, &'m Mesh);

impl fmt::Display for AxisNames<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("_");
        }
        let names: Vec<&str> = self.0.axes().map(|a| self.1.axes()[a].name.as_str()).collect();
        f.write_str(&names.join(","))
    }
}

/// How an op is split: per index dimension, the mesh axes it is split over (pairwise disjoint).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Plan(pub Vec<AxisSet>);

impl Plan {
    /// The plan that splits nothing.
    pub fn replicated(rank: usize) -> Plan {
        Plan(vec![AxisSet::EMPTY; rank])
    }

    /// Number of index dimensions.
    pub fn rank(&self) -> usize {
        self.0.len()
    }

    /// Every axis used.
    pub fn used(&self) -> AxisSet {
        self.0.iter().fold(AxisSet::EMPTY, |s, &d| s.union(d))
    }

    /// `{batch = x, n = y}` over the op's dimension names (only the split ones; `{}` splits nothing).
    pub fn display<'p>(&'p self, names: &'p [(String, u64)], mesh: &'p Mesh) -> impl fmt::Display + 'p {
        PlanText(self, names, mesh)
    }
}

struct PlanText<'p>(&'p Plan, &'p [(String, u64)], &'p Mesh);

impl fmt::Display for PlanText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = (self.0 .0.iter().zip(self.1))
            .filter(|(s, _)| !s.is_empty())
            .map(|(s, (name, _))| format!("{name} = {}", s.display(self.2)))
            .collect();
        write!(f, "{{{}}}", parts.join(", "))
    }
}

/// Where a tensor's elements sit on the mesh: per dimension the axes it is split over, and the axes along which
/// it is partial.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct TensorSpec {
    /// Per tensor dimension, the axes splitting it, outermost first in mesh order.
    pub dims: Vec<AxisSet>,
    /// The axes along which each device holds a partial term.
    pub partial: AxisSet,
}

impl TensorSpec {
    /// Whole on every device.
    pub fn replicated(rank: usize) -> TensorSpec {
        TensorSpec { dims: vec![AxisSet::EMPTY; rank], partial: AxisSet::EMPTY }
    }

    /// The axes splitting some dimension.
    pub fn sharded(&self) -> AxisSet {
        self.dims.iter().fold(AxisSet::EMPTY, |s, &d| s.union(d))
    }

    /// The bytes one device holds of a tensor of `shape` with `elem_bytes` per element: the largest shard (an
    /// uneven split gives the first devices one more row), whole along replicated and partial axes.
    pub fn shard_bytes(&self, shape: &[u64], elem_bytes: u64, mesh: &Mesh) -> u64 {
        let cells = shape.iter().zip(&self.dims).map(|(&n, s)| n.div_ceil(s.parts(mesh).max(1)));
        cells.fold(elem_bytes, |b, n| b.saturating_mul(n))
    }

    /// `[x, _] partial(y)`.
    pub fn display<'s>(&'s self, mesh: &'s Mesh) -> impl fmt::Display + 's {
        SpecText(self, mesh)
    }
}

struct SpecText<'s>(&'s TensorSpec, &'s Mesh);

impl fmt::Display for SpecText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dims: Vec<String> = self.0.dims.iter().map(|d| d.display(self.1).to_string()).collect();
        write!(f, "[{}]", dims.join(", "))?;
        if !self.0.partial.is_empty() {
            write!(f, " partial({})", self.0.partial.display(self.1))?;
        }
        Ok(())
    }
}
