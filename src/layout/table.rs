//! Tabulating a layout: the offset of every logical element in a chosen enumeration order, and what every buffer
//! position holds. This is what `layout-print` writes and what the equivalence decision is tested against.

use super::strided::{Layout, PadKind};

/// How logical elements are numbered in tables.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Order {
    /// The last dimension fastest (XLA, CK, Furiosa's declared axes).
    RowMajor,
    /// The first dimension fastest (CuTe's 1-D coordinate).
    Colex,
}

/// What one buffer position holds, by element number in some [`Order`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Slot {
    /// These elements (sorted).
    Live(Vec<u64>),
    /// No element.
    Padding(PadKind),
}

/// The offset of each dimension's coordinate values: `contrib[k][e]` for the stored `e`, `None` for the others.
fn contributions(layout: &Layout) -> Vec<Vec<Option<i64>>> {
    (0..layout.dims.len())
        .map(|k| {
            let (digits, d) = (layout.digits(Some(k)), &layout.dims[k]);
            (0..d.extent)
                .map(|e| {
                    let stored = e >= d.start && e < d.stored;
                    stored.then(|| digits.iter().map(|f| ((e / f.place) % f.extent) as i64 * f.stride).sum())
                })
                .collect()
        })
        .collect()
}

/// The dimension visiting order for `order`: outermost first.
fn dim_order(rank: usize, order: Order) -> Vec<usize> {
    match order {
        Order::RowMajor => (0..rank).collect(),
        Order::Colex => (0..rank).rev().collect(),
    }
}

/// The offset of every logical element, numbered in `order`; `None` for an element that is not stored.
/// Replica copies are not listed (see [`positions`]).
pub fn offsets(layout: &Layout, order: Order) -> Vec<Option<i64>> {
    let mut out = Vec::new();
    offsets_into(layout, order, &mut out);
    out
}

/// [`offsets`] into a buffer the caller keeps (cleared first), so that repeated tables reuse its memory.
pub fn offsets_into(layout: &Layout, order: Order, out: &mut Vec<Option<i64>>) {
    let contrib = contributions(layout);
    let dims = dim_order(layout.dims.len(), order);
    out.clear();
    out.reserve(layout.size() as usize);
    fill(layout, &contrib, &dims, layout.base, out);
}

/// Appends the offsets of the elements under the dimensions `dims` (outermost first), starting from `acc`.
fn fill(layout: &Layout, contrib: &[Vec<Option<i64>>], dims: &[usize], acc: i64, out: &mut Vec<Option<i64>>) {
    let Some((&k, rest)) = dims.split_first() else {
        out.push(Some(acc));
        return;
    };
    let table = &contrib[k];
    if rest.is_empty() {
        out.extend(table.iter().map(|c| c.map(|c| acc + c)));
        return;
    }
    let below: u64 = rest.iter().map(|&j| layout.dims[j].extent).product();
    for c in table {
        match c {
            Some(c) => fill(layout, contrib, rest, acc + c, out),
            None => out.extend(std::iter::repeat_n(None, below as usize)),
        }
    }
}

/// The offsets of the replica copies of an element, relative to its first copy.
fn replica_offsets(layout: &Layout) -> Vec<i64> {
    let mut out = vec![0i64];
    for f in layout.digits(None) {
        out = out.iter().flat_map(|&o| (0..f.extent as i64).map(move |j| o + j * f.stride)).collect();
    }
    out
}

/// What every buffer position `[0, cosize)` holds, elements numbered in `order`.
pub fn positions(layout: &Layout, order: Order) -> Vec<Slot> {
    let mut live: Vec<Vec<u64>> = vec![Vec::new(); layout.cosize as usize];
    let replicas = replica_offsets(layout);
    for (i, off) in offsets(layout, order).into_iter().enumerate() {
        for r in off.into_iter().flat_map(|o| replicas.iter().map(move |r| o + r)) {
            live[r as usize].push(i as u64);
        }
    }
    let kinds = padding_kinds(layout);
    live.into_iter()
        .zip(kinds)
        .map(|(mut elems, kind)| {
            if elems.is_empty() {
                Slot::Padding(kind)
            } else {
                elems.sort_unstable();
                elems.dedup();
                Slot::Live(elems)
            }
        })
        .collect()
}

/// The padding kind each position would have if it held no element: the strictest kind among the padding
/// coordinates landing on it, `Top` if none does.
fn padding_kinds(layout: &Layout) -> Vec<PadKind> {
    let mut kinds = vec![PadKind::Top; layout.cosize as usize];
    if layout.dims.iter().all(|d| d.pad == PadKind::Top) {
        return kinds;
    }
    for_each_combo(layout, &mut |off, kind| {
        // (A layout that stores nothing may reach past its buffer: positions are only those inside it.)
        if let (Some(kind), Ok(p)) = (kind, usize::try_from(off)) {
            if let Some(slot) = kinds.get_mut(p) {
                *slot = (*slot).max(kind);
            }
        }
    });
    kinds
}

/// Calls `f(offset, padding kind or None if live)` for every digit combination of the padded domain.
pub fn for_each_combo(layout: &Layout, f: &mut dyn FnMut(i64, Option<PadKind>)) {
    let n = layout.factors.len();
    let mut digit = vec![0u64; n];
    loop {
        let mut off = layout.base;
        let mut coord = vec![0u64; layout.dims.len()];
        for (d, fac) in digit.iter().zip(&layout.factors) {
            off += *d as i64 * fac.stride;
            if let Some(k) = fac.dim {
                coord[k] += d * fac.place;
            }
        }
        // Coordinates before a dimension's start are not in the buffer at all.
        if coord.iter().zip(&layout.dims).all(|(c, dim)| *c >= dim.start) {
            let pads = coord.iter().zip(&layout.dims).filter(|(c, dim)| **c >= dim.stored);
            f(off, pads.map(|(_, dim)| dim.pad).max());
        }
        let mut j = n;
        loop {
            if j == 0 {
                return;
            }
            j -= 1;
            digit[j] += 1;
            if digit[j] < layout.factors[j].extent {
                break;
            }
            digit[j] = 0;
        }
    }
}
