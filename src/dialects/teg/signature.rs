//! Block operator signatures: an index space (named dimensions with extents) and an IPF per input and output, so
//! that an operator can be sharded mechanically (each block operator's family builds its own). The verifier checks
//! every signature: the index space projected through each IPF must cover exactly the tensor's range, and an
//! output IPF must not send two index points to the same cell unless the index dimension that separates them is a
//! declared reduction.

use crate::zspace::{Ipf, ZAffineMap, ZRange};

pub use crate::interfaces::sharding::Signature;

/// An IPF from rows `(index dim or none, coefficient, offset, extent)`, one per tensor dimension.
pub fn ipf(rank: usize, rows: &[(Option<usize>, i64, i64, u64)]) -> Ipf {
    let matrix = rows
        .iter()
        .map(|&(dim, coef, _, _)| (0..rank).map(|i| if Some(i) == dim { coef } else { 0 }).collect())
        .collect();
    let offset = rows.iter().map(|r| r.2).collect();
    let map = ZAffineMap::new(rank, matrix, offset).expect("rows of the index rank");
    Ipf::new(map, rows.iter().map(|r| r.3).collect()).expect("one extent per row")
}

/// Checks signature correspondence and that each output is written exactly once. `inputs` and `outputs` are the
/// ranges each IPF must cover exactly (empty ranges are all equal); an input given as `(range, true)` may be
/// covered partly (a strided window that leaves the last cells of a padded input unread). Outputs are checked
/// harder than inputs: every output cell must be written by exactly one index point (reduction dimensions aside),
/// since a cell never written has no value, while an input cell never read is harmless.
pub fn check(sig: &Signature, inputs: &[(ZRange, bool)], outputs: &[ZRange]) -> Result<(), String> {
    let index = sig.index_range();
    let written = written_points(sig)?;
    for ((name, f), (range, partial)) in sig.inputs.iter().zip(inputs) {
        // An input that no reduction moves (a bias) is read once per written cell, even by an empty reduction.
        let still = sig.reductions.iter().all(|(i, _)| (0..f.map().outputs()).all(|j| f.map().coef(j, *i) == 0));
        let reading = if still { &written } else { &index };
        if reading.is_empty() {
            continue; // Nothing is read (a batch of 0): any tensor of the right rank will do.
        }
        let got = f.project(reading).map_err(|e| format!("{name}: {e}"))?;
        let ok = if *partial { range.contains_range(&got) && got.start() == range.start() } else { same(&got, range) };
        if !ok {
            return Err(mismatch(&index, name, &got, range));
        }
    }
    for ((name, f), range) in sig.outputs.iter().zip(outputs) {
        reductions_stay(sig, name, f)?;
        if written.is_empty() {
            // A rank-0 output is one cell, but an empty index space writes none.
            if !range.is_empty() {
                return Err(format!("{name}: the index space {index} is empty, so none of its cells is written"));
            }
            continue;
        }
        let got = f.project(&written).map_err(|e| format!("{name}: {e}"))?;
        if !same(&got, range) {
            return Err(mismatch(&index, name, &got, range));
        }
        exactly_once(sig, name, f, &written)?;
    }
    Ok(())
}

/// Equal as sets of points of one rank: the same range, or both empty.
fn same(a: &ZRange, b: &ZRange) -> bool {
    a == b || (a.rank() == b.rank() && a.is_empty() && b.is_empty())
}

fn mismatch(index: &ZRange, name: &str, got: &ZRange, range: &ZRange) -> String {
    format!("signature correspondence: the index space {index} projects {name} to {got}, but {name} is {range}")
}

/// The index points that write outputs: the index space with each reduction dimension held at its start (a
/// reduction over an empty range still writes its monoid's identity).
fn written_points(sig: &Signature) -> Result<ZRange, String> {
    let index = sig.index_range();
    let mut end = index.end().to_vec();
    for (i, _) in &sig.reductions {
        end[*i] = index.start()[*i] + 1;
    }
    ZRange::new(index.start().to_vec(), end).map_err(|e| e.0)
}

/// A reduction dimension combines the values of its points into one cell, so it must not move an output's box.
fn reductions_stay(sig: &Signature, name: &str, f: &Ipf) -> Result<(), String> {
    for (i, monoid) in &sig.reductions {
        if let Some(j) = (0..f.map().outputs()).find(|&j| f.map().coef(j, *i) != 0) {
            return Err(format!(
                "index dimension {} is a declared {} reduction, but it moves {name} (coefficient {} in row {j})",
                sig.index[*i].0,
                monoid.name(),
                f.map().coef(j, *i)
            ));
        }
    }
    Ok(())
}

/// Whether the boxes of output `f` over `points` are pairwise disjoint and fill their bounding box. Decided
/// structurally when each moving index dimension moves its own tensor dimension (then it must step by exactly its
/// box extent: less overlaps, more leaves gaps), or when the dimensions moving one tensor dimension together step
/// it as the digits of a mixed-radix number (see [`mixed_radix`]); else point by point.
fn exactly_once(sig: &Signature, name: &str, f: &Ipf, points: &ZRange) -> Result<(), String> {
    if mixed_radix(f, points) {
        return Ok(());
    }
    let mut moves = Vec::new();
    let mut rows_used = vec![false; f.map().outputs()];
    for (i, (dim, _)) in sig.index.iter().enumerate() {
        if points.shape()[i] <= 1 {
            continue;
        }
        let rows: Vec<usize> = (0..f.map().outputs()).filter(|&j| f.map().coef(j, i) != 0).collect();
        match rows.as_slice() {
            [] => {
                return Err(format!(
                    "{name} is written by every point along index dimension {dim} (extent {}), which is not a declared reduction",
                    points.shape()[i]
                ))
            }
            [j] if !std::mem::replace(&mut rows_used[*j], true) => moves.push((dim, *j, f.map().coef(*j, i))),
            _ => return exactly_once_by_points(name, f, points, dim),
        }
    }
    for (dim, j, coef) in moves {
        let (step, width) = (coef.unsigned_abs(), f.shape()[j]);
        if step != width {
            let what =
                if step < width { "overlap: cells are written twice" } else { "leave gaps: cells are never written" };
            return Err(format!(
                "{name}: index dimension {dim} moves the box by {step} along dimension {j}, but the box there is {width} wide, so the boxes {what}"
            ));
        }
    }
    Ok(())
}

/// Whether every index dimension of extent above 1 moves exactly one tensor dimension of `f`,
/// and whose steps, sorted by size, are the box's width times the product of the smaller ones' extents: the
/// digits of a mixed-radix number, so the boxes tile the dimension exactly once (as `i * 4 + j` for `j < 4` with a
/// box of 1). A sufficient condition, checked in time linear in the map; when it fails the caller decides exactly.
fn mixed_radix(f: &Ipf, points: &ZRange) -> bool {
    let map = f.map();
    let moving: Vec<usize> = (0..map.inputs()).filter(|&i| points.shape()[i] > 1).collect();
    if moving.iter().any(|&i| (0..map.outputs()).filter(|&j| map.coef(j, i) != 0).count() != 1) {
        return false;
    }
    (0..map.outputs()).all(|j| {
        let mut steps: Vec<(u64, u64)> = moving
            .iter()
            .filter(|&&i| map.coef(j, i) != 0)
            .map(|&i| (map.coef(j, i).unsigned_abs(), points.shape()[i]))
            .collect();
        steps.sort_unstable();
        let mut next = Some(f.shape()[j]);
        steps.iter().all(|&(step, extent)| {
            let ok = next == Some(step);
            next = step.checked_mul(extent);
            ok
        })
    })
}

/// Index points whose output boxes are checked one by one.
const POINT_LIMIT: u128 = 1 << 20;

/// The exact decision by marking every output cell each index point writes.
fn exactly_once_by_points(name: &str, f: &Ipf, points: &ZRange, dim: &str) -> Result<(), String> {
    let bbox = f.project(points).map_err(|e| e.0)?;
    if points.size() > POINT_LIMIT || bbox.size() > POINT_LIMIT * 16 {
        return Err(format!(
            "{name}: index dimension {dim} moves its box together with another dimension, and the op ({} index points, {} cells) is too large to check point by point",
            points.size(),
            bbox.size()
        ));
    }
    let shape = bbox.shape();
    let offset = |cell: &[i64]| {
        cell.iter().zip(bbox.start()).zip(&shape).fold(0u64, |acc, ((&c, &s), &n)| acc * n + (c - s) as u64) as usize
    };
    let mut written = vec![false; bbox.size() as usize];
    for p in points.points() {
        for cell in f.apply(&p).map_err(|e| e.0)?.points() {
            if std::mem::replace(&mut written[offset(&cell)], true) {
                return Err(format!(
                    "{name}: index point {p:?} writes cell {cell:?}, which another index point writes too"
                ));
            }
        }
    }
    let unwritten = bbox.points().find(|cell| !written[offset(cell)]);
    match unwritten {
        Some(cell) => Err(format!("{name}: no index point writes cell {cell:?}")),
        None => Ok(()),
    }
}
