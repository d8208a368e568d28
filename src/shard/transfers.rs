//! Transfer tables: which box of a tensor moves from which device to which, computed from box intersections, and
//! the collective a table amounts to.
//!
//! A reshard reads pieces of a tensor (each a box held by some devices; pieces whose boxes overlap are partial
//! results, combined with a monoid) into a target box wanted by some devices. Every target device needs, from every piece overlapping its box, the overlap: nothing
//! moves when the device holds that piece itself; otherwise it comes from the piece's nearest holder (fewest mesh
//! coordinates that differ, then the lowest rank).

use crate::machine::Mesh;
use crate::zspace::ZRange;
use std::fmt;

/// A box of a tensor and the devices that hold it (or, for a target, want it).
#[derive(Clone, Debug, PartialEq)]
pub struct Piece {
    /// The cells, in the coordinates of the whole tensor.
    pub region: ZRange,
    /// Row-major mesh ranks, ascending.
    pub devices: Vec<usize>,
}

/// One row of a transfer table.
#[derive(Clone, Debug, PartialEq)]
pub struct Move {
    /// The index of the source piece it comes from.
    pub source: usize,
    /// The sending device.
    pub from: usize,
    /// The receiving device.
    pub to: usize,
    /// The cells sent, in the coordinates of the whole tensor.
    pub region: ZRange,
    /// Their bytes.
    pub bytes: u64,
}

/// Most (receiver, source piece) pairs one table may weigh; past it, an error.
pub const MAX_TABLE_PAIRS: u64 = 1 << 22;

/// The moves that give `target`'s devices its box from `sources`, `element_bytes` bytes per cell; an error past
/// [`MAX_TABLE_PAIRS`].
pub fn table(mesh: &Mesh, sources: &[Piece], target: &Piece, element_bytes: u64) -> Result<Vec<Move>, String> {
    let pairs = (target.devices.len() as u64).saturating_mul(sources.len() as u64);
    if pairs > MAX_TABLE_PAIRS {
        return Err(format!(
            "a transfer table of {pairs} (receiver, piece) pairs is over MAX_TABLE_PAIRS ({MAX_TABLE_PAIRS})"
        ));
    }
    // Each piece's holders sorted once, with their mesh coordinates, so that a pair costs a binary search.
    let holders: Vec<Vec<(usize, Vec<usize>)>> = sources
        .iter()
        .map(|s| {
            let mut h: Vec<(usize, Vec<usize>)> =
                s.devices.iter().map(|&r| (r, mesh.coords(r).unwrap_or_default())).collect();
            h.sort_unstable_by_key(|x| x.0);
            h
        })
        .collect();
    let mut out = Vec::new();
    for &to in &target.devices {
        let at = mesh.coords(to).unwrap_or_default();
        for (k, (source, held)) in sources.iter().zip(&holders).enumerate() {
            let Some(region) = source.region.intersect(&target.region).filter(|r| !r.is_empty()) else { continue };
            if held.binary_search_by_key(&to, |x| x.0).is_ok() {
                continue;
            }
            let Some(from) = nearest(held, &at) else { continue };
            let bytes = (region.size() as u64).saturating_mul(element_bytes);
            out.push(Move { source: k, from, to, region, bytes });
        }
    }
    Ok(out)
}

/// The holder of a piece closest to `to`: fewest mesh coordinates that differ, then the lowest rank.
fn nearest(holders: &[(usize, Vec<usize>)], at: &[usize]) -> Option<usize> {
    let distance = |c: &[usize]| c.iter().zip(at).filter(|(a, b)| a != b).count();
    holders.iter().min_by_key(|(r, c)| (distance(c), *r)).map(|h| h.0)
}

/// What a reshard amounts to, read off its pieces and table.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Nothing moves: each device cuts its box out of what it holds.
    LocalSlice,
    /// Partial results summed into the whole box on every device.
    AllReduce,
    /// Partial results summed, each device keeping its part.
    ReduceScatter,
    /// Each device gathers a box larger than what it holds.
    AllGather,
    /// Each device trades parts of what it holds for as much it does not hold.
    AllToAll,
    /// Each device holds most of its box and receives a border from its neighbours.
    HaloExchange,
    /// Devices receive boxes they hold none of (a plain send).
    Send,
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::LocalSlice => "local slice",
            Kind::AllReduce => "all-reduce",
            Kind::ReduceScatter => "reduce-scatter",
            Kind::AllGather => "all-gather",
            Kind::AllToAll => "all-to-all",
            Kind::HaloExchange => "halo exchange",
            Kind::Send => "send",
        })
    }
}

/// One reshard of an edge: its source pieces, its target and its table.
pub struct Reshard<'a> {
    /// What it reads.
    pub sources: &'a [Piece],
    /// What it makes, and where.
    pub target: &'a Piece,
    /// Its moves.
    pub moves: &'a [Move],
    /// Whether overlapping sources are partial results it combines.
    pub partial: bool,
}

/// The collective an edge's reshards amount to, read off totals over its receivers. Partial sources make a
/// reduction: an all-reduce when every target is a whole combined box, a reduce-scatter otherwise. Without
/// partials: a local slice when nothing moves; a send when the receivers hold none of their boxes; a halo exchange
/// when they hold more of their boxes than they receive, in total; an all-gather when the largest target is larger
/// than the most any receiver holds; an all-to-all otherwise.
pub fn classify(edge: &[Reshard]) -> Kind {
    if edge.iter().any(|r| r.partial) {
        let whole = edge.iter().all(|r| r.sources.iter().any(|s| s.region == r.target.region));
        return if whole { Kind::AllReduce } else { Kind::ReduceScatter };
    }
    if edge.iter().all(|r| r.moves.is_empty()) {
        return Kind::LocalSlice;
    }
    let (mut held, mut received, mut wanted, mut largest_held) = (0u128, 0u128, 0u128, 0u128);
    for r in edge {
        received += r.moves.iter().map(|m| m.region.size()).sum::<u128>();
        for &d in &r.target.devices {
            let mine = r.sources.iter().filter(|s| s.devices.contains(&d));
            let own: u128 = mine.clone().filter_map(|s| s.region.intersect(&r.target.region)).map(|b| b.size()).sum();
            held += own;
            largest_held = largest_held.max(mine.map(|s| s.region.size()).sum());
            wanted = wanted.max(r.target.region.size());
        }
    }
    if held == 0 {
        Kind::Send
    } else if received < held {
        Kind::HaloExchange
    } else if wanted > largest_held {
        Kind::AllGather
    } else {
        Kind::AllToAll
    }
}
