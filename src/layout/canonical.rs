//! The canonical form of a layout and the equivalence decision built on it: two valid layouts mean the same
//! (same dimensions, same offset for every element, same class for every buffer position) exactly when their
//! canonical forms are equal. The decision works on the digits, never on tables, so it costs the same for a
//! billion elements as for ten.
//!
//! Why the form is unique: an element's offset is `base + Σ_k g_k(e_k)`, a sum of one function per dimension, and
//! each `g_k` on `[0, stored)` is a mixed-radix digit sum. After dropping extent-1 digits and merging a digit
//! into the one below it when its stride continues the lower digit's (`stride' = extent · stride`), the lowest
//! digit's extent is the first `e` where `g(e) ≠ e · g(1)`, and so on upwards: the digits are read off the
//! function. When all padding is `Top`, the top digits are cut to what the stored coordinates use (Top padding
//! and holes are indistinguishable). `Zero`/`Bottom` padding keeps every digit: its positions, and those where it
//! meets other padding, are then visible (validation ensures they cannot overlap stored elements).

use super::strided::{Dim, Layout, LayoutError, PadKind};

/// A layout reduced to its canonical form: per dimension, its digits lowest place first.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Canonical {
    /// The dimensions, with the padding kind cleared (`Top`) where the dimension has no visible padding.
    pub dims: Vec<Dim>,
    /// Per dimension, `(place, extent, stride)` of its digits, lowest place first.
    pub digits: Vec<Vec<(u64, u64, i64)>>,
    /// Replica digits as `(extent, stride)`, by increasing stride (all positive).
    pub replicas: Vec<(u64, i64)>,
    /// Offset of the first copy of the element at coordinate 0.
    pub base: i64,
    /// Buffer size.
    pub cosize: u64,
}

/// The canonical form of a valid layout.
pub fn canonical(layout: &Layout) -> Result<Canonical, LayoutError> {
    layout.validate()?;
    let mut base = layout.base;
    let mut replicas = canonical_replicas(layout, &mut base);
    let mut dims = layout.dims.clone();
    // Zero/Bottom padding makes every padding coordinate visible: where it meets another dimension's Top padding
    // the position takes the stricter kind, so no digit may be cut then.
    let strict = dims.iter().enumerate().any(|(k, d)| d.pad != PadKind::Top && layout.padded(k) > d.stored);
    let mut digits = Vec::with_capacity(dims.len());
    for (k, dim) in dims.iter_mut().enumerate() {
        digits.push(canonical_digits(layout, k, dim, strict));
    }
    let all_top = dims.iter().all(|d| d.pad == PadKind::Top);
    // A dimension with no coordinate from its start on puts nothing at all in the buffer.
    let unreachable = layout.dims.iter().enumerate().any(|(k, d)| d.start >= layout.padded(k).max(d.stored));
    if (layout.stored_size() == 0 && all_top) || unreachable {
        // Nothing is stored and every position is Top padding: the digits and stored ranges say nothing.
        digits.iter_mut().for_each(Vec::clear);
        replicas.clear();
        dims.iter_mut().for_each(|d| (d.start, d.stored, d.pad) = (0, 0, PadKind::Top));
        base = 0;
    }
    Ok(Canonical { dims, digits, replicas, base, cosize: layout.cosize })
}

/// Decides whether two layouts place every element at the same offsets (same dimension extents, same stored
/// elements, same offsets), whatever their buffer sizes, padding and axis names: what a view or a change of
/// notation must preserve.
pub fn same_placement(a: &Layout, b: &Layout) -> Result<bool, LayoutError> {
    let strip = |l: &Layout| -> Result<Canonical, LayoutError> {
        let mut top = l.clone();
        top.dims.iter_mut().for_each(|d| (d.pad, d.name) = (PadKind::Top, None));
        let (_, hi) = top.offset_bounds();
        top.cosize = top.cosize.max((hi + 1).max(0) as u64);
        let mut c = canonical(&top)?;
        c.cosize = 0;
        Ok(c)
    };
    Ok(strip(a)? == strip(b)?)
}

/// Decides whether two layouts mean the same; an invalid layout is an error.
pub fn equivalent(a: &Layout, b: &Layout) -> Result<bool, LayoutError> {
    Ok(canonical(a)? == canonical(b)?)
}

fn canonical_digits(layout: &Layout, k: usize, dim: &mut Dim, strict: bool) -> Vec<(u64, u64, i64)> {
    let mut out: Vec<(u64, u64, i64)> = Vec::new();
    for f in layout.digits(Some(k)).into_iter().filter(|f| f.extent > 1) {
        match out.last_mut() {
            Some(last) if f.stride == last.1 as i64 * last.2 => last.1 *= f.extent,
            _ => out.push((f.place, f.extent, f.stride)),
        }
    }
    let padded: u64 = out.iter().map(|d| d.1).product();
    if padded == dim.stored {
        dim.pad = PadKind::Top;
    }
    if !strict {
        out.retain(|d| d.0 < dim.stored);
        if let Some(top) = out.last_mut() {
            top.1 = dim.stored.div_ceil(top.0);
        }
    }
    out
}

/// Replica digits as a set of offsets: negative strides flipped (moving the base to the lowest copy), zero
/// strides and extent-1 digits dropped, sorted by stride and merged where contiguous.
fn canonical_replicas(layout: &Layout, base: &mut i64) -> Vec<(u64, i64)> {
    let mut reps: Vec<(u64, i64)> = Vec::new();
    for f in layout.digits(None) {
        if f.extent > 1 && f.stride != 0 {
            if f.stride < 0 {
                *base += (f.extent as i64 - 1) * f.stride;
            }
            reps.push((f.extent, f.stride.abs()));
        }
    }
    reps.sort_by_key(|r| (r.1, r.0));
    let mut out: Vec<(u64, i64)> = Vec::new();
    for r in reps {
        match out.last_mut() {
            Some(last) if r.1 == last.0 as i64 * last.1 => last.0 *= r.0,
            _ => out.push(r),
        }
    }
    out
}
