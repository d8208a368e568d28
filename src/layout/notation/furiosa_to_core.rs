//! The core meaning of a Furiosa mapping, with the composite stride/modulo semantics: the buffer position is
//! pushed down the expression as weighted digits; `E / n` and `E % n` contribute positions `q·n` and `r` *of `E`*,
//! and all contributions aimed at structurally equal subexpressions are pooled and decoded once (so
//! `[[A,B]/4, [A,B]%4]` means `[A,B]`, not the literal rule's lossy per-part decoding). A pair decodes its
//! position at its minor size; an axis collects the digits of its coordinate. A digit that straddles a pair
//! boundary without dividing it has no strided form and is an error naming the pair.

use super::furiosa::{AliasValue, Expr, FuriosaLayout, Operand};
use crate::layout::core_form::GeneralLayout;
use crate::layout::stage::Stage;
use crate::layout::strided::{fail, Dim, Factor, Layout, LayoutError, PadKind};
use indexmap::IndexMap;

/// Values `[0, extent)` at buffer stride `stride`, adding `value · weight` to the position of the node it feeds.
#[derive(Copy, Clone, Debug)]
struct Digit {
    stride: i64,
    extent: u64,
    weight: u64,
}

/// Positions of a node at or beyond `.0` are padding of kind `.1` (an enclosing `#` reaches past what the node
/// holds).
type Limit = Option<(u64, PadKind)>;

/// What reaches a node: digits, and a bound past which its positions are padding.
#[derive(Clone, Debug, Default)]
struct Feed {
    digits: Vec<Digit>,
    limit: Limit,
}

impl Feed {
    fn push(&mut self, d: Digit, limit: Limit) {
        self.digits.push(d);
        self.limit = tighter(self.limit, limit);
    }
}

fn tighter(a: Limit, b: Limit) -> Limit {
    match (a, b) {
        (Some(x), Some(y)) => Some(if y.0 < x.0 { y } else { x }),
        (x, None) | (None, x) => x,
    }
}

/// Lowers a validated Furiosa layout to the core form (dimensions = declared axes, in order). A skewed axis
/// `B' = B − A` becomes a skew stage of `B` by `A` in front of the strided layout of `B'`; an axis the mapping
/// reads only through `B / n` becomes a sampling stage.
pub fn to_core(f: &FuriosaLayout) -> Result<GeneralLayout, LayoutError> {
    let root = expand(f, &f.mapping)?;
    let size = f.size(&root)?;
    let mut all: Vec<&Expr> = Vec::new();
    collect(&root, &mut all);
    let mut nodes: Vec<&Expr> = all.into_iter().collect::<indexmap::IndexSet<&Expr>>().into_iter().collect();
    // Parents before children: a node is decoded once all its contributions are pooled.
    nodes.sort_by_cached_key(|e| std::cmp::Reverse(height(e)));
    let mut pool: IndexMap<&Expr, Feed> = IndexMap::new();
    let first = Digit { stride: 1, extent: size, weight: 1 };
    pool.insert(&root, Feed { digits: vec![first], limit: None });
    let mut axes: IndexMap<String, Feed> = IndexMap::new();
    let mut replicas: Vec<Digit> = Vec::new();
    for &node in &nodes {
        let Feed { digits, limit } = pool.swap_remove(node).unwrap_or_default();
        let digits = coalesce(digits);
        if digits.is_empty() {
            continue;
        }
        // A bound at or past every position the digits reach bounds nothing.
        let reach = 1 + digits.iter().map(|d| (d.extent - 1) * d.weight).sum::<u64>();
        let limit = limit.filter(|&(b, _)| b < reach);
        let mut feed = |e, d: Digit, limit: Limit| pool.entry(e).or_default().push(d, limit);
        match node {
            Expr::Axis(a) => {
                let entry = axes.entry(a.clone()).or_default();
                digits.into_iter().for_each(|d| entry.push(d, limit));
            }
            Expr::Broadcast(_) => replicas.extend(broadcast(digits, limit, node)?),
            Expr::Skewed(a) => {
                let entry = axes.entry(format!("{a}'")).or_default();
                digits.into_iter().for_each(|d| entry.push(d, limit));
            }
            Expr::Escape(_) => unreachable!("escapes are expanded"),
            Expr::Pair(l, r) => {
                let minor = f.size(r)?;
                let (hi_limit, lo_limit) = split_limit(limit, minor, node)?;
                for d in digits {
                    let (hi, lo) = split(d, minor, node)?;
                    hi.into_iter().for_each(|d| feed(l, d, hi_limit));
                    lo.into_iter().for_each(|d| feed(r, d, lo_limit));
                }
            }
            Expr::Stride(inner, n) => {
                let n = f.operand(n)?;
                let limit = limit.map(|(b, k)| (b.saturating_mul(n), k));
                digits.into_iter().for_each(|d| feed(inner, Digit { weight: d.weight * n, ..d }, limit));
            }
            // `[E % n] # m`: a digit with holes after its `n` values (Top padding is a hole).
            Expr::Modulo(inner, _) if limit.is_some() => match (limit, digits.as_slice()) {
                (Some((b, PadKind::Top)), [d]) if d.weight == 1 => {
                    feed(inner, Digit { extent: d.extent.min(b), ..*d }, None)
                }
                _ => return fail(format!("padding inside {node} bounds the low part of a coordinate, not a prefix")),
            },
            Expr::Modulo(inner, _) | Expr::Resize(inner, _) => digits.into_iter().for_each(|d| feed(inner, d, limit)),
            Expr::Pad(inner, kind, _) => {
                let limit = tighter(limit, Some((f.size(inner)?, *kind)));
                digits.into_iter().for_each(|d| feed(inner, d, limit));
            }
            Expr::Sliding(items) => {
                let [d] = digits.as_slice() else {
                    return fail(format!("the sliding window {node} must be read whole, not split"));
                };
                if limit.is_some() {
                    return fail(format!("the sliding window {node} cannot be padded"));
                }
                for (e, n) in items {
                    let stride = i64::try_from(f.operand(n)?).ok().and_then(|n| d.stride.checked_mul(n));
                    let stride =
                        stride.ok_or_else(|| LayoutError(format!("the sliding window {node} is too large")))?;
                    feed(e, Digit { stride, extent: f.size(e)?, weight: 1 }, None);
                }
            }
        }
    }
    build(f, axes, replicas, size)
}

/// Splits a digit feeding a pair at the pair's minor size: `(to major, to minor)`.
fn split(d: Digit, minor: u64, pair: &Expr) -> Result<(Option<Digit>, Option<Digit>), LayoutError> {
    if d.extent == 1 {
        return Ok((None, None));
    }
    if d.weight.is_multiple_of(minor) {
        return Ok((Some(Digit { weight: d.weight / minor, ..d }), None));
    }
    if d.weight.saturating_mul(d.extent) <= minor {
        return Ok((None, Some(d)));
    }
    let k = minor / d.weight;
    if minor.is_multiple_of(d.weight) && d.extent.is_multiple_of(k) {
        let lo = Digit { extent: k, ..d };
        let hi = Digit { stride: d.stride * k as i64, extent: d.extent / k, weight: 1 };
        return Ok((Some(hi), Some(lo)));
    }
    fail(format!(
        "[{pair}] has no strided form: {} positions at weight {} straddle its minor size {minor}",
        d.extent, d.weight
    ))
}

/// A pair's padding bound split at its minor size: whole rows of the minor part, or a prefix of the first row.
fn split_limit(limit: Limit, minor: u64, pair: &Expr) -> Result<(Limit, Limit), LayoutError> {
    match limit {
        None => Ok((None, None)),
        Some((b, k)) if b % minor == 0 => Ok((Some((b / minor, k)), None)),
        Some((b, k)) if b < minor => Ok((Some((1, k)), Some((b, k)))),
        Some((b, _)) => {
            fail(format!("[{pair}] has no strided form: padding after {b} positions cuts a row of {minor}"))
        }
    }
}

/// Replica digits of a broadcast; a padded broadcast keeps only its first copies.
fn broadcast(digits: Vec<Digit>, limit: Limit, node: &Expr) -> Result<Vec<Digit>, LayoutError> {
    match (limit, digits.as_slice()) {
        (None, _) => Ok(digits),
        (Some((b, PadKind::Top)), [d]) if d.weight == 1 => Ok(vec![Digit { extent: d.extent.min(b), ..*d }]),
        _ => fail(format!("the padded broadcast {node} has no strided form")),
    }
}

/// Merges digits that continue each other both in the node's positions and in the buffer.
fn coalesce(mut digits: Vec<Digit>) -> Vec<Digit> {
    digits.retain(|d| d.extent > 1);
    digits.sort_by_key(|d| d.weight);
    let mut out: Vec<Digit> = Vec::new();
    for d in digits {
        match out.last_mut() {
            Some(last)
                if Some(d.weight) == last.weight.checked_mul(last.extent)
                    && Some(d.stride) == last.stride.checked_mul(last.extent as i64) =>
            {
                last.extent *= d.extent;
            }
            _ => out.push(d),
        }
    }
    out
}

fn build(
    f: &FuriosaLayout,
    mut axes: IndexMap<String, Feed>,
    replicas: Vec<Digit>,
    size: u64,
) -> Result<GeneralLayout, LayoutError> {
    let mut dims = Vec::new();
    let mut factors = Vec::new();
    let mut stages = Vec::new();
    for (k, (name, extent)) in f.axes.iter().enumerate() {
        let mut feed = axes.shift_remove(name).unwrap_or_default();
        let mut inner_name = name.clone();
        if let Some((skewed, _, minus)) = f.skews.iter().find(|(_, of, _)| of == name) {
            if let Some(primed) = axes.shift_remove(&format!("{skewed}'")) {
                if !feed.digits.is_empty() {
                    return fail(format!("the mapping reads both {name} and its skewed axis {skewed}'"));
                }
                feed = primed;
                let by = f.axes.iter().position(|(a, _)| a == minus).expect("validated skew");
                stages.push(Stage::Skew { dim: k, by, sign: -1 });
                inner_name = format!("{skewed}'");
            }
        }
        let Feed { digits, limit } = feed;
        // A digit read at a weight past the coordinates below it leaves a gap: only the coordinates whose gap
        // digit is 0 are stored (a sampling stage per gap), and the digits are those of the sampled coordinate.
        let (mut inner_extent, mut gaps) = (*extent, Vec::new());
        let (mut place, mut weight) = (1u64, 1u64);
        let mut last: Option<(u64, u64, u64)> = None; // (weight, extent, inner place) of the previous digit
        for d in &coalesce(digits) {
            if d.weight != weight {
                // A whole digit skipped (`keep` 1), or the previous digit's values not filling its room.
                let stage = if d.weight.is_multiple_of(weight) {
                    (place, d.weight / weight, 1)
                } else if let Some((w, e, p)) = last.filter(|l| d.weight > weight && d.weight.is_multiple_of(l.0)) {
                    (p, d.weight / w, e)
                } else if d.weight < weight {
                    return fail(format!(
                        "digits of axis {name} overlap: one at weight {} inside one ending at {weight}",
                        d.weight
                    ));
                } else {
                    return fail(format!("axis {name} is read at weight {} past a digit ending at {weight}", d.weight));
                };
                let (at, step, keep) = stage;
                inner_extent = Stage::sampled_extent(inner_extent, at, step, keep)
                    .map_err(|e| LayoutError(format!("axis {name} is stored only at some coordinates: {e}")))?;
                stages.push(Stage::Sample { dim: k, place: at, step, keep });
                gaps.push(stage);
                weight = d.weight;
            }
            factors.push(Factor { dim: Some(k), place, extent: d.extent, stride: d.stride });
            last = Some((d.weight, d.extent, place));
            place *= d.extent;
            weight *= d.extent;
        }
        let (bound, pad) = limit.unwrap_or((u64::MAX, PadKind::Top));
        // The sampled coordinates are in order: those below the bound are a prefix.
        let below = |c: u64| {
            gaps.iter().rev().fold(c, |c, &(p, step, keep)| c % p + (c / p) % keep * p + c / (p * keep) * p * step)
                < bound
        };
        let stored = place.min(inner_extent).min(partition_point(inner_extent, below));
        dims.push(Dim { name: Some(inner_name), extent: inner_extent, stored, start: 0, pad });
    }
    for d in replicas {
        factors.push(Factor { dim: None, place: 1, extent: d.extent, stride: d.stride });
    }
    let logical = f.axes.iter().map(|(name, n)| Dim { name: Some(name.clone()), ..Dim::new(*n) }).collect();
    GeneralLayout::staged(logical, stages, Layout { dims, factors, base: 0, cosize: size })
}

/// The expression with aliases replaced by what they name and constant operands by their values.
fn expand(f: &FuriosaLayout, e: &Expr) -> Result<Expr, LayoutError> {
    let boxed = |x: &Expr| expand(f, x).map(Box::new);
    let num = |n: &Operand| f.operand(n).map(Operand::Int);
    Ok(match e {
        Expr::Escape(a) => match f.alias(a)? {
            AliasValue::Mapping(m) => expand(f, m)?,
            AliasValue::Const(n) => Expr::Broadcast(*n),
        },
        Expr::Pair(l, r) => Expr::Pair(boxed(l)?, boxed(r)?),
        Expr::Stride(i, n) => Expr::Stride(boxed(i)?, num(n)?),
        Expr::Modulo(i, n) => Expr::Modulo(boxed(i)?, num(n)?),
        Expr::Resize(i, n) => Expr::Resize(boxed(i)?, num(n)?),
        Expr::Pad(i, k, n) => Expr::Pad(boxed(i)?, *k, num(n)?),
        Expr::Sliding(items) => {
            Expr::Sliding(items.iter().map(|(x, n)| Ok((expand(f, x)?, num(n)?))).collect::<Result<_, LayoutError>>()?)
        }
        leaf => leaf.clone(),
    })
}

/// Every subexpression (operands excluded).
fn collect<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
    out.push(e);
    match e {
        Expr::Pair(l, r) => {
            collect(l, out);
            collect(r, out);
        }
        Expr::Stride(i, _) | Expr::Modulo(i, _) | Expr::Resize(i, _) | Expr::Pad(i, _, _) => collect(i, out),
        Expr::Sliding(items) => items.iter().for_each(|(x, _)| collect(x, out)),
        _ => {}
    }
}

fn height(e: &Expr) -> usize {
    1 + match e {
        Expr::Pair(l, r) => height(l).max(height(r)),
        Expr::Stride(i, _) | Expr::Modulo(i, _) | Expr::Resize(i, _) | Expr::Pad(i, _, _) => height(i),
        Expr::Sliding(items) => items.iter().map(|(x, _)| height(x)).max().unwrap_or(0),
        _ => 0,
    }
}

/// The number of `c` in `[0, n)` with `pred(c)`, for a `pred` true on a prefix.
fn partition_point(n: u64, pred: impl Fn(u64) -> bool) -> u64 {
    let (mut lo, mut hi) = (0u64, n);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if pred(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}
