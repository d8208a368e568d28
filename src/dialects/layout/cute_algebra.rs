//! CuTe's layout algebra, exact: coalesce, composition, complement, right and left inverse, logical divide and
//! product, and swizzles. Every operation either returns the layout the definition asks for or says which
//! admissibility condition fails; none truncates (pycute's known wrong results are rejected instead).

use super::cute::{CuteLayout, IntTuple};
use super::repr::{fail, LayoutError};

/// The same function on `[0, size)` with the fewest modes: size-1 modes dropped, `(s0:d0),(s1:d1)` merged where
/// `d1 = s0·d0`. Flat result (`1:0` when nothing is left).
pub fn coalesce(l: &CuteLayout) -> CuteLayout {
    CuteLayout::from_flat(&coalesce_flat(&l.flat()))
}

fn coalesce_flat(modes: &[(i64, i64)]) -> Vec<(i64, i64)> {
    let mut out: Vec<(i64, i64)> = Vec::new();
    for &(s, d) in modes.iter().filter(|m| m.0 != 1) {
        match out.last_mut() {
            Some(last) if d == last.0 * last.1 => last.0 *= s,
            _ => out.push((s, d)),
        }
    }
    out
}

/// `filter`: stride-0 and size-1 modes removed, then coalesced.
pub fn filter(l: &CuteLayout) -> CuteLayout {
    let modes: Vec<(i64, i64)> = l.flat().into_iter().filter(|m| m.1 != 0).collect();
    CuteLayout::from_flat(&coalesce_flat(&modes))
}

/// One leaf of `B` composed into `A`: the digits of `A`'s (coalesced) modes it reaches.
struct Reach {
    /// The result modes `(shape, stride)`.
    modes: Vec<(i64, i64)>,
    /// Per mode of `A` (not the last): the largest digit value this leaf adds there.
    adds: Vec<(usize, i64)>,
}

/// `composition(A, B)`: the layout `R` with `R(i) = A(B(i))`, shaped like `B`. Admissible when, walking `A`'s
/// coalesced modes, every stride `B` steps by divides or is divided by the mode's extent, every partial shape
/// divides, and the modes of `B` never add up to a carry inside a mode of `A`.
pub fn composition(a: &CuteLayout, b: &CuteLayout) -> Result<CuteLayout, LayoutError> {
    let a_modes = coalesce_flat(&a.flat());
    let a_modes = if a_modes.is_empty() { vec![(1, 0)] } else { a_modes };
    let mut used = vec![0i64; a_modes.len()];
    let shape_stride = compose_tree(a, &a_modes, &b.shape, &b.stride, &mut used)?;
    for (j, &total) in used.iter().enumerate().take(a_modes.len() - 1) {
        if total >= a_modes[j].0 {
            return fail(format!(
                "composition {a} o {b} is not a layout: the modes of the right operand add up to {total} within \
                 mode {j} of extent {} of the left operand, which carries into the next mode",
                a_modes[j].0
            ));
        }
    }
    Ok(CuteLayout { shape: shape_stride.0, stride: shape_stride.1 })
}

fn compose_tree(
    a: &CuteLayout,
    a_modes: &[(i64, i64)],
    shape: &IntTuple,
    stride: &IntTuple,
    used: &mut [i64],
) -> Result<(IntTuple, IntTuple), LayoutError> {
    match (shape, stride) {
        (IntTuple::Tuple(ss), IntTuple::Tuple(ds)) => {
            let mut shapes = Vec::new();
            let mut strides = Vec::new();
            for (s, d) in ss.iter().zip(ds) {
                let (s, d) = compose_tree(a, a_modes, s, d, used)?;
                shapes.push(s);
                strides.push(d);
            }
            Ok((IntTuple::Tuple(shapes), IntTuple::Tuple(strides)))
        }
        (IntTuple::Int(s), IntTuple::Int(d)) => {
            let reach = compose_leaf(a, a_modes, *s, *d)?;
            for (j, add) in reach.adds {
                used[j] += add;
            }
            let r = CuteLayout::from_flat(&reach.modes);
            Ok((r.shape, r.stride))
        }
        _ => fail("shape and stride are not congruent"),
    }
}

fn compose_leaf(a: &CuteLayout, a_modes: &[(i64, i64)], n: i64, d: i64) -> Result<Reach, LayoutError> {
    let mut reach = Reach { modes: Vec::new(), adds: Vec::new() };
    if n == 1 {
        return Ok(reach);
    }
    if d == 0 {
        reach.modes.push((n, 0));
        return Ok(reach);
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
        reach.modes.push((take, step * stride));
        reach.adds.push((j, step * (take - 1)));
        rest /= take;
        step = 1;
        if rest == 1 {
            return Ok(reach);
        }
    }
    reach.modes.push((rest, step * a_modes[last].1));
    Ok(reach)
}

/// `complement(A, M)`: the layout of positive increasing strides, with size and cosize bounded by `M`, whose image
/// is disjoint from `A`'s so that `(A, R)` is one-to-one. Admissible when `A`'s modes, sorted by stride, each
/// start where the previous one's span ends or at a multiple of it.
pub fn complement(a: &CuteLayout, m: i64) -> Result<CuteLayout, LayoutError> {
    let mut modes: Vec<(i64, i64)> = a.flat().into_iter().filter(|&(s, d)| s != 1 && d != 0).collect();
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
    out.push(((m + span - 1) / span, span));
    Ok(CuteLayout::from_flat(&coalesce_flat(&out)))
}

/// `right_inverse(L)`: the largest `R` with `L(R(i)) = i`: the chain of `L`'s modes whose strides are 1, then
/// the product of the extents so far, and so on (`1:0` if no stride is 1).
pub fn right_inverse(l: &CuteLayout) -> CuteLayout {
    let flat = coalesce_flat(&l.flat());
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
    CuteLayout::from_flat(&coalesce_flat(&out))
}

/// `left_inverse(L)`: `R` with `R(L(i)) = i` for every `i < size(L)`, as CuTe defines it (the right inverse of
/// `(L, complement(L))`). Admissible only when that pair is one-to-one and onto its cosize.
pub fn left_inverse(l: &CuteLayout) -> Result<CuteLayout, LayoutError> {
    let c = complement(l, l.cosize()).map_err(|e| LayoutError(format!("left_inverse of {l} does not exist: {e}")))?;
    let pair = CuteLayout::concat(&[l.clone(), c]);
    let r = right_inverse(&pair);
    if r.size() != pair.size() {
        return fail(format!("left_inverse of {l} does not exist: {l} is not one-to-one"));
    }
    Ok(r)
}

/// `logical_divide(A, B) = A ∘ (B, complement(B, size A))`: `A` split into tiles of shape `B` (first mode) and the
/// tiles' arrangement (second mode).
pub fn logical_divide(a: &CuteLayout, b: &CuteLayout) -> Result<CuteLayout, LayoutError> {
    let c = complement(b, a.size())?;
    composition(a, &CuteLayout::concat(&[b.clone(), c]))
}

/// `logical_product(A, B) = (A, complement(A, size A · cosize B) ∘ B)`: `A` repeated in the pattern of `B`.
pub fn logical_product(a: &CuteLayout, b: &CuteLayout) -> Result<CuteLayout, LayoutError> {
    let c = complement(a, a.size() * b.cosize())?;
    Ok(CuteLayout::concat(&[a.clone(), composition(&c, b)?]))
}

/// CuTe's `Swizzle<B, M, S>`: XORs the `B` bits at `M + max(0, S)` into the bits `S` places lower (higher for a
/// negative `S`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Swizzle {
    /// Number of bits in the mask.
    pub bits: u32,
    /// Number of least-significant bits kept constant.
    pub base: u32,
    /// Distance to shift the mask (signed).
    pub shift: i32,
}

impl Swizzle {
    /// A swizzle, checked: `|shift| ≥ bits` so that the source and target bits do not overlap.
    pub fn new(bits: u32, base: u32, shift: i32) -> Result<Swizzle, LayoutError> {
        if shift.unsigned_abs() < bits {
            return fail(format!("Swizzle<{bits},{base},{shift}> needs |shift| >= bits"));
        }
        if bits + base + shift.unsigned_abs() > 62 {
            return fail(format!("Swizzle<{bits},{base},{shift}> reaches past bit 62"));
        }
        Ok(Swizzle { bits, base, shift })
    }

    /// Applies the swizzle to an offset.
    pub fn apply(&self, x: i64) -> i64 {
        let mask = ((1i64 << self.bits) - 1) << (self.base as i32 + self.shift.max(0));
        let moved = if self.shift >= 0 { (x & mask) >> self.shift } else { (x & mask) << -self.shift };
        x ^ moved
    }
}
