//! `ZRange`: a half-open box `[start, end)` of integer points, of any rank (rank 0 holds one point), with the
//! splits and intersections sharding needs.

use super::ZError;
use std::fmt;

/// The points `p` with `start[i] ≤ p[i] < end[i]` for every dimension `i`. Empty when some extent is 0; a rank-0
/// range holds exactly one point (the empty coordinate), as a scalar tensor holds one element.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ZRange {
    start: Vec<i64>,
    end: Vec<i64>,
}

impl ZRange {
    /// The range `[start, end)`; `start ≤ end` in every dimension.
    pub fn new(start: Vec<i64>, end: Vec<i64>) -> Result<ZRange, ZError> {
        if start.len() != end.len() {
            return Err(ZError(format!("start has rank {} but end has rank {}", start.len(), end.len())));
        }
        if let Some(i) = (0..start.len()).find(|&i| start[i] > end[i]) {
            return Err(ZError(format!("dimension {i} starts at {} past its end {}", start[i], end[i])));
        }
        Ok(ZRange { start, end })
    }

    /// `[0, shape)`: the range of a tensor of this shape.
    pub fn of_shape(shape: &[u64]) -> ZRange {
        let end = shape.iter().map(|&n| i64::try_from(n).unwrap_or(i64::MAX)).collect();
        ZRange { start: vec![0; shape.len()], end }
    }

    /// The first point.
    pub fn start(&self) -> &[i64] {
        &self.start
    }

    /// One past the last point, per dimension.
    pub fn end(&self) -> &[i64] {
        &self.end
    }

    /// Number of dimensions.
    pub fn rank(&self) -> usize {
        self.start.len()
    }

    /// Extent per dimension.
    pub fn shape(&self) -> Vec<u64> {
        // In i128: a range may span more than i64::MAX (a mixed-sign projection), never more than u64::MAX.
        self.start.iter().zip(&self.end).map(|(&s, &e)| (e as i128 - s as i128) as u64).collect()
    }

    /// Number of points (1 for rank 0), saturating at `u128::MAX`.
    pub fn size(&self) -> u128 {
        self.checked_size().unwrap_or(u128::MAX)
    }

    /// Number of points, or `None` past `u128::MAX` (for decisions that must be exact).
    pub fn checked_size(&self) -> Option<u128> {
        if self.is_empty() {
            return Some(0);
        }
        self.shape().iter().try_fold(1u128, |acc, &n| acc.checked_mul(n as u128))
    }

    /// Whether the range holds no point.
    pub fn is_empty(&self) -> bool {
        self.start.iter().zip(&self.end).any(|(s, e)| s == e)
    }

    /// Whether `p` lies in the range.
    pub fn contains(&self, p: &[i64]) -> bool {
        p.len() == self.rank() && p.iter().enumerate().all(|(i, &x)| self.start[i] <= x && x < self.end[i])
    }

    /// Whether every point of `other` lies in the range (an empty `other` of the same rank always does).
    pub fn contains_range(&self, other: &ZRange) -> bool {
        other.rank() == self.rank()
            && (other.is_empty()
                || (0..self.rank()).all(|i| self.start[i] <= other.start[i] && other.end[i] <= self.end[i]))
    }

    /// The points in both ranges (`None` if the ranks differ).
    pub fn intersect(&self, other: &ZRange) -> Option<ZRange> {
        if other.rank() != self.rank() {
            return None;
        }
        let start: Vec<i64> = (0..self.rank()).map(|i| self.start[i].max(other.start[i])).collect();
        let end: Vec<i64> = (0..self.rank()).map(|i| self.end[i].min(other.end[i]).max(start[i])).collect();
        Some(ZRange { start, end })
    }

    /// Whether the ranges share a point.
    pub fn overlaps(&self, other: &ZRange) -> bool {
        self.intersect(other).is_some_and(|r| !r.is_empty())
    }

    /// The range cut along `dim` into `parts` consecutive pieces, as even as possible: each piece has
    /// `ceil(n / parts)` points except the last ones, which may be shorter (or empty when `parts > n`).
    pub fn split(&self, dim: usize, parts: u64) -> Result<Vec<ZRange>, ZError> {
        self.check_dim(dim)?;
        if parts == 0 {
            return Err(ZError("cannot split into 0 parts".into()));
        }
        let n = (self.end[dim] - self.start[dim]) as u64;
        self.chunks(dim, n.div_ceil(parts).max(1), parts)
    }

    /// The range cut along `dim` into pieces of `chunk` points (the last one shorter when `chunk` does not divide
    /// the extent): `ceil(n / chunk)` pieces.
    pub fn split_chunks(&self, dim: usize, chunk: u64) -> Result<Vec<ZRange>, ZError> {
        self.check_dim(dim)?;
        if chunk == 0 {
            return Err(ZError("cannot split into chunks of 0".into()));
        }
        let n = (self.end[dim] - self.start[dim]) as u64;
        self.chunks(dim, chunk, n.div_ceil(chunk).max(1))
    }

    fn chunks(&self, dim: usize, chunk: u64, count: u64) -> Result<Vec<ZRange>, ZError> {
        let chunk = i64::try_from(chunk).map_err(|_| ZError("chunk too large".into()))?;
        let mut out = Vec::with_capacity(count as usize);
        let mut at = self.start[dim];
        for _ in 0..count {
            let next = at.saturating_add(chunk).min(self.end[dim]);
            let mut piece = self.clone();
            (piece.start[dim], piece.end[dim]) = (at, next);
            out.push(piece);
            at = next;
        }
        Ok(out)
    }

    fn check_dim(&self, dim: usize) -> Result<(), ZError> {
        match dim < self.rank() {
            true => Ok(()),
            false => Err(ZError(format!("no dimension {dim} in a rank-{} range", self.rank()))),
        }
    }

    /// Every point, first dimension slowest (row-major). Meant for small ranges (tests, reference checks).
    pub fn points(&self) -> impl Iterator<Item = Vec<i64>> + '_ {
        let total = if self.is_empty() { 0 } else { self.size() };
        (0..total).map(move |mut i| {
            let mut p = self.start.clone();
            for d in (0..self.rank()).rev() {
                let n = (self.end[d] - self.start[d]) as u128;
                p[d] += (i % n) as i64;
                i /= n;
            }
            p
        })
    }
}

impl fmt::Display for ZRange {
    /// `zr[2:4, 3:5]` (`zr[]` for rank 0).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dims: Vec<String> = self.start.iter().zip(&self.end).map(|(s, e)| format!("{s}:{e}")).collect();
        write!(f, "zr[{}]", dims.join(", "))
    }
}
