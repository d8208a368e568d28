//! A notation's own address function, for the layouts that no digit or coordinate stage can say (a CK
//! `pad`/`merge`/`modulo`/`xor` of a coordinate mixing others unevenly, an XLA repeated tile splitting a combined
//! coordinate inside a digit): the CK transform chain or XLA's tiling evaluated coordinate by coordinate. Exact,
//! but only tables and equality of the same function are structural; everything else goes through tables.

use super::notation::ck::{CkLayout, Kind};
use super::notation::xla::{TileDim, XlaLayout};
use super::strided::{fail, LayoutError};
use std::fmt;

/// A layout given by its notation's function from coordinates to offsets.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Computed {
    /// A CK descriptor: the transform stages evaluated top down, then the base strides.
    Ck(CkLayout),
    /// An XLA layout: `minor_to_major` and each tile applied to the coordinate.
    Xla(XlaLayout),
}

/// Elements checked when a computed layout is validated (every offset must lie in the buffer).
pub const CHECK_LIMIT: u64 = 1 << 22;

impl Computed {
    /// The buffer size.
    pub fn cosize(&self) -> Result<u64, LayoutError> {
        match self {
            Computed::Ck(ck) => {
                let span: i128 = ck
                    .lengths
                    .iter()
                    .zip(ck.base_strides())
                    .map(|(&l, s)| (l as i128 - 1).max(0) * s.max(0) as i128)
                    .sum();
                u64::try_from(span + 1).map_err(|_| LayoutError("descriptor too large".into()))
            }
            Computed::Xla(x) => Ok(xla_walk(x, &vec![0; x.dims.len()])?.1),
        }
    }

    /// The offset of the element at coordinate `e`, or `None` if it is not stored.
    pub fn offset(&self, e: &[u64]) -> Option<u64> {
        match self {
            Computed::Ck(ck) => ck_offset(ck, e),
            Computed::Xla(x) => xla_walk(x, e).ok().map(|r| r.0),
        }
    }

    /// Checks that every element of the `extents` space lands in `[0, cosize)` (up to [`CHECK_LIMIT`] elements;
    /// a larger layout is an error that says so rather than an unchecked one).
    pub fn check(&self, extents: &[u64]) -> Result<(), LayoutError> {
        let size = extents.iter().try_fold(1u64, |a, &b| a.checked_mul(b)).unwrap_or(u64::MAX);
        if size > CHECK_LIMIT {
            return fail(format!(
                "{self} has no strided form and {size} elements, more than the {CHECK_LIMIT} checked"
            ));
        }
        let cosize = self.cosize()?;
        for i in 0..size {
            let e = row_major_coordinate(i, extents);
            if let Some(o) = self.offset(&e) {
                if o >= cosize {
                    return fail(format!("{self} puts element {e:?} at offset {o}, past its buffer of {cosize}"));
                }
            }
        }
        Ok(())
    }
}

/// The coordinate of element number `i` (row-major, the last coordinate fastest) of a space with `extents`.
fn row_major_coordinate(mut i: u64, extents: &[u64]) -> Vec<u64> {
    let mut e = vec![0; extents.len()];
    for k in (0..extents.len()).rev() {
        e[k] = i % extents[k];
        i /= extents[k];
    }
    e
}

impl fmt::Display for Computed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Computed::Ck(ck) => write!(f, "ck({ck})"),
            Computed::Xla(x) => write!(f, "xla({x})"),
        }
    }
}

/// CK: each stage's transforms map upper coordinates to lower ones (top stage first), then the base strides.
fn ck_offset(ck: &CkLayout, top: &[u64]) -> Option<u64> {
    let levels = ck.stage_lengths().ok()?;
    let mut upper: Vec<i64> = top.iter().map(|&c| c as i64).collect();
    for (s, stage) in ck.stages.iter().enumerate().rev() {
        let mut lower = vec![0i64; levels[s].len()];
        for t in stage {
            let up = |i: usize| upper[t.upper[i] as usize];
            let low = |i: usize| t.lower[i] as usize;
            match &t.kind {
                Kind::PassThrough(_) => lower[low(0)] = up(0),
                Kind::Offset(_, o) => lower[low(0)] = up(0) + o,
                Kind::Slice { begin, .. } => lower[low(0)] = up(0) + *begin as i64,
                Kind::Pad { len, left, .. } => {
                    let v = up(0) - *left as i64;
                    if v < 0 || v >= *len as i64 {
                        return None;
                    }
                    lower[low(0)] = v;
                }
                Kind::Merge(lengths) => {
                    let mut v = up(0);
                    for (i, &l) in lengths.iter().enumerate().rev() {
                        let l = l.max(1) as i64;
                        lower[low(i)] = if i == 0 { v } else { v % l };
                        v /= l;
                    }
                }
                Kind::Unmerge(lengths) => {
                    lower[low(0)] = (0..lengths.len()).fold(0, |acc, i| acc * lengths[i] as i64 + up(i));
                }
                Kind::Embed(_, coefs) => lower[low(0)] = coefs.iter().enumerate().map(|(i, c)| up(i) * c).sum(),
                Kind::Freeze(i) => lower[low(0)] = *i,
                Kind::Replicate(_) => {}
                Kind::Modulo(_, m) => lower[low(0)] = up(0).rem_euclid(*m as i64),
                Kind::Xor(lengths) => {
                    lower[low(0)] = up(0);
                    lower[low(1)] = up(1) ^ up(0).rem_euclid(lengths[1].max(1) as i64);
                }
            }
        }
        upper = lower;
    }
    let offset: i64 = upper.iter().zip(ck.base_strides()).map(|(c, s)| c * s).sum();
    u64::try_from(offset).ok()
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
