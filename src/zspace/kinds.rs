//! Dimension kinds: what each index dimension of a block operator is, read off its IPFs. Sharding uses them: a
//! parallel dimension splits the outputs, a reduction dimension needs a monoid to combine partial results, and per
//! input a dimension may be broadcast (the input is replicated), dense, a window (neighbouring points overlap: a
//! halo) or strided (points skip cells).

use super::ipf::Ipf;
use std::fmt;

/// The role of an index dimension for the outputs.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum DimRole {
    /// Moves some output box: shards along it write disjoint outputs.
    Parallel,
    /// Moves no output box but some input box: shards along it produce partial results to combine.
    Reduction,
    /// Moves no box at all.
    Unused,
}

/// How one input's box moves along an index dimension.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Access {
    /// Not at all: the input is replicated across shards of this dimension.
    Broadcast,
    /// By exactly its extent along tensor dimension `row`: boxes abut.
    Dense {
        /// The tensor dimension it moves.
        row: usize,
    },
    /// By less than its extent: neighbouring boxes overlap by `halo` cells.
    Window {
        /// The tensor dimension it moves.
        row: usize,
        /// Cells shared by neighbouring index points.
        halo: u64,
    },
    /// By more than its extent: `gap` cells are skipped per step.
    Strided {
        /// The tensor dimension it moves.
        row: usize,
        /// Cells skipped per step.
        gap: u64,
    },
    /// Along several tensor dimensions at once (a skewed projection).
    Coupled,
}

impl fmt::Display for Access {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Access::Broadcast => write!(f, "broadcast"),
            Access::Dense { row } => write!(f, "dense(dim {row})"),
            Access::Window { row, halo } => write!(f, "window(dim {row}, halo {halo})"),
            Access::Strided { row, gap } => write!(f, "strided(dim {row}, gap {gap})"),
            Access::Coupled => write!(f, "coupled"),
        }
    }
}

/// Everything the IPFs say about one index dimension.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DimKind {
    /// Its role for the outputs.
    pub role: DimRole,
    /// How each input's box moves along it, in input order.
    pub inputs: Vec<Access>,
}

/// The kind of every index dimension of an operator with these input and output IPFs (all of the same index rank).
pub fn dim_kinds(rank: usize, inputs: &[&Ipf], outputs: &[&Ipf]) -> Vec<DimKind> {
    (0..rank)
        .map(|i| {
            let moves = |ipf: &&Ipf| (0..ipf.map().outputs()).any(|j| ipf.map().coef(j, i) != 0);
            let role = if outputs.iter().any(moves) {
                DimRole::Parallel
            } else if inputs.iter().any(moves) {
                DimRole::Reduction
            } else {
                DimRole::Unused
            };
            DimKind { role, inputs: inputs.iter().map(|ipf| access(ipf, i)).collect() }
        })
        .collect()
}

/// How `ipf`'s box moves along index dimension `i`.
pub fn access(ipf: &Ipf, i: usize) -> Access {
    let rows: Vec<usize> = (0..ipf.map().outputs()).filter(|&j| ipf.map().coef(j, i) != 0).collect();
    match rows.as_slice() {
        [] => Access::Broadcast,
        [row] => {
            let (step, extent) = (ipf.map().coef(*row, i).unsigned_abs(), ipf.shape()[*row]);
            match step.cmp(&extent) {
                std::cmp::Ordering::Equal => Access::Dense { row: *row },
                std::cmp::Ordering::Less => Access::Window { row: *row, halo: extent - step },
                std::cmp::Ordering::Greater => Access::Strided { row: *row, gap: step - extent },
            }
        }
        _ => Access::Coupled,
    }
}
