//! DMAs of the lowering: a box of a tensor between its HBM buffer and one slice's data memory, where it is kept
//! dense (row-major over the box, its last extent rounded up to `dm_write_align` elements), and whole buffers
//! copied within HBM. Boxes start on multiples of the alignment along the last dimension (the tiling sees to it)
//! and buffers hold padded rows, so every packet is aligned and inside its buffer.

use super::buffers::Tensor;
use crate::dialects::npu::access::AccessPattern;
use crate::dialects::npu::dma::{Dma, Memory, Side};
use crate::machine::{ElemType, NpuConfig};

/// A box of a tensor in one slice's data memory: where it starts and the byte stride of each of its dimensions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DmBox {
    /// Byte address in the slice's DM.
    pub base: u64,
    /// Byte stride of each dimension of the tensor (dense over the box).
    pub strides: Vec<i64>,
    /// Bytes it takes.
    pub bytes: u64,
}

/// The dense DM form of the box `ext` of `t` at `base`: its last extent rounded up to the alignment.
pub fn dm_box(t: &Tensor, ext: &[u64], base: u64, cfg: &NpuConfig) -> DmBox {
    let size = t.elem.bytes() as i64;
    let mut strides = vec![0i64; ext.len()];
    let mut inner = size * round_up(ext[ext.len() - 1], cfg.dm_write_align) as i64;
    strides[ext.len() - 1] = size;
    for k in (0..ext.len() - 1).rev() {
        strides[k] = inner;
        inner *= ext[k] as i64;
    }
    DmBox { base, strides, bytes: inner as u64 }
}

/// Bytes the dense DM form of box `ext` of `t` takes.
pub fn dm_bytes(t: &Tensor, ext: &[u64], cfg: &NpuConfig) -> u64 {
    dm_box(t, ext, 0, cfg).bytes
}

/// The DMA moving box `[start, start + ext)` of `t` between its buffer and `dm` (into DM when `to_dm`), its
/// rows rounded up to `dm_write_align` elements.
pub fn box_dma(t: &Tensor, start: &[u64], ext: &[u64], dm: &DmBox, slice: Memory, to_dm: bool, cfg: &NpuConfig) -> Dma {
    rows_dma(t, start, ext, dm, slice, to_dm, cfg.dm_write_align, cfg)
}

/// The elements a tile of a contraction's or convolution's result columns comes in: whole groups of the TRF's
/// lanes and whole aligned DM rows (`padded_row` pads rows to `dm_write_align` elements; both divide 8, so the
/// larger is a multiple of the other), so that the tile's DMA out writes inside the result's row.
pub fn column_step(cfg: &NpuConfig) -> u64 {
    cfg.trf_lanes.max(cfg.dm_write_align).max(1)
}

/// The elements a DM row of `elem` is rounded up to so that it is a whole number of aligned bytes.
pub fn row_unit(elem: ElemType, cfg: &NpuConfig) -> u64 {
    let (align, size) = (cfg.dm_write_align.max(1), elem.bytes().max(1));
    let gcd = (1..=align.min(size)).rev().find(|g| align % g == 0 && size % g == 0).unwrap_or(1);
    align / gcd
}

/// [`box_dma`] with rows rounded up to `unit` elements (which keeps packets aligned: a multiple of
/// [`row_unit`]).
#[allow(clippy::too_many_arguments)]
pub fn rows_dma(
    t: &Tensor,
    start: &[u64],
    ext: &[u64],
    dm: &DmBox,
    slice: Memory,
    to_dm: bool,
    unit: u64,
    cfg: &NpuConfig,
) -> Dma {
    let size = t.elem.bytes();
    let n = ext.len();
    let first = start.iter().zip(&t.strides).map(|(&s, &st)| s as i64 * st).sum::<i64>() + t.offset;
    let offset = u64::try_from(first).expect("a box of a tensor starts inside its buffer") * size;
    let mut loops: Vec<(u32, i64, i64)> = Vec::new();
    for ((&e, &stride), &dm_stride) in ext[..n - 1].iter().zip(&t.strides).zip(&dm.strides) {
        if e > 1 {
            loops.push((e as u32, stride * size as i64, dm_stride));
        }
    }
    // Rows contiguous on both sides make one run, cut into packets the machine takes.
    let mut run = round_up(ext[n - 1], unit) * size;
    while let Some(&(count, hbm, dm)) = loops.last() {
        if hbm != run as i64 || dm != run as i64 {
            break;
        }
        run *= count as u64;
        loops.pop();
    }
    let (count, packet) = split_run(run, cfg.max_packet_bytes, cfg.dm_write_align);
    if count > 1 {
        loops.push((count as u32, packet as i64, packet as i64));
    }
    let hbm = Side {
        memory: t.hbm(),
        pattern: AccessPattern::new(offset, &loops.iter().map(|l| (l.0, l.1)).collect::<Vec<_>>(), packet as u32),
    };
    let dm = Side {
        memory: slice,
        pattern: AccessPattern::new(dm.base, &loops.iter().map(|l| (l.0, l.2)).collect::<Vec<_>>(), packet as u32),
    };
    if to_dm {
        Dma::new(hbm, dm)
    } else {
        Dma::new(dm, hbm)
    }
}

/// The DMA copying the whole of `from`'s buffer into `to`'s (of the same size), within HBM.
pub fn hbm_copy(from: &Tensor, to: &Tensor, cfg: &NpuConfig) -> Dma {
    let (count, packet) = split_run(from.bytes, cfg.max_packet_bytes, 1);
    let side = |t: &Tensor| Side {
        memory: t.hbm(),
        pattern: AccessPattern::new(0, &[(count as u32, packet as i64)], packet as u32),
    };
    Dma::new(side(from), side(to))
}

/// A run of `bytes` as `count` packets of at most `max` bytes, each a multiple of `unit` (the DM write alignment;
/// 1 within HBM): the largest such divisor of the run.
pub fn split_run(bytes: u64, max: u64, unit: u64) -> (u64, u64) {
    if bytes <= max {
        return (1, bytes);
    }
    let unit = unit.max(1);
    let best = (1..=max / unit).rev().map(|d| d * unit).find(|&p| bytes.is_multiple_of(p)).unwrap_or(unit);
    (bytes / best, best)
}

/// `x` rounded up to a multiple of `unit`.
pub fn round_up(x: u64, unit: u64) -> u64 {
    x.div_ceil(unit.max(1)) * unit.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_split_into_aligned_packets_under_the_limit() {
        assert_eq!(split_run(64, 4096, 8), (1, 64));
        assert_eq!(split_run(8192, 4096, 8), (2, 4096));
        assert_eq!(split_run(12000, 4096, 8), (3, 4000));
        assert_eq!(split_run(8 * 1031, 4096, 8), (1031, 8));
        assert_eq!(split_run(4116, 4096, 4), (3, 1372));
        assert_eq!(split_run(4116, 4096, 1), (2, 2058));
    }
}
