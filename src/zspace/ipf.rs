//! Integer affine maps and index projection functions (IPFs): an IPF sends a point of a block operator's index
//! space to the box of a tensor it reads or writes, `[A·p + b, A·p + b + s)`.

use super::range::ZRange;
use super::ZError;
use std::fmt;

/// `p ↦ A·p + b` on integer points. `matrix` is stored row by row, one row per output (tensor) dimension and one
/// column per input (index) dimension.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ZAffineMap {
    matrix: Vec<Vec<i64>>,
    offset: Vec<i64>,
    inputs: usize,
}

impl ZAffineMap {
    /// The map with rows `matrix` (each of `inputs` coefficients) and `offset` (one per row).
    pub fn new(inputs: usize, matrix: Vec<Vec<i64>>, offset: Vec<i64>) -> Result<ZAffineMap, ZError> {
        if matrix.len() != offset.len() {
            return Err(ZError(format!("{} rows but {} offsets", matrix.len(), offset.len())));
        }
        if let Some(r) = matrix.iter().position(|row| row.len() != inputs) {
            return Err(ZError(format!("row {r} has {} coefficients, not {inputs}", matrix[r].len())));
        }
        Ok(ZAffineMap { matrix, offset, inputs })
    }

    /// Number of input (index) dimensions.
    pub fn inputs(&self) -> usize {
        self.inputs
    }

    /// Number of output (tensor) dimensions.
    pub fn outputs(&self) -> usize {
        self.matrix.len()
    }

    /// Coefficient of input `i` in output `j`.
    pub fn coef(&self, j: usize, i: usize) -> i64 {
        self.matrix[j][i]
    }

    /// The constant of output `j`.
    pub fn offset(&self, j: usize) -> i64 {
        self.offset[j]
    }

    /// The strided function `p ↦ base + Σ strides·(A·p + b)` written as `p ↦ base' + Σ strides'·p`: the element
    /// strides and offset of a tensor laid out with `strides` and `base`, read through this map (a view's layout
    /// from its operand's); `None` on overflow.
    pub fn pull_strides(&self, strides: &[i64], base: i64) -> Option<(Vec<i64>, i64)> {
        let dot = |column: &mut dyn Iterator<Item = i64>| -> Option<i64> {
            column.zip(strides).try_fold(0i64, |acc, (a, &s)| acc.checked_add(a.checked_mul(s)?))
        };
        let pulled = (0..self.inputs).map(|i| dot(&mut self.matrix.iter().map(|row| row[i]))).collect::<Option<_>>()?;
        let base = base.checked_add(dot(&mut self.offset.iter().copied())?)?;
        Some((pulled, base))
    }

    /// `A·p + b`, or an error if `p` has the wrong rank or the result overflows `i64`.
    pub fn apply(&self, p: &[i64]) -> Result<Vec<i64>, ZError> {
        if p.len() != self.inputs {
            return Err(ZError(format!("a rank-{} point for a map of {} inputs", p.len(), self.inputs)));
        }
        (0..self.outputs())
            .map(|j| {
                let v = self.matrix[j].iter().zip(p).map(|(&a, &x)| a as i128 * x as i128).sum::<i128>();
                narrow(v + self.offset[j] as i128)
            })
            .collect()
    }
}

fn narrow(v: i128) -> Result<i64, ZError> {
    i64::try_from(v).map_err(|_| ZError(format!("coordinate {v} overflows 64 bits")))
}

impl fmt::Display for ZAffineMap {
    /// `λx.[[1,0],[0,2]]⋅x + [4,5]` (the Tapestry notation).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rows: Vec<String> = self.matrix.iter().map(|r| format!("{r:?}").replace(' ', "")).collect();
        write!(f, "λx.[{}]⋅x + {:?}", rows.join(","), self.offset)
    }
}

/// An index projection function: index point `p` selects the box `[A·p + b, A·p + b + shape)` of a tensor.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Ipf {
    map: ZAffineMap,
    shape: Vec<u64>,
}

impl Ipf {
    /// The IPF of `map` selecting boxes of `shape` (one extent per map output).
    pub fn new(map: ZAffineMap, shape: Vec<u64>) -> Result<Ipf, ZError> {
        if shape.len() != map.outputs() {
            return Err(ZError(format!("a rank-{} selection for a map of {} outputs", shape.len(), map.outputs())));
        }
        Ok(Ipf { map, shape })
    }

    /// The affine part.
    pub fn map(&self) -> &ZAffineMap {
        &self.map
    }

    /// The selection shape.
    pub fn shape(&self) -> &[u64] {
        &self.shape
    }

    /// The box selected by index point `p`.
    pub fn apply(&self, p: &[i64]) -> Result<ZRange, ZError> {
        let start = self.map.apply(p)?;
        let end =
            start.iter().zip(&self.shape).map(|(&s, &n)| narrow(s as i128 + n as i128)).collect::<Result<_, _>>()?;
        ZRange::new(start, end)
    }

    /// The exact bounding box of the boxes of every point of `index`: each coefficient is projected by its sign
    /// (the smallest and largest of `a·lo` and `a·(hi − 1)`), so mixed-sign rows are exact in time linear in the
    /// rank. An empty index range projects to the empty range at `A·start + b`.
    pub fn project(&self, index: &ZRange) -> Result<ZRange, ZError> {
        if index.rank() != self.map.inputs() {
            return Err(ZError(format!(
                "a rank-{} index range for a map of {} inputs",
                index.rank(),
                self.map.inputs()
            )));
        }
        if index.is_empty() {
            let at = self.map.apply(index.start())?;
            return ZRange::new(at.clone(), at);
        }
        let (lo, hi) = (index.start(), index.end());
        let mut start = Vec::with_capacity(self.map.outputs());
        let mut end = Vec::with_capacity(self.map.outputs());
        for j in 0..self.map.outputs() {
            let (mut min, mut max) = (self.map.offset(j) as i128, self.map.offset(j) as i128);
            for i in 0..self.map.inputs() {
                let a = self.map.coef(j, i) as i128;
                let (x, y) = (a * lo[i] as i128, a * (hi[i] as i128 - 1));
                min += x.min(y);
                max += x.max(y);
            }
            start.push(narrow(min)?);
            end.push(narrow(max + self.shape[j] as i128)?);
        }
        ZRange::new(start, end)
    }

    /// The bounding box of the points of `within` whose boxes meet `target` (a range of the tensor): what a
    /// shard writing `target` must compute. Each row bounds the index dimensions it moves, given the others'
    /// bounds (interval arithmetic, one pass per row), so the box is exact when every row moves at most one index
    /// dimension and conservative otherwise. An empty result is an empty range.
    pub fn preimage(&self, target: &ZRange, within: &ZRange) -> Result<ZRange, ZError> {
        if target.rank() != self.map.outputs() || within.rank() != self.map.inputs() {
            return Err(ZError(format!(
                "a rank-{} target and a rank-{} index range for a map of {} outputs and {} inputs",
                target.rank(),
                within.rank(),
                self.map.outputs(),
                self.map.inputs()
            )));
        }
        let mut lo: Vec<i128> = within.start().iter().map(|&v| v as i128).collect();
        let mut hi: Vec<i128> = within.end().iter().map(|&v| v as i128 - 1).collect();
        let empty = |lo: &[i128]| ZRange::new(narrow_all(lo)?, narrow_all(lo)?);
        if within.is_empty() || target.is_empty() {
            return empty(&lo);
        }
        for j in 0..self.map.outputs() {
            // A·p + b must lie in [target.start - shape + 1, target.end - 1] for the box to meet the target.
            let b = self.map.offset(j) as i128;
            let low = target.start()[j] as i128 - self.shape[j] as i128 + 1 - b;
            let high = target.end()[j] as i128 - 1 - b;
            let term = |i: usize, lo: &[i128], hi: &[i128]| {
                let a = self.map.coef(j, i) as i128;
                ((a * lo[i]).min(a * hi[i]), (a * lo[i]).max(a * hi[i]))
            };
            let sum = |lo: &[i128], hi: &[i128]| {
                (0..self.map.inputs()).map(|i| term(i, lo, hi)).fold((0, 0), |s, t| (s.0 + t.0, s.1 + t.1))
            };
            let (min, max) = sum(&lo, &hi);
            if max < low || min > high {
                return empty(&lo);
            }
            for i in 0..self.map.inputs() {
                let a = self.map.coef(j, i) as i128;
                if a == 0 {
                    continue;
                }
                let (tmin, tmax) = term(i, &lo, &hi);
                // a·p_i lies in [low - (max - tmax), high - (min - tmin)].
                let (l, h) = (low - (max - tmax), high - (min - tmin));
                let (from, to) =
                    if a > 0 { (div_ceil(l, a), div_floor(h, a)) } else { (div_ceil(h, a), div_floor(l, a)) };
                lo[i] = lo[i].max(from);
                hi[i] = hi[i].min(to);
                if lo[i] > hi[i] {
                    return empty(&lo);
                }
            }
        }
        let end: Vec<i128> = hi.iter().map(|&h| h + 1).collect();
        ZRange::new(narrow_all(&lo)?, narrow_all(&end)?)
    }
}

fn narrow_all(v: &[i128]) -> Result<Vec<i64>, ZError> {
    v.iter().map(|&x| narrow(x)).collect()
}

fn div_floor(a: i128, b: i128) -> i128 {
    let q = a / b;
    if a % b != 0 && ((a < 0) != (b < 0)) {
        q - 1
    } else {
        q
    }
}

fn div_ceil(a: i128, b: i128) -> i128 {
    -div_floor(-a, b)
}

impl fmt::Display for Ipf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} : {:?}", self.map, self.shape)
    }
}
