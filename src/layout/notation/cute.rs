//! CuTe layouts: hierarchical `shape:stride` pairs of integer tuples, with CuTe's coordinate maps (`idx2crd`,
//! `crd2idx`: colexicographic, the last mode absorbing overflow) and the lowering to the core representation
//! (top-level modes become dimensions, nested modes their digits).

use crate::layout::strided::{fail, Dim, Factor, Layout, LayoutError};
use std::fmt;

/// An integer or a tuple of them, nested: CuTe's `IntTuple`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum IntTuple {
    /// A leaf.
    Int(i64),
    /// A tuple of sub-tuples (possibly empty).
    Tuple(Vec<IntTuple>),
}

impl IntTuple {
    /// The leaves, depth first.
    pub fn leaves(&self) -> Vec<i64> {
        let mut out = Vec::new();
        self.collect_leaves(&mut out);
        out
    }

    fn collect_leaves(&self, out: &mut Vec<i64>) {
        match self {
            IntTuple::Int(v) => out.push(*v),
            IntTuple::Tuple(items) => items.iter().for_each(|t| t.collect_leaves(out)),
        }
    }

    /// Levels of tuples: 0 for an integer.
    pub fn depth(&self) -> usize {
        match self {
            IntTuple::Int(_) => 0,
            IntTuple::Tuple(items) => 1 + items.iter().map(IntTuple::depth).max().unwrap_or(0),
        }
    }

    /// The product of the leaves.
    pub fn product(&self) -> i64 {
        match self {
            IntTuple::Int(v) => *v,
            IntTuple::Tuple(items) => items.iter().map(IntTuple::product).product(),
        }
    }

    /// The top-level modes: the items of a tuple, or the integer itself as the single mode.
    pub fn modes(&self) -> Vec<IntTuple> {
        match self {
            IntTuple::Int(_) => vec![self.clone()],
            IntTuple::Tuple(items) => items.clone(),
        }
    }

    /// Whether `other` has the same nesting structure.
    pub fn congruent(&self, other: &IntTuple) -> bool {
        match (self, other) {
            (IntTuple::Int(_), IntTuple::Int(_)) => true,
            (IntTuple::Tuple(a), IntTuple::Tuple(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.congruent(y))
            }
            _ => false,
        }
    }

    /// Builds a tuple from `items`, unwrapping a single item as CuTe does for results.
    pub fn from_modes(mut items: Vec<IntTuple>) -> IntTuple {
        if items.len() == 1 {
            items.pop().unwrap()
        } else {
            IntTuple::Tuple(items)
        }
    }
}

impl fmt::Display for IntTuple {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IntTuple::Int(v) => write!(f, "{v}"),
            IntTuple::Tuple(items) => {
                f.write_str("(")?;
                for (i, t) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{t}")?;
                }
                f.write_str(")")
            }
        }
    }
}

/// A CuTe layout `shape:stride` with congruent tuples; shapes are positive.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CuteLayout {
    /// The shape.
    pub shape: IntTuple,
    /// The stride, congruent with the shape.
    pub stride: IntTuple,
}

impl fmt::Display for CuteLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.shape, self.stride)
    }
}

impl CuteLayout {
    /// `shape:stride`, checked: congruent tuples and positive shapes.
    pub fn new(shape: IntTuple, stride: IntTuple) -> Result<CuteLayout, LayoutError> {
        if !shape.congruent(&stride) {
            return fail(format!("shape {shape} and stride {stride} are not congruent"));
        }
        if let Some(s) = shape.leaves().into_iter().find(|&s| s <= 0) {
            return fail(format!("shape {shape} has a non-positive extent {s}"));
        }
        if shape.leaves().iter().try_fold(1i64, |acc, &s| acc.checked_mul(s)).is_none() {
            return fail(format!("shape {shape} has more than 2^63 elements"));
        }
        let reach: i128 =
            shape.leaves().iter().zip(stride.leaves()).map(|(&s, d)| (s as i128 - 1) * (d as i128).abs()).sum();
        if reach >= 1 << 62 {
            return fail(format!("layout {shape}:{stride} reaches offsets past 2^62"));
        }
        Ok(CuteLayout { shape, stride })
    }

    /// A layout from flat `(shape, stride)` modes (`1:0` if there are none).
    pub fn from_flat(modes: &[(i64, i64)]) -> CuteLayout {
        if modes.is_empty() {
            return CuteLayout { shape: IntTuple::Int(1), stride: IntTuple::Int(0) };
        }
        let shape = IntTuple::from_modes(modes.iter().map(|m| IntTuple::Int(m.0)).collect());
        let stride = IntTuple::from_modes(modes.iter().map(|m| IntTuple::Int(m.1)).collect());
        CuteLayout { shape, stride }
    }

    /// Concatenation of layouts as the modes of a new layout (CuTe's `make_layout(a, b, ...)`).
    pub fn concat(parts: Vec<CuteLayout>) -> CuteLayout {
        let (shapes, strides) = parts.into_iter().map(|p| (p.shape, p.stride)).unzip();
        CuteLayout { shape: IntTuple::Tuple(shapes), stride: IntTuple::Tuple(strides) }
    }

    /// The top-level modes as layouts of their own.
    pub fn modes(&self) -> Vec<CuteLayout> {
        let strides = self.stride.modes();
        self.shape.modes().into_iter().zip(strides).map(|(shape, stride)| CuteLayout { shape, stride }).collect()
    }

    /// The leaf modes `(shape, stride)`, depth first (first = fastest in the colexicographic order).
    pub fn flat(&self) -> Vec<(i64, i64)> {
        let mut out = Vec::with_capacity(8);
        flat_into(&self.shape, &self.stride, &mut out);
        out
    }

    /// Number of elements of the domain.
    pub fn size(&self) -> i64 {
        self.shape.product()
    }

    /// One past the largest offset, for non-negative strides (`L(size − 1) + 1`); 0 for an empty layout.
    pub fn cosize(&self) -> i64 {
        span(&self.shape, &self.stride) + 1
    }

    /// `L(i)`: the offset of the 1-D coordinate `i` (the last mode absorbs `i ≥ size`).
    pub fn call(&self, i: i64) -> i64 {
        crd2idx_int(i, &self.shape, &self.stride)
    }
}

fn flat_into(shape: &IntTuple, stride: &IntTuple, out: &mut Vec<(i64, i64)>) {
    match (shape, stride) {
        (IntTuple::Int(s), IntTuple::Int(d)) => out.push((*s, *d)),
        (IntTuple::Tuple(ss), IntTuple::Tuple(ds)) => ss.iter().zip(ds).for_each(|(s, d)| flat_into(s, d, out)),
        _ => {}
    }
}

/// `Σ (s − 1) · d` over the leaves.
fn span(shape: &IntTuple, stride: &IntTuple) -> i64 {
    match (shape, stride) {
        (IntTuple::Int(s), IntTuple::Int(d)) => (s - 1) * d,
        (IntTuple::Tuple(ss), IntTuple::Tuple(ds)) => ss.iter().zip(ds).map(|(s, d)| span(s, d)).sum(),
        _ => 0,
    }
}

/// `crd2idx` for an integer coordinate: split colexicographically over `shape`, the last mode unwrapped.
pub fn crd2idx_int(i: i64, shape: &IntTuple, stride: &IntTuple) -> i64 {
    match (shape, stride) {
        (IntTuple::Int(_), IntTuple::Int(d)) => i * d,
        (IntTuple::Tuple(ss), IntTuple::Tuple(ds)) => {
            let mut rest = i;
            let mut off = 0;
            for (k, (s, d)) in ss.iter().zip(ds).enumerate() {
                if k + 1 == ss.len() {
                    off += crd2idx_int(rest, s, d);
                } else {
                    let n = s.product();
                    off += crd2idx_int(rest % n, s, d);
                    rest /= n;
                }
            }
            off
        }
        _ => 0,
    }
}

/// `crd2idx` for a coordinate that may be partly hierarchical: tuples must match the shape's structure where
/// given; an integer where the shape has a tuple is split colexicographically.
pub fn crd2idx(coord: &IntTuple, shape: &IntTuple, stride: &IntTuple) -> Result<i64, LayoutError> {
    match (coord, shape, stride) {
        (IntTuple::Int(i), _, _) => Ok(crd2idx_int(*i, shape, stride)),
        (IntTuple::Tuple(cs), IntTuple::Tuple(ss), IntTuple::Tuple(ds)) if cs.len() == ss.len() => {
            let mut off = 0;
            for ((c, s), d) in cs.iter().zip(ss).zip(ds) {
                off += crd2idx(c, s, d)?;
            }
            Ok(off)
        }
        _ => fail(format!("coordinate {coord} does not match shape {shape}")),
    }
}

/// `idx2crd(i, shape)`: the hierarchical coordinate of the 1-D coordinate `i`, colexicographic, the last mode
/// absorbing overflow.
pub fn idx2crd(i: i64, shape: &IntTuple) -> IntTuple {
    match shape {
        IntTuple::Int(_) => IntTuple::Int(i),
        IntTuple::Tuple(ss) => {
            let mut rest = i;
            let mut out = Vec::with_capacity(ss.len());
            for (k, s) in ss.iter().enumerate() {
                if k + 1 == ss.len() {
                    out.push(idx2crd(rest, s));
                } else {
                    let n = s.product();
                    out.push(idx2crd(rest % n, s));
                    rest /= n;
                }
            }
            IntTuple::Tuple(out)
        }
    }
}

/// `idx2crd(i, shape, stride)` for a compact layout: the coordinate whose offset is `i`, each leaf
/// `(i / stride) mod shape` (stride-0 or extent-1 leaves give 0). Only meaningful for compact layouts.
pub fn idx2crd_strided(i: i64, shape: &IntTuple, stride: &IntTuple) -> IntTuple {
    match (shape, stride) {
        (IntTuple::Int(s), IntTuple::Int(d)) => IntTuple::Int(if *s == 1 || *d == 0 { 0 } else { (i / d) % s }),
        (IntTuple::Tuple(ss), IntTuple::Tuple(ds)) => {
            IntTuple::Tuple(ss.iter().zip(ds).map(|(s, d)| idx2crd_strided(i, s, d)).collect())
        }
        _ => IntTuple::Int(0),
    }
}

impl CuteLayout {
    /// The core layout: one dimension per top-level mode, one digit per leaf. The buffer is `[0, cosize)`; a
    /// layout reaching below offset 0 (negative strides) has no buffer of its own and is an error here.
    pub fn to_repr(&self) -> Result<Layout, LayoutError> {
        self.to_repr_at(0)
    }

    /// [`to_repr`](Self::to_repr) of `offset + L(i)`: the layout placed `offset` into its buffer.
    pub fn to_repr_at(&self, offset: i64) -> Result<Layout, LayoutError> {
        let mut dims = Vec::new();
        let mut factors = Vec::new();
        for (k, mode) in self.modes().into_iter().enumerate() {
            let mut place = 1u64;
            for (s, d) in mode.flat() {
                factors.push(Factor { dim: Some(k), place, extent: s as u64, stride: d });
                place *= s as u64;
            }
            dims.push(Dim::new(place));
        }
        let mut layout = Layout { dims, factors, base: offset, cosize: 0 };
        let (lo, hi) = layout.offset_bounds();
        if lo < 0 {
            return fail(format!("layout {self} reaches offset {lo}: a buffer starts at 0"));
        }
        layout.cosize = u64::try_from(hi + 1).map_err(|_| LayoutError(format!("layout {self} is too large")))?;
        Ok(layout)
    }
}

impl CuteLayout {
    /// The CuTe layout of a core layout, where CuTe can say it: one mode per dimension, one leaf per digit
    /// (lowest place first), no padding, no unstored elements, no replicas, base 0.
    pub fn from_repr(l: &Layout) -> Result<CuteLayout, LayoutError> {
        if l.base != 0 {
            return fail(format!("a CuTe layout has no base offset (this one starts at {})", l.base));
        }
        if l.factors.iter().any(|f| f.dim.is_none() && f.extent > 1) {
            return fail("a CuTe layout cannot store an element twice (replica digits)");
        }
        let mut modes = Vec::new();
        for (k, d) in l.dims.iter().enumerate() {
            if d.start != 0 || d.stored != d.extent || l.padded(k) != d.extent {
                return fail(format!("dimension {k} has padding or unstored coordinates, which CuTe cannot express"));
            }
            let digits: Vec<(i64, i64)> =
                l.digits(Some(k)).iter().filter(|f| f.extent > 1).map(|f| (f.extent as i64, f.stride)).collect();
            modes.push(CuteLayout::from_flat(&digits));
        }
        // One dimension is one mode: a bare integer, or a 1-tuple around its digits (`((2,2)):((2,1))`), which
        // is not the two-dimensional `(2,2):(2,1)`.
        Ok(match modes.len() {
            1 if matches!(modes[0].shape, IntTuple::Int(_)) => modes.pop().unwrap(),
            _ => CuteLayout::concat(modes),
        })
    }
}
