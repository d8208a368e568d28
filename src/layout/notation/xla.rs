//! XLA tiled layouts (`f32[3,5]{1,0:T(2,2)}`): `minor_to_major`, then tiles applied to the minor suffix of the
//! physical dimensions (each dimension padded to a multiple of its tile, split into tile count and in-tile
//! index, the in-tile parts moved minor-most), repeated tiles applied to the result, and `*` merging a dimension
//! into the next more minor one. Lowered to the core representation digit by digit, so every tile counts in the
//! footprint (XLA's own `ArraySize` sizes by the first tile only). What has no digits is XLA's own address
//! function, the tiling evaluated per coordinate.

use crate::layout::address_fn::AddressFn;
use crate::layout::core_form::GeneralLayout;
use crate::layout::stage::Stage;
use crate::layout::strided::{fail, Dim, Factor, Layout, LayoutError};
use std::fmt;
use std::hash::Hash;

/// One entry of a tile.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum TileDim {
    /// A tile size.
    Size(u64),
    /// `*`: merge this dimension into the next more minor one.
    Combine,
}

/// `elem[dims]{minor_to_major:T(...)...}`, as written.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct XlaLayout {
    /// The element type as written (`f32`, `F32`, `bf16`, ...).
    pub elem: String,
    /// Logical dimension sizes.
    pub dims: Vec<u64>,
    /// `minor_to_major`; `None` when the shape has no `{...}` (the default, row-major).
    pub minor_to_major: Option<Vec<u64>>,
    /// The tiles, applied in order.
    pub tiles: Vec<Vec<TileDim>>,
}

impl fmt::Display for XlaLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}[{}]", self.elem, join(self.dims.iter()))?;
        if let Some(m2m) = &self.minor_to_major {
            write!(f, "{{{}", join(m2m.iter()))?;
            if !self.tiles.is_empty() {
                f.write_str(":T")?;
                for t in &self.tiles {
                    let items: Vec<String> = t
                        .iter()
                        .map(|d| match d {
                            TileDim::Size(n) => n.to_string(),
                            TileDim::Combine => "*".to_string(),
                        })
                        .collect();
                    write!(f, "({})", items.join(","))?;
                }
            }
            f.write_str("}")?;
        }
        Ok(())
    }
}

fn join<T: ToString>(items: impl Iterator<Item = T>) -> String {
    items.map(|i| i.to_string()).collect::<Vec<_>>().join(",")
}

/// A piece of a physical dimension's coordinate: digit `place`/`extent` of logical dimension `dim`, given `slots`
/// positions of the physical coordinate (more than `extent` when a tile padded it).
#[derive(Copy, Clone, Debug)]
struct Piece {
    dim: usize,
    place: u64,
    extent: u64,
    slots: u64,
}

/// A physical dimension: its coordinate written in pieces, most major first.
type Phys = Vec<Piece>;

impl XlaLayout {
    /// Checks the element type and that `minor_to_major` is a permutation of the dimensions.
    pub fn validate(&self) -> Result<(), LayoutError> {
        const TYPES: &[&str] =
            &["pred", "s4", "s8", "s16", "s32", "s64", "u4", "u8", "u16", "u32", "u64", "f16", "bf16", "f32", "f64"];
        let lower = self.elem.to_ascii_lowercase();
        if !TYPES.contains(&lower.as_str()) && !lower.starts_with("f8") {
            return fail(format!("unknown XLA element type '{}'", self.elem));
        }
        if let Some(m2m) = &self.minor_to_major {
            let mut seen = vec![false; self.dims.len()];
            if m2m.len() != self.dims.len() {
                return fail(format!("minor_to_major has {} entries for {} dimensions", m2m.len(), self.dims.len()));
            }
            for &d in m2m {
                let slot = seen.get_mut(d as usize).ok_or_else(|| LayoutError(format!("no dimension {d}")))?;
                if std::mem::replace(slot, true) {
                    return fail(format!("dimension {d} appears twice in minor_to_major"));
                }
            }
        } else if !self.tiles.is_empty() {
            return fail("tiles need a minor_to_major");
        }
        for t in &self.tiles {
            if t.contains(&TileDim::Size(0)) {
                return fail("a tile dimension is 0");
            }
        }
        self.to_core().map(|_| ())
    }

    /// The general core form: the strided one when there is one; else, when the first tile combines dimensions
    /// with `*` and then splits the combined coordinate inside a digit (XLA's own `T(*,*,2,*,3)` example), a
    /// regroup stage that combines them first, before the strided layout of the combined shape.
    pub fn to_core(&self) -> Result<GeneralLayout, LayoutError> {
        let err = match self.to_repr() {
            Ok(l) => return Ok(l.into()),
            Err(e) => e,
        };
        match self.regrouped() {
            Some(g) => Ok(g),
            // Else XLA's own function (a repeated tile splitting a combined coordinate), when the tiles fit.
            None if err.0.contains("inside a digit") => {
                let logical = self.dims.iter().map(|&n| Dim::new(n)).collect();
                GeneralLayout::computed(logical, self.clone())
                    .map_err(|e| LayoutError(format!("{} (and it has no strided form: {err})", e.0)))
            }
            None => Err(err),
        }
    }

    /// A regroup stage in front of the strided layout of the combined shape, when the first tile's `*`
    /// combination is what has no strided form.
    fn regrouped(&self) -> Option<GeneralLayout> {
        let first = self.tiles.first().filter(|t| t.contains(&TileDim::Combine))?;
        let rank = self.dims.len();
        let default: Vec<u64> = (0..rank as u64).rev().collect();
        let m2m = self.minor_to_major.as_ref().unwrap_or(&default);
        let physical: Vec<usize> = m2m.iter().rev().map(|&k| k as usize).collect();
        if first.len() > rank {
            return None;
        }
        let untiled = rank - first.len();
        let mut groups: Vec<Vec<usize>> = physical[..untiled].iter().map(|&k| vec![k]).collect();
        let mut carry = Vec::new();
        let mut tile = Vec::new();
        for (t, &k) in first.iter().zip(&physical[untiled..]) {
            carry.push(k);
            if let TileDim::Size(_) = t {
                groups.push(std::mem::take(&mut carry));
                tile.push(*t);
            }
        }
        if !carry.is_empty() {
            return None;
        }
        let dims: Vec<u64> = groups.iter().map(|g| g.iter().map(|&k| self.dims[k]).product()).collect();
        let m2m = (0..dims.len() as u64).rev().collect();
        let tiles = std::iter::once(tile).chain(self.tiles[1..].iter().cloned()).collect();
        let combined = XlaLayout { elem: self.elem.clone(), dims, minor_to_major: Some(m2m), tiles };
        let inner = combined.to_repr().ok()?;
        let logical = self.dims.iter().map(|&n| Dim::new(n)).collect();
        GeneralLayout::staged(logical, vec![Stage::Regroup(groups)], inner).ok()
    }

    /// The core layout: row-major over the logical dimensions for element order, the physical order, tiles and
    /// merges as digits. A tile that splits a coordinate where no digit boundary is (padding in the middle of a
    /// coordinate) has no core form yet and is an error that says so.
    pub fn to_repr(&self) -> Result<Layout, LayoutError> {
        let rank = self.dims.len();
        let default: Vec<u64> = (0..rank as u64).rev().collect();
        let m2m = self.minor_to_major.as_ref().unwrap_or(&default);
        let mut phys: Vec<Phys> = m2m
            .iter()
            .rev()
            .map(|&k| {
                let n = self.dims[k as usize].max(1);
                vec![Piece { dim: k as usize, place: 1, extent: n, slots: n }]
            })
            .collect();
        for (n, tile) in self.tiles.iter().enumerate() {
            phys = apply_tile(phys, tile, n, &self.dims)?;
        }
        let mut factors = Vec::new();
        let mut stride: i128 = 1;
        for p in phys.iter().rev() {
            for piece in p.iter().rev() {
                let s = i64::try_from(stride).map_err(|_| LayoutError("layout too large".into()))?;
                factors.push(Factor { dim: Some(piece.dim), place: piece.place, extent: piece.extent, stride: s });
                stride *= piece.slots as i128;
            }
        }
        factors.reverse();
        let cosize = u64::try_from(stride).map_err(|_| LayoutError("layout too large".into()))?;
        let dims = self.dims.iter().map(|&d| Dim::new(d)).collect();
        let layout = Layout { dims, factors, base: 0, cosize };
        layout.validate()?;
        Ok(layout)
    }
}

/// Applies tile number `n` to the minor suffix of `phys`.
fn apply_tile(mut phys: Vec<Phys>, tile: &[TileDim], n: usize, dims: &[u64]) -> Result<Vec<Phys>, LayoutError> {
    if tile.len() > phys.len() {
        return fail(format!("tile {} has {} dimensions but the shape it tiles has {}", n + 1, tile.len(), phys.len()));
    }
    let start = phys.len() - tile.len();
    // Merge `*` dimensions into their more minor neighbour.
    let mut tiled: Vec<(Phys, u64)> = Vec::new();
    let mut carry: Phys = Vec::new();
    for (i, t) in tile.iter().enumerate() {
        let mut p = std::mem::take(&mut carry);
        p.extend(phys[start + i].iter().copied());
        match t {
            TileDim::Combine if i + 1 < tile.len() => carry = p,
            TileDim::Combine => return fail(format!("tile {}: '*' on the most minor dimension", n + 1)),
            TileDim::Size(s) => tiled.push((p, *s)),
        }
    }
    phys.truncate(start);
    let mut inner = Vec::new();
    for (p, t) in tiled {
        let (outer, rest) = split(p, t, dims).ok_or_else(|| {
            LayoutError(format!(
                "tile {}: a tile of {t} splits a merged or already tiled dimension inside a digit (padding in the \
                 middle of a coordinate has no core form yet)",
                n + 1
            ))
        })?;
        phys.push(outer);
        inner.push(rest);
    }
    phys.extend(inner);
    Ok(phys)
}

/// Splits the coordinate `c` of a physical dimension into `(c / t, c mod t)` as pieces. XLA pads the dimension to
/// a multiple of `t` at its major end; a piece split where its digit values do not divide evenly must be the top
/// digit of its logical dimension (so the padding is at the end of that coordinate). `None` if the split cannot
/// be written as digits.
fn split(pieces: Phys, t: u64, dims: &[u64]) -> Option<(Phys, Phys)> {
    let mut minor: Phys = Vec::new();
    let mut left = t;
    let mut rest = pieces;
    if rest.is_empty() {
        // A dimension of size 1 that a tile pads: a digit that is always 0, in `t` slots.
        let pad = Piece { dim: 0, place: 1, extent: 1, slots: t.max(1) };
        return Some((vec![Piece { slots: 1, ..pad }], vec![pad]));
    }
    while left > 1 {
        let mut last = rest.pop()?;
        if left.is_multiple_of(last.slots) && !rest.is_empty() {
            left /= last.slots;
            minor.insert(0, last);
            continue;
        }
        if rest.is_empty() && last.slots % left != 0 {
            last.slots = last.slots.div_ceil(left) * left;
        }
        if last.slots % left != 0 {
            return None;
        }
        let top = last.place.saturating_mul(last.extent) >= dims[last.dim];
        let (low, high) = if last.extent <= left {
            (Piece { slots: left, ..last }, Piece { place: last.place * last.extent, extent: 1, ..last })
        } else if last.extent % left == 0 || top {
            let high = Piece { place: last.place * left, extent: last.extent.div_ceil(left), ..last };
            (Piece { extent: left, slots: left, ..last }, high)
        } else {
            return None;
        };
        minor.insert(0, low);
        rest.push(Piece { slots: last.slots / left, ..high });
        left = 1;
    }
    if rest.is_empty() {
        let below = minor[0];
        rest.push(Piece { dim: below.dim, place: below.place.saturating_mul(below.extent), extent: 1, slots: 1 });
    }
    Some((rest, minor))
}

impl XlaLayout {
    /// The XLA layout that places every element where `l` does, if XLA can say it: dense (base 0, no copies,
    /// ascending strides by physical order) with at most one tile. The physical order is read off the strides of
    /// each dimension's top digit; the tile off the low digits, trying a whole or no tile for a one-digit
    /// dimension; each candidate is checked by placement. The element type is written `f32`: a layout alone does
    /// not know its element type.
    pub fn from_repr(l: &Layout) -> Result<XlaLayout, LayoutError> {
        let cannot = |m: &str| LayoutError(format!("XLA cannot express this layout: {m}"));
        if l.base != 0 || l.factors.iter().any(|f| f.dim.is_none() && f.extent > 1) {
            return Err(cannot("it has a base offset or stores elements twice"));
        }
        let c = crate::layout::canonical::canonical(l)?;
        if c.digits.iter().any(|d| d.len() > 2) {
            return Err(cannot("a dimension has more than two digits (repeated tiles are not searched)"));
        }
        let top = |k: usize| c.digits[k].last().map_or(-1, |d| d.2);
        let mut physical: Vec<usize> = (0..l.dims.len()).collect();
        physical.sort_by_key(|&k| std::cmp::Reverse(top(k)));
        let dims: Vec<u64> = l.dims.iter().map(|d| d.extent).collect();
        let m2m: Vec<u64> = physical.iter().rev().map(|&k| k as u64).collect();
        for candidate in tile_candidates(&c.digits, &physical, &dims) {
            let tiles = if candidate.is_empty() { Vec::new() } else { vec![candidate] };
            let x = XlaLayout { elem: "f32".into(), dims: dims.clone(), minor_to_major: Some(m2m.clone()), tiles };
            if x.to_repr().is_ok_and(|r| crate::layout::canonical::same_placement(&r, l).unwrap_or(false)) {
                return Ok(x);
            }
        }
        Err(cannot("no minor_to_major with at most one tile places the elements where it does"))
    }
}

/// Tiles to try, smallest first: for each number of tiled minor dimensions, the low digit's extent of a
/// two-digit dimension; for a one-digit dimension a whole tile, no tile (1), and a padded tile filling the room
/// its stride leaves below the next more major dimension (a row pitch).
fn tile_candidates(digits: &[Vec<(u64, u64, i64)>], physical: &[usize], dims: &[u64]) -> Vec<Vec<TileDim>> {
    let low_stride = |k: usize| digits[k].first().map(|d| d.2);
    let mut out = vec![Vec::new()];
    for r in 1..=physical.len() {
        let mut partial: Vec<Vec<TileDim>> = vec![Vec::new()];
        for i in physical.len() - r..physical.len() {
            let k = physical[i];
            let room = match (i.checked_sub(1).and_then(|j| low_stride(physical[j])), low_stride(k)) {
                (Some(major), Some(own)) if own > 0 && major % own == 0 => Some((major / own) as u64),
                _ => None,
            };
            let choices = match digits[k].as_slice() {
                [low, _] => vec![low.1],
                _ => [Some(dims[k].max(1)), Some(1), room.filter(|&t| t > dims[k])].into_iter().flatten().collect(),
            };
            partial = partial
                .into_iter()
                .flat_map(|p| choices.iter().map(move |&t| [p.clone(), vec![TileDim::Size(t)]].concat()))
                .collect();
        }
        out.extend(partial);
    }
    out
}

/// XLA's own function, for what has no strided or regrouped form: `minor_to_major` and each tile applied to the
/// coordinate.
impl AddressFn for XlaLayout {
    fn notation(&self) -> &'static str {
        "xla"
    }

    fn cosize(&self) -> Result<u64, LayoutError> {
        Ok(xla_walk(self, &vec![0; self.dims.len()])?.1)
    }

    fn offset(&self, e: &[u64]) -> Option<u64> {
        xla_walk(self, e).ok().map(|r| r.0)
    }

    /// The offset is a row-major index into the final (padded) shape, and every tile keeps each coordinate below
    /// its extent (`c / t < ceil(n / t)`, `c % t < t`).
    fn in_bounds_by_construction(&self) -> bool {
        true
    }
}

/// XLA: the coordinate in physical order, then each tile (combining `*` dimensions into the next minor one,
/// padding each tiled dimension to a multiple of its tile, splitting it into tile count and in-tile index, the
/// in-tile parts moved minor-most); the offset is the row-major index in the final shape. Gives
/// `(offset, buffer size)`.
fn xla_walk(x: &XlaLayout, e: &[u64]) -> Result<(u64, u64), LayoutError> {
    let rank = x.dims.len();
    let default: Vec<u64> = (0..rank as u64).rev().collect();
    let m2m = x.minor_to_major.as_ref().unwrap_or(&default);
    let mut shape: Vec<u64> = m2m.iter().rev().map(|&k| x.dims[k as usize]).collect();
    let mut coord: Vec<u64> = m2m.iter().rev().map(|&k| e[k as usize]).collect();
    for tile in &x.tiles {
        let start =
            shape.len().checked_sub(tile.len()).ok_or_else(|| LayoutError("tile longer than the shape".into()))?;
        let (mut outer_s, mut outer_c) = (shape[..start].to_vec(), coord[..start].to_vec());
        let (mut inner_s, mut inner_c) = (Vec::new(), Vec::new());
        let (mut carry_n, mut carry_c) = (1u64, 0u64);
        for (i, t) in tile.iter().enumerate() {
            let (n, c) = (carry_n * shape[start + i], carry_c * shape[start + i] + coord[start + i]);
            match t {
                TileDim::Combine => (carry_n, carry_c) = (n, c),
                TileDim::Size(t) => {
                    outer_s.push(n.div_ceil(*t));
                    outer_c.push(c / t);
                    inner_s.push(*t);
                    inner_c.push(c % t);
                    (carry_n, carry_c) = (1, 0);
                }
            }
        }
        if carry_n != 1 {
            return fail("'*' on the most minor dimension of a tile");
        }
        outer_s.extend(inner_s);
        outer_c.extend(inner_c);
        (shape, coord) = (outer_s, outer_c);
    }
    let size =
        shape.iter().try_fold(1u64, |a, &b| a.checked_mul(b)).ok_or_else(|| LayoutError("layout too large".into()))?;
    let offset = shape.iter().zip(&coord).fold(0u64, |acc, (&n, &c)| acc * n + c);
    Ok((offset, size))
}
