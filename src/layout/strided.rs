//! The strided layout, the heart of the core form every notation lowers to: logical dimensions split into
//! mixed-radix digits, each digit placed in the buffer with a signed stride, plus padding and a buffer size.
//!
//! Meaning. A logical element has a coordinate `e` (one value per dimension). Dimension `k` has `extent` values,
//! of which the first `stored` are in the buffer (the rest are resized away: "not stored"). Its coordinate is
//! written in mixed radix by the dimension's [`Factor`]s (digit `j` is `(e / place_j) mod extent_j`), and the
//! element sits at `base + Σ digit_j · stride_j` (plus any replica digits: an element may be stored more than
//! once). The digits may cover more than `stored` values (their product, the padded extent, may exceed it): the
//! coordinates in `[stored, padded)` are padding of the dimension's [`PadKind`]. A buffer position in
//! `[0, cosize)` is live if an element sits there, otherwise padding: of the strictest kind among the padding
//! coordinates that land on it (Top < Zero < Bottom), Top if none does (a hole). Positions `≥ cosize` are out of
//! bounds.

use std::fmt;

/// What a padding position holds.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum PadKind {
    /// Unspecified but readable (Furiosa `#`, XLA tile padding, holes between strided elements).
    #[default]
    Top,
    /// Reads as zero (Furiosa `#{0}`).
    Zero,
    /// Must never be accessed (Furiosa `#{!}`).
    Bottom,
}

impl PadKind {
    /// The lower-case name used in diagnostics and tables.
    pub fn name(self) -> &'static str {
        match self {
            PadKind::Top => "top",
            PadKind::Zero => "zero",
            PadKind::Bottom => "bottom",
        }
    }
}

/// One logical dimension of the tensor a layout stores.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Dim {
    /// The axis name (Furiosa axes); `None` for positional dimensions (CuTe modes, XLA and CK dimensions).
    pub name: Option<String>,
    /// Number of coordinate values of the tensor along this dimension.
    pub extent: u64,
    /// Coordinates `[start, stored)` are in the buffer; the rest are resized away (or read a default, as CK's
    /// padding). `start ≤ stored ≤ extent`; `start > 0` needs a single-digit dimension.
    pub stored: u64,
    /// The first stored coordinate (CK's left padding); usually 0.
    pub start: u64,
    /// The kind of the padding coordinates `[stored, padded)` of this dimension.
    pub pad: PadKind,
}

impl Dim {
    /// A dimension whose every coordinate is stored, without padding kind of its own.
    pub fn new(extent: u64) -> Dim {
        Dim { name: None, extent, stored: extent, start: 0, pad: PadKind::Top }
    }
}

/// One mixed-radix digit of a dimension's coordinate (or a replica digit), placed in the buffer. Sorted by place,
/// a dimension's digits of extent > 1 have places 1, e0, e0·e1, ... (extent-1 digits may sit anywhere).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Factor {
    /// The dimension whose coordinate this digit is part of; `None` for a replica digit (the same elements
    /// stored again `extent` times, `stride` apart).
    pub dim: Option<usize>,
    /// The digit's weight in the coordinate: the product of the extents of the dimension's lower digits.
    pub place: u64,
    /// Number of values of the digit.
    pub extent: u64,
    /// Buffer distance between consecutive digit values (any sign; 0 broadcasts).
    pub stride: i64,
}

/// A layout: where every element of a logical tensor sits in a linear buffer. See the module docs for the meaning.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Layout {
    /// The logical dimensions, in the tensor's order.
    pub dims: Vec<Dim>,
    /// The digits in buffer order (most major first); their order does not change the meaning.
    pub factors: Vec<Factor>,
    /// Offset of the element at coordinate 0.
    pub base: i64,
    /// Buffer size: positions `[0, cosize)`, including padding.
    pub cosize: u64,
}

/// Why a layout is not well formed or an operation on layouts is not admissible.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LayoutError(pub String);

impl fmt::Display for LayoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for LayoutError {}

/// Shorthand for returning a [`LayoutError`].
pub fn fail<T>(msg: impl Into<String>) -> Result<T, LayoutError> {
    Err(LayoutError(msg.into()))
}

impl Layout {
    /// A compact row-major layout of `extents` (the last dimension fastest), as XLA's default layout and CK's
    /// packed descriptor.
    pub fn row_major(extents: &[u64]) -> Layout {
        let mut stride = 1i64;
        let mut factors = Vec::new();
        for (k, &n) in extents.iter().enumerate().rev() {
            factors.push(Factor { dim: Some(k), place: 1, extent: n.max(1), stride });
            stride = stride.saturating_mul(n as i64);
        }
        factors.reverse();
        let dims = extents.iter().map(|&n| Dim::new(n)).collect();
        Layout { dims, factors, base: 0, cosize: extents.iter().product() }
    }

    /// Number of logical elements (stored or not).
    pub fn size(&self) -> u64 {
        self.dims.iter().map(|d| d.extent).product()
    }

    /// The digits of dimension `k` (or the replica digits for `None`), lowest place first.
    pub fn digits(&self, k: Option<usize>) -> Vec<Factor> {
        let mut out: Vec<Factor> = self.factors.iter().copied().filter(|f| f.dim == k).collect();
        out.sort_by_key(|f| f.place);
        out
    }

    /// The padded extent of dimension `k`: how many coordinate values its digits can write.
    pub fn padded(&self, k: usize) -> u64 {
        self.factors.iter().filter(|f| f.dim == Some(k)).map(|f| f.extent).product()
    }

    /// Checks the invariants: every dimension's digits form a mixed-radix chain (places 1, e0, e0·e1, ...) whose
    /// product covers the stored coordinates, and every digit combination lands in `[0, cosize)`.
    pub fn validate(&self) -> Result<(), LayoutError> {
        for (k, d) in self.dims.iter().enumerate() {
            if d.stored > d.extent {
                return fail(format!("dimension {k} stores {} coordinates but has only {}", d.stored, d.extent));
            }
            if d.start > d.stored {
                return fail(format!("dimension {k} starts storing at {} past its end {}", d.start, d.stored));
            }
            if d.start > 0 && self.factors.iter().filter(|f| f.dim == Some(k) && f.extent > 1).count() > 1 {
                return fail(format!("dimension {k} is stored from coordinate {} but has several digits", d.start));
            }
            self.validate_chain(Some(k), d.stored)?;
        }
        self.validate_chain(None, 0)?;
        if let Some(f) = self.factors.iter().find(|f| f.dim.is_some_and(|k| k >= self.dims.len())) {
            return fail(format!(
                "a digit refers to dimension {} of a rank-{} layout",
                f.dim.unwrap(),
                self.dims.len()
            ));
        }
        let replicas = self.digits(None);
        if !provably_injective(&replicas) {
            return fail("the replica digits store some copies at the same position");
        }
        let strict = self.dims.iter().enumerate().any(|(k, d)| d.pad != PadKind::Top && self.padded(k) > d.stored);
        if strict && self.stored_size() == 0 {
            return fail("a layout that stores no element cannot have zero or bottom padding");
        }
        if strict && !provably_injective(&self.factors) {
            return fail("zero or bottom padding needs a layout whose coordinates land on distinct positions");
        }
        let (lo, hi) = self.offset_bounds();
        if hi >= 1 << 62 || lo <= -(1 << 62) || self.cosize >= 1 << 62 {
            return fail("the layout reaches offsets past 2^62");
        }
        if self.stored_size() > 0 && (lo < 0 || hi >= self.cosize as i128) {
            return fail(format!("offsets span [{lo}, {hi}], outside the buffer [0, {})", self.cosize));
        }
        Ok(())
    }

    fn validate_chain(&self, k: Option<usize>, stored: u64) -> Result<(), LayoutError> {
        let what = match k {
            Some(k) => format!("dimension {k}"),
            None => "the replica digits".to_string(),
        };
        let mut place: u128 = 1;
        for f in self.digits(k) {
            if f.extent == 0 {
                return fail(format!("{what} has a digit of extent 0"));
            }
            // An extent-1 digit is always 0: its place does not matter.
            if k.is_some() && f.extent > 1 && f.place as u128 != place {
                return fail(format!("{what} has a digit at place {} where {place} was expected", f.place));
            }
            place = place.saturating_mul(f.extent as u128);
        }
        if place < stored as u128 {
            return fail(format!("{what} stores {stored} coordinates but its digits cover only {place}"));
        }
        if place > u64::MAX as u128 {
            return fail(format!("{what} is too large"));
        }
        Ok(())
    }

    /// Number of stored logical elements.
    pub fn stored_size(&self) -> u64 {
        self.dims.iter().map(|d| d.stored - d.start).product()
    }

    /// The least and greatest offset any digit combination (padding included) reaches.
    pub fn offset_bounds(&self) -> (i128, i128) {
        let mut lo = self.base as i128;
        let mut hi = self.base as i128;
        for f in &self.factors {
            // A dimension stored from `start` (one digit) never takes the digit values below it.
            let first = f.dim.map_or(0, |k| self.dims[k].start.min(f.extent - 1)) as i128;
            let (a, b) = (first * f.stride as i128, (f.extent as i128 - 1) * f.stride as i128);
            lo += a.min(b);
            hi += a.max(b);
        }
        (lo, hi)
    }

    /// The (first) buffer offset of the element at `coord`, or `None` if it is not stored or out of range.
    pub fn offset(&self, coord: &[u64]) -> Option<i64> {
        if coord.len() != self.dims.len() || coord.iter().zip(&self.dims).any(|(&c, d)| c >= d.stored || c < d.start) {
            return None;
        }
        let mut off = self.base;
        for f in &self.factors {
            if let Some(k) = f.dim {
                off += ((coord[k] / f.place) % f.extent) as i64 * f.stride;
            }
        }
        Some(off)
    }
}

/// Whether `x ↦ Σ x_j · stride_j` over the digits' boxes is provably one-to-one: sorted by |stride|, every stride
/// exceeds the reach of all smaller ones. (A sufficient condition; mixed-radix and tiled layouts meet it.)
pub fn provably_injective(factors: &[Factor]) -> bool {
    let mut fs: Vec<&Factor> = factors.iter().filter(|f| f.extent > 1).collect();
    fs.sort_by_key(|f| f.stride.unsigned_abs());
    let mut reach: u128 = 0;
    for f in fs {
        let s = f.stride.unsigned_abs() as u128;
        if s <= reach {
            return false;
        }
        reach += (f.extent as u128 - 1) * s;
    }
    true
}
