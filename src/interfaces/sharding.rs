//! The sharding interface: an op's signature, an index space of named dimensions, one index projection function
//! (IPF, `crate::zspace::Ipf`) per operand and result, and the index dimensions it reduces with their monoid
//! (the Tapestry whitepaper's block operator signature; MLIR's `ShardingInterface` has the same data as iterator
//! types, indexing maps and reduction kinds). Sharding rewrites split an op along its index space and know from
//! the IPFs which slice of each operand a shard reads; the cost model sizes those slices.

use crate::array::DType;
use crate::ir::{Context, OpId};
use crate::zspace::{Ipf, ZError, ZRange};

/// The monoid of a reduction.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Monoid {
    /// `+`, identity 0.
    Sum,
    /// `·`, identity 1.
    Prod,
    /// `max`, identity −∞ (the type's minimum for integers).
    Max,
    /// `min`, identity +∞ (the type's maximum for integers).
    Min,
    /// `+` then a division by the number of cells reduced.
    Mean,
}

impl Monoid {
    /// The monoid spelled `name`.
    pub fn from_name(name: &str) -> Option<Monoid> {
        Some(match name {
            "sum" => Monoid::Sum,
            "prod" => Monoid::Prod,
            "max" => Monoid::Max,
            "min" => Monoid::Min,
            "mean" => Monoid::Mean,
            _ => return None,
        })
    }

    /// Its identity for floats (also what an empty float reduction gives).
    pub fn identity_f64(self) -> f64 {
        match self {
            Monoid::Sum | Monoid::Mean => 0.0,
            Monoid::Prod => 1.0,
            Monoid::Max => f64::NEG_INFINITY,
            Monoid::Min => f64::INFINITY,
        }
    }

    /// Its identity for an integer or boolean element type: `max` starts at the type's least value, `min` at its
    /// greatest (so `max` over `i1` is "any", `min` "all").
    pub fn identity_int(self, dtype: DType) -> i64 {
        let (least, greatest) = dtype.int_range().unwrap_or((i64::MIN, i64::MAX));
        match self {
            Monoid::Sum | Monoid::Mean => 0,
            Monoid::Prod => 1,
            Monoid::Max => least,
            Monoid::Min => greatest,
        }
    }

    /// Combines two float partial results (NaN wins `max` and `min`, as NumPy's `maximum`; `mean` combines sums).
    pub fn combine_f64(self, a: f64, b: f64) -> f64 {
        match self {
            Monoid::Sum | Monoid::Mean => a + b,
            Monoid::Prod => a * b,
            Monoid::Max | Monoid::Min if a.is_nan() || b.is_nan() => f64::NAN,
            Monoid::Max => a.max(b),
            Monoid::Min => a.min(b),
        }
    }

    /// Combines two integer partial results (sums and products wrap, as NumPy's do).
    pub fn combine_int(self, a: i64, b: i64) -> i64 {
        match self {
            Monoid::Sum | Monoid::Mean => a.wrapping_add(b),
            Monoid::Prod => a.wrapping_mul(b),
            Monoid::Max => a.max(b),
            Monoid::Min => a.min(b),
        }
    }

    /// Its spelling.
    pub fn name(self) -> &'static str {
        match self {
            Monoid::Sum => "sum",
            Monoid::Prod => "prod",
            Monoid::Max => "max",
            Monoid::Min => "min",
            Monoid::Mean => "mean",
        }
    }
}

/// A block operator's signature.
#[derive(Clone, Debug, PartialEq)]
pub struct Signature {
    /// The index space: `(name, extent)` per dimension.
    pub index: Vec<(String, u64)>,
    /// Per input, its name and IPF.
    pub inputs: Vec<(String, Ipf)>,
    /// Per output, its name and IPF.
    pub outputs: Vec<(String, Ipf)>,
    /// The index dimensions reduced, with their monoid.
    pub reductions: Vec<(usize, Monoid)>,
}

impl Signature {
    /// The index range `[0, extents)`.
    pub fn index_range(&self) -> ZRange {
        ZRange::of_shape(&self.index.iter().map(|d| d.1).collect::<Vec<_>>())
    }
}

/// How an op reads one operand over a part of its index space.
#[derive(Clone, Debug, PartialEq)]
pub struct Piece {
    /// The index points of this part.
    pub domain: ZRange,
    /// The box of the operand each of those points reads.
    pub ipf: Ipf,
    /// Whether `ipf` is exact. False where the op reads through a map that is not affine (the border of a
    /// reflect or wrap pad): `ipf` then gives a box that contains every cell read.
    pub affine: bool,
}

/// An op's index maps: its index space, how it reads each operand (piecewise: a concat reads each operand over
/// its own part of the index space, a constant pad reads nothing in its border), how it writes each result, and
/// the index dimensions it reduces. A block operator's [`Signature`] is the case of one affine piece per input.
#[derive(Clone, Debug, PartialEq)]
pub struct IndexMaps {
    /// The index space: `(name, extent)` per dimension.
    pub index: Vec<(String, u64)>,
    /// Per operand, its name and pieces (none: the op reads nothing of it).
    pub inputs: Vec<(String, Vec<Piece>)>,
    /// Per result, its name and IPF.
    pub outputs: Vec<(String, Ipf)>,
    /// The index dimensions reduced, with their monoid.
    pub reductions: Vec<(usize, Monoid)>,
}

impl IndexMaps {
    /// A signature's maps: each input read through its IPF over the whole index space.
    pub fn from_signature(sig: Signature) -> IndexMaps {
        let whole = sig.index_range();
        let piece = |ipf: Ipf| vec![Piece { domain: whole.clone(), ipf, affine: true }];
        IndexMaps {
            inputs: sig.inputs.into_iter().map(|(name, ipf)| (name, piece(ipf))).collect(),
            index: sig.index,
            outputs: sig.outputs,
            reductions: sig.reductions,
        }
    }

    /// The index range `[0, extents)`.
    pub fn index_range(&self) -> ZRange {
        ZRange::of_shape(&self.index.iter().map(|d| d.1).collect::<Vec<_>>())
    }

    /// Per operand, the bounding box of the cells the op reads to compute the box `out` of result `k` (`None`
    /// where it reads none): what a shard computing `out` needs of each operand.
    pub fn input_boxes(&self, k: usize, out: &ZRange) -> Result<Vec<Option<ZRange>>, ZError> {
        let points = self.outputs[k].1.preimage(out, &self.index_range())?;
        self.inputs
            .iter()
            .map(|(_, pieces)| {
                let mut bound: Option<ZRange> = None;
                for piece in pieces {
                    let part = piece.domain.intersect(&points).filter(|p| !p.is_empty());
                    if let Some(part) = part {
                        let read = piece.ipf.project(&part)?;
                        bound = Some(bound.map_or(read.clone(), |b| hull(&b, &read)));
                    }
                }
                Ok(bound)
            })
            .collect()
    }
}

/// The smallest range holding both (of one rank).
fn hull(a: &ZRange, b: &ZRange) -> ZRange {
    let start = a.start().iter().zip(b.start()).map(|(x, y)| *x.min(y)).collect();
    let end = a.end().iter().zip(b.end()).map(|(x, y)| *x.max(y)).collect();
    ZRange::new(start, end).expect("the hull of two ranges is a range")
}

/// The interface: an op's signature and index maps.
pub trait ShardingInterface: Sync {
    /// The signature of `op`, if it is a block operator with one in its current types (`None` for other ops
    /// and for an op it cannot describe, such as one that does not verify).
    fn signature(&self, ctx: &Context, op: OpId) -> Option<Signature>;

    /// The index maps of `op`: by default its signature's.
    fn index_maps(&self, ctx: &Context, op: OpId) -> Option<IndexMaps> {
        self.signature(ctx, op).map(IndexMaps::from_signature)
    }
}

/// The signature of `op` through its sharding interface, if it implements one.
pub fn signature_of(ctx: &Context, op: OpId) -> Option<Signature> {
    ctx.op_interface::<dyn ShardingInterface>(op)?.signature(ctx, op)
}

/// The index maps of `op` through its sharding interface, if it implements one.
pub fn index_maps_of(ctx: &Context, op: OpId) -> Option<IndexMaps> {
    ctx.op_interface::<dyn ShardingInterface>(op)?.index_maps(ctx, op)
}
