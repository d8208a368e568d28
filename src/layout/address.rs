//! Address generation: a layout compiled to a base offset and a nest of `(count, stride)` loops that visits the
//! stored elements in the notation's order, as an NPU's DMA sequencer or address generator runs it. Unstored
//! coordinates and padding become loop bounds; what a loop nest cannot say (a partial top block, swizzles, skew)
//! is an error that says why.

use super::strided::{fail, Layout, LayoutError};
use super::table::Order;

/// A loop nest: `base + Σ i_k · stride_k` for `i_k < count_k`, the first loop outermost.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccessPattern {
    /// Offset of the first element.
    pub base: i64,
    /// `(count, stride)` per loop, outermost first; adjacent loops are merged where they continue each other.
    pub loops: Vec<(u64, i64)>,
}

impl AccessPattern {
    /// Number of addresses the nest produces.
    pub fn len(&self) -> u64 {
        self.loops.iter().map(|l| l.0).product()
    }

    /// Whether the nest produces no address.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends every address in order.
    pub fn expand(&self, out: &mut Vec<i64>) {
        out.reserve(self.len() as usize);
        expand_into(self.base, &self.loops, out);
    }
}

fn expand_into(base: i64, loops: &[(u64, i64)], out: &mut Vec<i64>) {
    match loops {
        [] => out.push(base),
        [(n, s)] => out.extend((0..*n as i64).map(|i| base + i * s)),
        [(n, s), rest @ ..] => {
            for i in 0..*n as i64 {
                expand_into(base + i * s, rest, out);
            }
        }
    }
}

/// Compiles `layout` into loops visiting its stored elements in `order` (first copies only).
pub fn access_pattern(layout: &Layout, order: Order) -> Result<AccessPattern, LayoutError> {
    let dims: Vec<usize> = match order {
        Order::RowMajor => (0..layout.dims.len()).collect(),
        Order::Colex => (0..layout.dims.len()).rev().collect(),
    };
    let mut loops: Vec<(u64, i64)> = Vec::new();
    let mut base = layout.base;
    for k in dims {
        let (start, stored) = (layout.dims[k].start, layout.dims[k].stored);
        if stored == start {
            return Ok(AccessPattern { base, loops: vec![(0, 0)] });
        }
        if start > 0 {
            // Validation keeps such a dimension to one digit: a loop from `start`.
            let d = layout.digits(Some(k)).into_iter().find(|f| f.extent > 1).expect("a stored range has a digit");
            base += start as i64 * d.stride;
            loops.push((stored - start, d.stride));
            continue;
        }
        let digits: Vec<_> = layout.digits(Some(k)).into_iter().filter(|f| f.extent > 1 && f.place < stored).collect();
        // A coordinate is visited digit by digit, the highest place first.
        for (j, f) in digits.iter().enumerate().rev() {
            let top = j + 1 == digits.len();
            let count = if top { stored.div_ceil(f.place) } else { f.extent };
            if top && stored % f.place != 0 {
                return fail(format!(
                    "dimension {k} stores {stored} coordinates, not a whole number of blocks of {}: the last block \
                     is partial and no loop bound says so",
                    f.place
                ));
            }
            loops.push((count, f.stride));
        }
    }
    Ok(AccessPattern { base, loops: merge(loops) })
}

/// Drops 1-count loops and merges an outer loop into the inner one it continues.
fn merge(loops: Vec<(u64, i64)>) -> Vec<(u64, i64)> {
    let mut out: Vec<(u64, i64)> = Vec::new();
    for (n, s) in loops.into_iter().rev().filter(|l| l.0 != 1) {
        match out.last_mut() {
            Some(inner) if s == inner.0 as i64 * inner.1 => inner.0 *= n,
            _ => out.push((n, s)),
        }
    }
    out.reverse();
    out
}
