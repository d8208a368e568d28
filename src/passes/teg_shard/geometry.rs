//! The geometry of a split: an op's shards (a piece per split index dimension), the devices computing each, the
//! boxes they read (clipped to the operand, with the border a convolution's windows pad) and the types they make.

use super::MAX_SHARDS;
use crate::dialects::teg::shard_plan::Placement;
use crate::dialects::teg::tensor_type::{as_tensor, TensorType};
use crate::interfaces::sharding::IndexMaps;
use crate::ir::{Context, ValueId};
use crate::machine::Machine;
use crate::shard::Plan;
use crate::zspace::ZRange;
use std::collections::BTreeMap;

/// Each non-empty shard of `plan`'s index space: its piece per index dimension and its box; an error past
/// [`MAX_SHARDS`](super::MAX_SHARDS).
pub(super) fn shards(
    maps: &IndexMaps,
    placement: &Placement,
    machine: &Machine,
) -> Result<Vec<(Vec<usize>, ZRange)>, String> {
    let (mesh, plan) = (machine.mesh(), &placement.plan);
    let count = plan.0.iter().try_fold(1u64, |n, s| n.checked_mul(s.parts(mesh).max(1)));
    if count.is_none_or(|n| n > MAX_SHARDS) {
        return Err(format!("the plan makes more than MAX_SHARDS ({MAX_SHARDS}) shards of one op"));
    }
    let whole = maps.index_range();
    let pieces: Vec<Vec<ZRange>> = (0..maps.index.len())
        .map(|i| match &placement.sizes[i] {
            Some(sizes) => Ok(cut(&whole, i, sizes)),
            None => whole.split(i, plan.0[i].parts(mesh).max(1)).map_err(|e| e.to_string()),
        })
        .collect::<Result<_, _>>()?;
    let mut out = Vec::new();
    for part in parts(&pieces) {
        let mut index = whole.clone();
        for (i, &k) in part.iter().enumerate() {
            index = index.intersect(&pieces[i][k]).expect("same rank");
        }
        if !index.is_empty() {
            out.push((part, index));
        }
    }
    Ok(out)
}

/// `whole` cut along `dim` into consecutive pieces of `sizes` (which sum to its extent).
fn cut(whole: &ZRange, dim: usize, sizes: &[u64]) -> Vec<ZRange> {
    let mut at = whole.start()[dim];
    let mut out = Vec::with_capacity(sizes.len());
    for &size in sizes {
        let next = at + size as i64; // The sizes sum to the extent, which fits an i64.
        let (mut start, mut end) = (whole.start().to_vec(), whole.end().to_vec());
        (start[dim], end[dim]) = (at, next);
        out.push(ZRange::new(start, end).expect("a piece of a valid range"));
        at = next;
    }
    out
}

/// Every combination of one piece per index dimension, row-major.
pub(super) fn parts(pieces: &[Vec<ZRange>]) -> Vec<Vec<usize>> {
    let mut out = vec![Vec::new()];
    for p in pieces {
        out = out.into_iter().flat_map(|pre| (0..p.len()).map(move |k| [pre.clone(), vec![k]].concat())).collect();
    }
    out
}

/// The ranks of the devices computing each shard, keyed by its piece per index dimension: a device computes the
/// piece its coordinates along the dimension's axes give (mixed radix, mesh order). One pass over the devices.
pub(super) fn ranks_by_part(plan: &Plan, machine: &Machine) -> BTreeMap<Vec<usize>, Vec<usize>> {
    let mesh = machine.mesh();
    let mut out: BTreeMap<Vec<usize>, Vec<usize>> = BTreeMap::new();
    for rank in 0..mesh.num_devices() {
        let coords = mesh.coords(rank).expect("a rank of the mesh");
        let part = plan.0.iter().map(|set| set.axes().fold(0usize, |acc, a| acc * mesh.axes()[a].size + coords[a]));
        out.entry(part.collect()).or_default().push(rank);
    }
    out
}

/// `t` with the extents of `b`.
pub(super) fn resized(t: &TensorType, b: &ZRange) -> TensorType {
    let dims = t.dims.iter().zip(b.shape()).map(|((n, _), e)| (n.clone(), e)).collect();
    TensorType { dims, dtype: t.dtype }
}

/// A box inside an operand, and per dimension the cells a read box had before and after it.
pub(super) type Clipped = (ZRange, Vec<(u64, u64)>);

/// The part of box `read` inside `v`'s extents, and per dimension the cells of `read` before and after it (the
/// padding a convolution's window reads at the border); `None` when the box is all border (a window wholly in the
/// padding).
pub(super) fn clip(ctx: &Context, v: ValueId, read: &ZRange) -> Result<Option<Clipped>, String> {
    let t = as_tensor(ctx, ctx.body.value_type(v)).ok_or("an operand is not a tensor")?;
    let whole = ZRange::of_shape(&t.shape());
    let Some(inside) = read.intersect(&whole).filter(|r| !r.is_empty()) else { return Ok(None) };
    let border = (0..read.rank())
        .map(|j| ((inside.start()[j] - read.start()[j]) as u64, (read.end()[j] - inside.end()[j]) as u64))
        .collect();
    Ok(Some((inside, border)))
}
