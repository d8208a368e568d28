//! CuTe's layout algebra, exact: coalesce, composition, complement, right and left inverse, logical divide and
//! product (CuTe's swizzle is the core form's, in `swizzle.rs`). Every operation either returns the layout the definition asks for or says which
//! admissibility condition fails; none truncates (pycute's known wrong results are rejected instead).

use super::cute::{CuteLayout, IntTuple};
use crate::layout::strided::{fail, LayoutError};

/// The same function on `[0, size)` with the fewest modes: size-1 modes dropped, `(s0:d0),(s1:d1)` merged where
/// `d1 = s0·d0`. Flat result (`1:0` when nothing is left).
pub fn coalesce(l: &CuteLayout) -> CuteLayout {
    CuteLayout::from_flat(&coalesce_vec(l.flat()))
}

/// Coalesces flat modes in place: size-1 modes dropped, `(s0:d0),(s1:d1)` merged where `d1 = s0·d0`.
fn coalesce_vec(mut modes: Vec<(i64, i64)>) -> Vec<(i64, i64)> {
    let mut n = 0;
    for i in 0..modes.len() {
        let (s, d) = modes[i];
        if s == 1 {
            continue;
        }
        if n > 0 && d == modes[n - 1].0 * modes[n - 1].1 {
            modes[n - 1].0 *= s;
        } else {
            modes[n] = (s, d);
            n += 1;
        }
    }
    modes.truncate(n);
    modes
}

/// `filter`: stride-0 and size-1 modes removed, then coalesced.
pub fn filter(l: &CuteLayout) -> CuteLayout {
    let mut modes = l.flat();
    modes.retain(|m| m.1 != 0);
    CuteLayout::from_flat(&coalesce_vec(modes))
}

/// `composition(A, B)`: the layout `R` with `R(i) = A(B(i))`, shaped like `B`. Admissible when, walking `A`'s
/// coalesced modes, every stride `B` steps by divides or is divided by the mode's extent, every partial shape
/// divides, and the modes of `B` never add up to a carry inside a mode of `A`.
pub fn composition(a: &CuteLayout, b: &CuteLayout) -> Result<CuteLayout, LayoutError> {
    let (shape, stride) = compose_parts(a, &[b], || b.to_string())?.pop().unwrap();
    shallow(CuteLayout { shape, stride }, "composition")
}

/// `A ∘ (B0, B1, ...)` mode by mode, without building the tuple `(B0, B1, ...)`; `name` names it in errors.
fn compose_parts(
    a: &CuteLayout,
    parts: &[&CuteLayout],
    name: impl Fn() -> String,
) -> Result<Vec<(IntTuple, IntTuple)>, LayoutError> {
    let a_modes = coalesce_vec(a.flat());
    let a_modes = if a_modes.is_empty() { vec![(1, 0)] } else { a_modes };
    let mut used = vec![0i64; a_modes.len()];
    let mut out = Vec::with_capacity(parts.len());
    let mut scratch = Vec::with_capacity(a_modes.len() + 1);
    for b in parts {
        out.push(compose_tree(a, &a_modes, &b.shape, &b.stride, &mut used, &mut scratch)?);
    }
    for (j, &total) in used.iter().enumerate().take(a_modes.len() - 1) {
        if total >= a_modes[j].0 {
            return fail(format!(
                "composition {a} o {} is not a layout: the modes of the right operand add up to {total} within \
                 mode {j} of extent {} of the left operand, which carries into the next mode",
                name(),
                a_modes[j].0
            ));
        }
    }
    Ok(out)
}

fn compose_tree(
    a: &CuteLayout,
    a_modes: &[(i64, i64)],
    shape: &IntTuple,
    stride: &IntTuple,
    used: &mut [i64],
    scratch: &mut Vec<(i64, i64)>,
) -> Result<(IntTuple, IntTuple), LayoutError> {
    match (shape, stride) {
        (IntTuple::Tuple(ss), IntTuple::Tuple(ds)) => {
            let mut shapes = Vec::with_capacity(ss.len());
            let mut strides = Vec::with_capacity(ss.len());
            for (s, d) in ss.iter().zip(ds) {
                let (s, d) = compose_tree(a, a_modes, s, d, used, scratch)?;
                shapes.push(s);
                strides.push(d);
            }
            Ok((IntTuple::Tuple(shapes), IntTuple::Tuple(strides)))
        }
        (IntTuple::Int(s), IntTuple::Int(d)) => {
            scratch.clear();
            compose_leaf(a, a_modes, *s, *d, scratch, used)?;
            let r = CuteLayout::from_flat(scratch);
            Ok((r.shape, r.stride))
        }
        _ => fail("shape and stride are not congruent"),
    }
}

/// One leaf `n:d` of `B` composed into `A`'s coalesced modes: pushes the result modes, and adds to `used[j]` the
/// largest digit value it contributes to mode `j` of `A`.
fn compose_leaf(
    a: &CuteLayout,
    a_modes: &[(i64, i64)],
    n: i64,
    d: i64,
    modes: &mut Vec<(i64, i64)>,
    used: &mut [i64],
) -> Result<(), LayoutError> {
    if n == 1 {
        return Ok(());
    }
    if d == 0 {
        modes.push((n, 0));
        return Ok(());
    }
    if d < 0 {
        return fail(format!("composition with a negative stride {d} is not supported"));
    }
    let (mut rest, mut step) = (n, d);
    let last = a_modes.len() - 1;
    for (j, &(s, stride)) in a_modes.iter().enumerate().take(last) {
        if step % s == 0 {
            step /= s;
            continue;
        }
        if s % step != 0 {
            return fail(format!(
                "composition {a} o {n}:{d} is not admissible: stride {step} neither divides nor is divided by extent \
                 {s} of mode {j}"
            ));
        }
        let e = s / step;
        let take = rest.min(e);
        if rest > e && rest % e != 0 {
            return fail(format!(
                "composition {a} o {n}:{d} is not admissible: {rest} elements do not split evenly over extent {e} \
                 left in mode {j}"
            ));
        }
        modes.push((take, step * stride));
        used[j] += step * (take - 1);
        rest /= take;
        step = 1;
        if rest == 1 {
            return Ok(());
        }
    }
    let stride = step.checked_mul(a_modes[last].1);
    modes.push((rest, stride.ok_or_else(|| LayoutError(format!("composition {a} o {n}:{d} overflows")))?));
    Ok(())
}

/// `complement(A, M)`: the layout of positive increasing strides, with size and cosize bounded by `M`, whose image
/// is disjoint from `A`'s so that `(A, R)` is one-to-one. Admissible when `A`'s modes, sorted by stride, each
/// start where the previous one's span ends or at a multiple of it.
pub fn complement(a: &CuteLayout, m: i64) -> Result<CuteLayout, LayoutError> {
    let mut modes = a.flat();
    modes.retain(|&(s, d)| s != 1 && d != 0);
    if let Some(&(s, d)) = modes.iter().find(|m| m.1 < 0) {
        return fail(format!("complement of {a}: mode {s}:{d} has a negative stride"));
    }
    modes.sort_by_key(|&(s, d)| (d, s));
    let mut out = Vec::new();
    let mut span = 1i64;
    for (s, d) in modes {
        if d % span != 0 {
            return fail(format!(
                "complement of {a} does not exist: stride {d} of mode {s}:{d} is not a multiple of {span}, the span \
                 of the modes with smaller strides"
            ));
        }
        out.push((d / span, span));
        span = s * d;
    }
    out.push((m.saturating_add(span - 1) / span, span));
    Ok(CuteLayout::from_flat(&coalesce_vec(out)))
}

/// `right_inverse(L)`: the largest `R` with `L(R(i)) = i`: the chain of `L`'s modes whose strides are 1, then
/// the product of the extents so far, and so on (`1:0` if no stride is 1).
pub fn right_inverse(l: &CuteLayout) -> CuteLayout {
    right_inverse_flat(l.flat())
}

fn right_inverse_flat(modes: Vec<(i64, i64)>) -> CuteLayout {
    let flat = coalesce_vec(modes);
    let mut prefix = Vec::with_capacity(flat.len());
    let mut p = 1i64;
    for &(s, _) in &flat {
        prefix.push(p);
        p *= s;
    }
    let mut out = Vec::new();
    let mut next = 1i64;
    while let Some(k) = flat.iter().position(|&(_, d)| d == next) {
        out.push((flat[k].0, prefix[k]));
        next *= flat[k].0;
    }
    CuteLayout::from_flat(&coalesce_vec(out))
}

/// `left_inverse(L)`: `R` with `R(L(i)) = i` for every `i < size(L)`, as CuTe defines it (the right inverse of
/// `(L, complement(L))`). Admissible only when that pair is one-to-one and onto its cosize.
pub fn left_inverse(l: &CuteLayout) -> Result<CuteLayout, LayoutError> {
    let c = complement(l, l.cosize()).map_err(|e| LayoutError(format!("left_inverse of {l} does not exist: {e}")))?;
    let mut pair = l.flat();
    pair.extend(c.flat());
    let r = right_inverse_flat(pair);
    if r.size() != l.size() * c.size() {
        return fail(format!("left_inverse of {l} does not exist: {l} is not one-to-one"));
    }
    Ok(r)
}

/// `logical_divide(A, B) = A ∘ (B, complement(B, size A))`: `A` split into tiles of shape `B` (first mode) and the
/// tiles' arrangement (second mode).
pub fn logical_divide(a: &CuteLayout, b: &CuteLayout) -> Result<CuteLayout, LayoutError> {
    let c = complement(b, a.size())?;
    let parts = compose_parts(a, &[b, &c], || format!("({b},{c})"))?;
    let (shapes, strides) = parts.into_iter().unzip();
    shallow(CuteLayout { shape: IntTuple::Tuple(shapes), stride: IntTuple::Tuple(strides) }, "logical_divide")
}

/// The most modes (leaves) a layout the algebra makes may have: a product of size-1 layouts keeps its size but
/// doubles its modes, so folding it over and over would grow without bound (24 folds took 4 GiB).
pub const MAX_MODES: usize = 1 << 12;

/// `logical_product(A, B) = (A, complement(A, size A · cosize B) ∘ B)`: `A` repeated in the pattern of `B`.
pub fn logical_product(a: &CuteLayout, b: &CuteLayout) -> Result<CuteLayout, LayoutError> {
    let bound =
        a.size().checked_mul(b.cosize()).ok_or_else(|| LayoutError(format!("logical_product {a}, {b} overflows")))?;
    let c = complement(a, bound)?;
    let composed = composition(&c, b)?;
    let modes = a.shape.leaves().len() + composed.shape.leaves().len();
    if modes > MAX_MODES {
        return fail(format!(
            "logical_product of layouts with {modes} modes together, more than the {MAX_MODES} allowed"
        ));
    }
    shallow(CuteLayout::concat(vec![a.clone(), composed]), "logical_product")
}

/// The deepest nesting a layout the algebra makes may have: each product, division or composition can add a
/// level, and the textual IR reads at most 256 levels of brackets (the op and attribute around it included), so a
/// deeper fold could not be read back.
pub const MAX_DEPTH: usize = 64;

/// `l`, unless it nests deeper than [`MAX_DEPTH`].
fn shallow(l: CuteLayout, op: &str) -> Result<CuteLayout, LayoutError> {
    match l.shape.depth() {
        d if d > MAX_DEPTH => {
            fail(format!("{op} makes a layout nested {d} levels deep, more than the {MAX_DEPTH} allowed"))
        }
        _ => Ok(l),
    }
}
