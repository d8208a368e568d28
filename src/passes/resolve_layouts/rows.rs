//! The layouts the NPU lowering reads: a tensor is one element stride per dimension and an offset in its buffer
//! (a strided layout of one digit per dimension), read a row at a time. A row is the last dimension, contiguous,
//! read whole with its padding (`NpuConfig::padded_row` elements: DMAs into data memory move 8-byte aligned
//! packets), so a buffer's rows must start aligned and hold their padding (zero, or at least no other element)
//! before the next row. A view of such a buffer is read in place when its rows are rows of the buffer (any
//! strides of the outer dimensions, 0 and negative too), or when it is itself such a layout without padding.

use crate::dialects::layout::attr::{CuteAttr, LayoutAttr};
use crate::interfaces::layout::layout_of;
use crate::interfaces::sharding::index_maps_of;
use crate::ir::dialect_data::DialectData;
use crate::ir::{Attr, AttrId, Context, Interners, OpId};
use crate::layout::notation::cute::CuteLayout;
use crate::layout::strided::{provably_injective, Factor};
use crate::machine::NpuConfig;
use crate::zspace::{Ipf, ZAffineMap, ZRange};
use std::sync::Arc;

/// Where a tensor's elements sit in its buffer: element `e` at `offset + Σ e_k · strides[k]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Strided {
    /// Element stride of each dimension (a scalar has one dimension of extent 1).
    pub strides: Vec<i64>,
    /// Element offset of the first element.
    pub offset: i64,
}

impl Strided {
    /// `extents` row-major with padded rows, at offset 0.
    pub fn row_major(extents: &[u64], cfg: &NpuConfig) -> Strided {
        let mut strides = vec![1i64; extents.len()];
        let mut stride = 1i64;
        for (k, &extent) in extents.iter().enumerate().rev() {
            strides[k] = stride;
            let stored = if k + 1 == extents.len() { cfg.padded_row(extent) } else { extent };
            stride = stride.saturating_mul(stored as i64);
        }
        Strided { strides, offset: 0 }.normalized(extents)
    }

    /// Whether this is the lowering's own layout of `extents` ([`Strided::row_major`]): the only one whose row
    /// padding holds zeros, since whoever fills it (the harness, a runtime) writes zeros there; a caller's buffer
    /// in another given layout may hold anything between its rows.
    pub fn is_own(&self, extents: &[u64], cfg: &NpuConfig) -> bool {
        *self == Strided::row_major(extents, cfg)
    }

    /// The same layout with the strides of extent-1 dimensions canonical (they move nothing): 0, but 1 for the
    /// last dimension, which the lowering reads a padded row of.
    pub fn normalized(mut self, extents: &[u64]) -> Strided {
        let n = extents.len();
        for (k, &e) in extents.iter().enumerate() {
            if e == 1 {
                self.strides[k] = (k + 1 == n) as i64;
            }
        }
        self
    }

    /// This layout read through a view's index map (result index to operand index): the view's own layout of
    /// the same buffer; `None` on overflow.
    pub fn through(&self, map: &ZAffineMap) -> Option<Strided> {
        let (strides, offset) = map.pull_strides(&self.strides, self.offset)?;
        Some(Strided { strides, offset })
    }

    /// Elements of the buffer this layout of `extents` reaches, each row read to `row` elements (its padded end
    /// for a layout whose rows are read whole, 1 otherwise); `None` when an element would sit below 0 or past
    /// `u64`.
    pub fn span(&self, extents: &[u64], row: u64) -> Option<u64> {
        let n = extents.len();
        let (mut low, mut high) = (self.offset as i128, self.offset as i128 + row as i128);
        for (k, (&e, &s)) in extents.iter().zip(&self.strides).enumerate() {
            // The last dimension of a row read whole is inside `row`.
            if k + 1 < n || row == 1 {
                let reach = (e as i128 - 1) * s as i128;
                *(if reach < 0 { &mut low } else { &mut high }) += reach;
            }
        }
        (low >= 0).then(|| u64::try_from(high).ok()).flatten()
    }

    /// The layout attribute (`#layout.cute<shape:stride>` with this offset).
    pub fn attr(&self, ints: &mut Interners, extents: &[u64]) -> AttrId {
        let modes: Vec<(i64, i64)> = match extents {
            [] => vec![(1, 1)],
            _ => extents.iter().zip(&self.strides).map(|(&e, &s)| (e as i64, s)).collect(),
        };
        let attr = CuteAttr { offset: self.offset, ..CuteAttr::plain(CuteLayout::from_flat(&modes)) };
        ints.attr(Attr::Dialect(DialectData(Arc::new(LayoutAttr::Cute(attr)))))
    }
}

/// The strided form of layout attribute `attr` for a tensor of `extents` (a scalar: `[1]`): one digit per
/// dimension, no replica digit.
pub fn strided_of(ints: &Interners, attr: AttrId, extents: &[u64]) -> Result<Strided, String> {
    let layout = layout_of(ints, attr).ok_or("'teg.layout' is not a layout attribute")?;
    let core = layout.core_form().map_err(|e| format!("'teg.layout': {e}"))?;
    let strided = core.as_strided().ok_or("'teg.layout' must be a strided layout")?;
    if strided.dims.len() != extents.len() || strided.dims.iter().zip(extents).any(|(d, &e)| d.extent != e) {
        return Err(format!("'teg.layout' has {} dimensions of other extents than the tensor's", strided.dims.len()));
    }
    let mut strides = vec![0i64; extents.len()];
    for f in strided.factors.iter().filter(|f| f.extent > 1) {
        let k = f.dim.ok_or("'teg.layout' stores elements twice (a replica digit)")?;
        if f.place != 1 {
            return Err(
                "'teg.layout' splits a dimension into several digits; the lowering reads one per dimension".into()
            );
        }
        strides[k] = f.stride;
    }
    Ok(Strided { strides, offset: strided.base }.normalized(extents))
}

/// An error unless `s` places each element of a tensor of `extents` at its own offset, as a buffer a caller fills
/// must (each dimension's stride past the span of the dimensions with smaller strides).
pub fn check_injective(s: &Strided, extents: &[u64]) -> Result<(), String> {
    let factors: Vec<Factor> = extents
        .iter()
        .zip(&s.strides)
        .enumerate()
        .map(|(k, (&extent, &stride))| Factor { dim: Some(k), place: 1, extent, stride })
        .collect();
    if !provably_injective(&factors) {
        return Err(format!(
            "'teg.layout' places two elements at one offset (or its dimensions do not nest: strides {:?})",
            s.strides
        ));
    }
    Ok(())
}

/// Why `s` is not a buffer layout the lowering reads, if it is not: the last dimension contiguous, each row's
/// padded span (`padded_row` elements) inside the stride of the dimension above, strides non-negative, and the
/// offset and strides whole numbers of `dm_write_align` bytes. Strides of extent-1 dimensions do not matter.
pub fn check_rows(s: &Strided, extents: &[u64], elem_bytes: u64, cfg: &NpuConfig) -> Result<(), String> {
    let n = extents.len();
    let row = cfg.padded_row(extents[n - 1]);
    let aligned = |elems: i64| (elems as i128 * elem_bytes as i128) % cfg.dm_write_align.max(1) as i128 == 0;
    let mut inner = row as i128;
    let mut nested = extents[n - 1] == 1 || s.strides[n - 1] == 1;
    for k in (0..n - 1).rev() {
        if extents[k] == 1 {
            continue;
        }
        nested &= s.strides[k] as i128 >= inner && aligned(s.strides[k]);
        inner = extents[k] as i128 * s.strides[k] as i128;
    }
    if !nested || s.offset < 0 || !aligned(s.offset) {
        return Err(format!(
            "rows of {row} elements (the last dimension contiguous and padded to {row}, each dimension's stride \
             past everything inside it, offset and strides multiples of {} bytes)",
            cfg.dm_write_align
        ));
    }
    Ok(())
}

/// Whether a view whose index map is `map` (result index to operand index) reads its operand's rows whole: the
/// last dimensions of both have extent `extent` and are the identity of each other, and no other dimension moves
/// along a row.
pub fn keeps_rows(map: &ZAffineMap, result_last: u64, operand_last: u64) -> bool {
    let (i, j) = (map.inputs(), map.outputs());
    if i == 0 || j == 0 || result_last != operand_last {
        return false;
    }
    let row_alone = (0..i).all(|x| map.coef(j - 1, x) == (x + 1 == i) as i64);
    let column_alone = (0..j).all(|y| map.coef(y, i - 1) == (y + 1 == j) as i64);
    row_alone && column_alone && map.offset(j - 1) == 0
}

/// The layout of a view of `operand` through `map` (result index to operand index) when the view can be read in
/// place, in the buffer of `buffer_elems` elements holding the operand: when its rows are rows of the operand's
/// (and those are read whole: `operand_rows`), or when it is a buffer layout the lowering reads without padding
/// (a permutation making a column-major source row-major). Otherwise why it must be copied.
pub fn in_place(
    map: &ZAffineMap,
    operand: (&Strided, &[u64], bool),
    extents: &[u64],
    elem_bytes: u64,
    buffer_elems: u64,
    cfg: &NpuConfig,
) -> Result<Strided, String> {
    let (strided, operand_extents, operand_rows) = operand;
    let ranks = map.inputs() == extents.len() && map.outputs() == operand_extents.len();
    let (Some(&last), Some(&operand_last), true) = (extents.last(), operand_extents.last(), ranks) else {
        return Err("a view to or from a scalar is copied".into());
    };
    let alias = strided.through(map).ok_or("its layout overflows")?.normalized(extents);
    if operand_rows && keeps_rows(map, last, operand_last) {
        return Ok(alias);
    }
    let unpadded = cfg.padded_row(last) == last;
    let fits = alias.span(extents, last).is_some_and(|s| s <= buffer_elems);
    if unpadded && fits && check_rows(&alias, extents, elem_bytes, cfg).is_ok() {
        return Ok(alias);
    }
    Err(if operand_rows {
        "its rows are not rows of its operand's buffer".into()
    } else {
        "its operand's layout is not one of rows, and neither is the view's".into()
    })
}

/// The index map of a view `op` that reads each result cell from one operand cell, everywhere by the same affine
/// map (permute, reverse, slice, select, squeeze, unsqueeze, broadcast): result index to operand index. `None`
/// for other ops and views (concat, interleave, repeat, pad).
pub fn view_map(ctx: &Context, op: OpId) -> Option<ZAffineMap> {
    let maps = index_maps_of(ctx, op)?;
    let index: Vec<u64> = maps.index.iter().map(|d| d.1).collect();
    let unit = |ipf: &Ipf| ipf.shape().iter().all(|&e| e == 1);
    let [(_, out)] = maps.outputs.as_slice() else { return None };
    let [(_, pieces)] = maps.inputs.as_slice() else { return None };
    let [piece] = pieces.as_slice() else { return None };
    let m = out.map();
    let identity = m.inputs() == m.outputs()
        && (0..m.outputs()).all(|j| m.offset(j) == 0 && (0..m.inputs()).all(|i| m.coef(j, i) == (i == j) as i64));
    let whole = piece.domain == ZRange::of_shape(&index);
    (identity && unit(out) && whole && piece.affine && unit(&piece.ipf)).then(|| piece.ipf.map().clone())
}
