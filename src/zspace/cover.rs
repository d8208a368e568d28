//! Shard covers: a list of ranges covers a target exactly when every piece lies inside it, no two pieces share a
//! point, and their sizes add up to its size (summed sizes alone can hide an overlap next to a gap).

use super::range::ZRange;
use super::ZError;

/// Checks that `parts` cover `target` exactly: each inside it, pairwise disjoint, no point left out. The error
/// names the first piece at fault and the numbers that disagree.
pub fn check_cover(target: &ZRange, parts: &[ZRange]) -> Result<(), ZError> {
    for (k, p) in parts.iter().enumerate() {
        if !target.contains_range(p) {
            return Err(ZError(format!("piece {k} {p} is not inside {target}")));
        }
    }
    // Sorting by start along the first dimension lets the scan stop early for pieces that end before the next.
    let mut order: Vec<usize> = (0..parts.len()).filter(|&k| !parts[k].is_empty()).collect();
    let key = |k: usize| parts[k].start().first().copied().unwrap_or(0);
    order.sort_by_key(|&k| key(k));
    for (n, &a) in order.iter().enumerate() {
        for &b in &order[n + 1..] {
            if parts[a].rank() > 0 && key(b) >= parts[a].end()[0] {
                break;
            }
            if let Some(common) = parts[a].intersect(&parts[b]).filter(|r| !r.is_empty()) {
                let (a, b) = (a.min(b), a.max(b));
                return Err(ZError(format!("pieces {a} {} and {b} {} overlap in {common}", parts[a], parts[b])));
            }
        }
    }
    let too_big = || ZError(format!("{target} has more than 2^128 points: its cover cannot be counted exactly"));
    let want = target.checked_size().ok_or_else(too_big)?;
    let covered = parts.iter().try_fold(0u128, |acc, p| acc.checked_add(p.checked_size()?)).ok_or_else(too_big)?;
    if covered != want {
        return Err(ZError(format!("the pieces cover {covered} of the {want} points of {target}")));
    }
    Ok(())
}
