//! An operand of a tiled op: its tensor and, per dimension of the op's index space, its own dimension there
//! (or none, where it broadcasts); the box of it a tile needs, brought into DM dense; and the access pattern an
//! instruction reads it with there, in whatever order of the index space the instruction wants its elements.

use super::buffers::Tensor;
use super::tiles::Tile;
use super::transfer::DmBox;
use crate::dialects::npu::access::AccessPattern;

/// An operand and, per dimension of the index space, its dimension there (`None` where it broadcasts).
pub struct Input {
    /// The tensor.
    pub tensor: Tensor,
    /// Per index dimension, the tensor's dimension it reads.
    pub map: Vec<Option<usize>>,
}

/// Broadcasting by name: result dimension `d` reads operand dimension `j` of the same name and extent.
pub fn map_dims(result: &Tensor, operand: &Tensor) -> Vec<Option<usize>> {
    let mut map: Vec<Option<usize>> = result
        .dims
        .iter()
        .map(|(name, extent)| operand.dims.iter().position(|(n, e)| n == name && e == extent && *e > 1))
        .collect();
    // The padded rows line up when both have the result's last dimension.
    let last = result.dims.len() - 1;
    if result.dims[last].1 == 1 && operand.dims.last() == result.dims.last() {
        map[last] = Some(operand.dims.len() - 1);
    }
    map
}

/// The box of operand `x` that `tile` reads, its last dimension's start aligned down to `align` elements (when
/// `align > 0`): its start, its extents and how many elements the alignment added before the tile's first.
pub fn operand_box(x: &Input, tile: &Tile, align: u64) -> (Vec<u64>, Vec<u64>, u64) {
    let n = x.tensor.dims.len();
    let (mut start, mut ext) = (vec![0u64; n], vec![1u64; n]);
    for (d, j) in x.map.iter().enumerate() {
        if let Some(j) = *j {
            start[j] = tile.start[d];
            ext[j] = tile.ext[d];
        }
    }
    let skip = if align > 0 { start[n - 1] % align } else { 0 };
    start[n - 1] -= skip;
    ext[n - 1] += skip;
    (start, ext, skip)
}

/// The pattern reading operand `x`'s box `dm` (brought in with `skip` elements before the tile's first) over
/// the index dimensions `order` of `tile`, the last fastest (stride 0 where it broadcasts), contiguous inner
/// dimensions merged into the packet.
pub fn read_pattern(x: &Input, tile: &Tile, order: &[usize], dm: &DmBox, skip: u64) -> AccessPattern {
    let size = x.tensor.elem.bytes() as i64;
    let mut loops: Vec<(u32, i64)> = Vec::new();
    for &d in order {
        let e = tile.ext[d];
        if e > 1 {
            loops.push((e as u32, x.map[d].map_or(0, |j| dm.strides[j])));
        }
    }
    let mut packet = size;
    while let Some(&(count, stride)) = loops.last() {
        if stride != packet {
            break;
        }
        packet *= count as i64;
        loops.pop();
    }
    AccessPattern::new(dm.base + skip * size as u64, &loops, packet as u32)
}
