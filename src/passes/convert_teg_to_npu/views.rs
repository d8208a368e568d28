//! View ops (permute, reverse, slice, select, squeeze, unsqueeze, broadcasts, concat, interleave, repeat and
//! constant pads) as copies within HBM, and constant tensors (`zeros`, `ones`, `full`) as fills, read off the op's index maps (the sharding interface): each affine piece
//! of each operand is one DMA whose source and destination walk the piece's index points through the operand's and
//! the result's maps and layouts (HBM-to-HBM transfers take any packet and stride, so a permutation or a reversal
//! is one pattern). Cells no piece writes (a constant pad's border, the padding of the result's rows) are filled
//! from a small constant buffer read with stride 0. The copies cost HBM traffic that views as layouts (no copy)
//! will save.

use super::buffers::partial_groups;
use super::buffers::Tensor;
use super::elementwise::combine;
use super::transfer::split_run;
use super::{lower_op, Lowering};
use crate::array::{DType, Data};
use crate::dialects::npu::access::AccessPattern;
use crate::dialects::npu::dma::{Dma, Memory, Side};
use crate::dialects::npu::ops::instruction::Instruction;
use crate::dialects::npu::ops::memset::Memset;
use crate::dialects::npu::ops::onchip::{Operand, Slices, Space};
use crate::dialects::teg::ops::{decode, Generator, OpKind, PadMode, Reshard, View};
use crate::dialects::teg::tensor_type::as_tensor;
use crate::interfaces::sharding::Monoid;
use crate::interfaces::sharding::{index_maps_of, IndexMaps};
use crate::ir::conversion::{ConversionPattern, ConversionRewriter, OpAdaptor};
use crate::ir::rewrite::Rewriter;
use crate::ir::{Context, OpId};
use crate::passes::resolve_layouts::IN_PLACE_ATTR;
use crate::zspace::{Ipf, ZAffineMap, ZRange};
use std::cell::RefCell;

/// Elements of the constant buffers fills read (enough for any row's padding).
pub const CONSTANT_ELEMS: u64 = 64;

/// The value a view fills the cells no operand gives (a constant pad's), if it has such cells.
pub fn fill_value(view: &View) -> Option<f64> {
    match view {
        View::Pad { mode: PadMode::Constant, value, .. } => Some(*value),
        _ => None,
    }
}

/// `value` as a tensor of `dtype` holds it, converted as the reference converts constants (an `i1` is true for
/// anything but 0, integers truncate and saturate, floats round to nearest), so that a fill writes exactly that.
pub fn held(dtype: DType, value: f64) -> f64 {
    Data::from_f64(dtype, std::iter::once(value)).get_f64(0)
}

/// The value of a constant generator's every cell (`None` for the others).
pub fn constant_value(g: &Generator) -> Option<f64> {
    match g {
        Generator::Zeros => Some(0.0),
        Generator::Ones => Some(1.0),
        Generator::Full(v) => Some(*v),
        _ => None,
    }
}

/// Why the view `op` cannot be lowered, if it cannot.
pub fn check(ctx: &Context, op: OpId, view: &View) -> Result<(), String> {
    let maps = index_maps_of(ctx, op).ok_or("the view has no index maps")?;
    if let View::Pad { mode, .. } = view {
        if *mode != PadMode::Constant {
            return Err("reflect, edge and wrap pads are not lowered yet (their borders are not affine)".into());
        }
    }
    let unit = |ipf: &Ipf| ipf.shape().iter().all(|&e| e == 1);
    if !maps.outputs.iter().all(|(_, o)| unit(o))
        || !maps.inputs.iter().flat_map(|i| &i.1).all(|p| p.affine && unit(&p.ipf))
    {
        return Err("a view whose cells are not each one operand cell is not lowered yet".into());
    }
    Ok(())
}

/// The pattern lowering views.
pub struct Views<'s>(pub &'s RefCell<Lowering>);

impl ConversionPattern for Views<'_> {
    fn name(&self) -> &'static str {
        "Views"
    }

    fn root(&self) -> Option<&'static str> {
        None
    }

    fn match_and_rewrite(&self, op: OpId, _: &OpAdaptor, rw: &mut ConversionRewriter<'_, '_>) -> bool {
        let dtype = rw.ir().body.results(op).next().and_then(|v| as_tensor(rw.ir(), rw.ir().body.value_type(v)));
        let Some(dtype) = dtype.map(|t| t.dtype) else { return false };
        // A view read in place is its operand's buffer (its tensor planned so): nothing to write.
        let view = matches!(decode(rw.ir(), op), Ok(OpKind::View(_)));
        if view && rw.ir().op_attr(op, IN_PLACE_ATTR).is_some() {
            return lower_op(self.0, op, rw, |_, _, _, _| Ok(()));
        }
        let value = match decode(rw.ir(), op) {
            Ok(OpKind::Generate(g)) => constant_value(&g).map(|v| held(dtype, v)),
            _ => None,
        };
        if let Some(value) = value {
            return lower_op(self.0, op, rw, |l, rw, _, r| fill(l, rw, r, value));
        }
        let (fill, combined) = match decode(rw.ir(), op) {
            Ok(OpKind::View(view)) => (fill_value(&view), None),
            Ok(OpKind::Reshard(r)) => (None, r.combine.map(|m| combining(m).expect("checked"))),
            _ => return false,
        };
        let Some(maps) = index_maps_of(rw.ir(), op) else { return false };
        let groups = match decode(rw.ir(), op) {
            Ok(OpKind::Reshard(r)) => partial_groups(rw.ir(), op, &r),
            _ => Vec::new(),
        };
        lower_op(self.0, op, rw, |l, rw, operands, r| match combined {
            Some(f) => combine_partials(l, rw, op, f, &groups, &maps, operands, r),
            None => lower(l, rw, fill.map(|f| held(dtype, f)), &maps, operands, r),
        })
    }
}

fn lower(
    l: &mut Lowering,
    rw: &mut Rewriter<'_>,
    fill: Option<f64>,
    maps: &IndexMaps,
    operands: &[Tensor],
    r: &Tensor,
) -> Result<(), String> {
    let out = &maps.outputs[0].1;
    let index = ZRange::of_shape(&maps.index.iter().map(|d| d.1).collect::<Vec<_>>());
    let pieces: u64 = maps.inputs.iter().map(|i| i.1.len() as u64).sum();
    l.kernel.reserve(pieces + 2 * index.rank() as u64 + 4)?;
    pad_rows(l, rw, r)?;
    if let Some(value) = fill {
        let covered: Vec<ZRange> = maps.inputs.iter().flat_map(|i| &i.1).map(|p| p.domain.clone()).collect();
        for border in difference(&index, &covered) {
            let src = constant(l, rw, r, value)?;
            copy(l, rw, &src, None, r, out, &border)?;
        }
    }
    for (x, (_, pieces)) in operands.iter().zip(&maps.inputs) {
        for piece in pieces.iter().filter(|p| !p.domain.is_empty()) {
            copy(l, rw, x, Some(&piece.ipf), r, out, &piece.domain)?;
        }
    }
    Ok(())
}

/// The vector function combining partial results by `monoid`, if the lowering has one.
fn combining(monoid: Monoid) -> Option<&'static str> {
    match monoid {
        Monoid::Sum => Some("add"),
        Monoid::Max => Some("max"),
        Monoid::Min => Some("min"),
        _ => None,
    }
}

/// Why the reshard `op` cannot be lowered, if it cannot.
pub fn check_reshard(reshard: &Reshard, dtype: DType) -> Result<(), String> {
    match reshard.combine {
        Some(monoid) if combining(monoid).is_none() => {
            Err(format!("partial results combined by '{}' are not lowered yet", monoid.name()))
        }
        Some(_) if !matches!(dtype, DType::F32 | DType::I32 | DType::BF16 | DType::I8) => Err(format!(
            "partial results of {dtype} are not combined on the NPU (its vector unit computes on f32 and i32, bf16 \
             through f32 and i8 through i32)"
        )),
        _ => Ok(()),
    }
}

/// A reshard of partial results: per group of partials of one box, the first copied into the group's
/// accumulator on the reshard's chip and the others (replicated there) combined into it by `f`; then each
/// accumulator's cells copied into the result as the group's first operand's would be.
#[allow(clippy::too_many_arguments)]
fn combine_partials(
    l: &mut Lowering,
    rw: &mut Rewriter<'_>,
    op: OpId,
    f: &'static str,
    groups: &[Vec<usize>],
    maps: &IndexMaps,
    operands: &[Tensor],
    r: &Tensor,
) -> Result<(), String> {
    let accs = l.buffers.accumulators.get(&op).cloned().ok_or("no accumulators were planned for this reshard")?;
    let leaders = IndexMaps { inputs: groups.iter().map(|g| maps.inputs[g[0]].clone()).collect(), ..maps.clone() };
    for (group, acc) in groups.iter().zip(&accs) {
        l.kernel.reserve(1)?;
        copy_tensor(l, rw, &operands[group[0]], acc)?;
        for &i in &group[1..] {
            combine(l, rw, f, acc, &operands[i])?;
        }
    }
    lower(l, rw, None, &leaders, &accs, r)
}

/// Fills all of `r`, its rows' padding too, with `value`.
fn fill(l: &mut Lowering, rw: &mut Rewriter<'_>, r: &Tensor, value: f64) -> Result<(), String> {
    l.kernel.reserve(3)?;
    let src = constant(l, rw, r, value)?;
    copy(l, rw, &src, None, r, &identity(r.dims.len())?, &ZRange::of_shape(&r.space()))
}

/// The identity map of `n` dimensions, each point reading one cell.
fn identity(n: usize) -> Result<Ipf, String> {
    let rows: Vec<Vec<i64>> = (0..n).map(|j| (0..n).map(|i| (i == j) as i64).collect()).collect();
    let map = ZAffineMap::new(n, rows, vec![0; n]).map_err(|e| e.to_string())?;
    Ipf::new(map, vec![1; n]).map_err(|e| e.to_string())
}

/// Copies all of `from` into `to` (the same dimensions, a buffer of rows): the whole buffer at once when both
/// are laid out alike, else cell by cell through both layouts (a view read in place, a source in another
/// layout), the rows' padding too when `from`'s rows are read whole.
pub fn copy_tensor(l: &mut Lowering, rw: &mut Rewriter<'_>, from: &Tensor, to: &Tensor) -> Result<(), String> {
    if from.strides == to.strides && from.offset == to.offset && from.bytes == to.bytes {
        let dma = super::transfer::hbm_copy(from, to, &l.cfg);
        return l.dma(rw, &dma, to.elem);
    }
    l.kernel.reserve(1)?;
    let space = if from.rows { to.space() } else { to.dims.iter().map(|d| d.1).collect() };
    let ipf = identity(to.dims.len())?;
    copy(l, rw, from, Some(&ipf), to, &ipf, &ZRange::of_shape(&space))
}

/// Zeroes the padding of `r`'s rows (no piece writes it; later ops read whole rows).
pub fn pad_rows(l: &mut Lowering, rw: &mut Rewriter<'_>, r: &Tensor) -> Result<(), String> {
    let n = r.dims.len();
    let extent = r.dims[n - 1].1;
    if r.row == extent {
        return Ok(());
    }
    let zeros = constant(l, rw, r, 0.0)?;
    let size = r.elem.bytes() as i64;
    let mut loops: Vec<(u32, i64, i64)> = Vec::new();
    for k in 0..n - 1 {
        if r.dims[k].1 > 1 {
            loops.push((r.dims[k].1 as u32, 0, r.strides[k] * size));
        }
    }
    let packet = ((r.row - extent) * r.elem.bytes()) as u32;
    let start = (r.offset as u64 + extent) * r.elem.bytes();
    let dma = dma(&zeros, 0, r, start, &loops, packet, l.cfg.max_packet_bytes);
    l.dma(rw, &dma, r.elem)
}

/// The constant buffer of `value` in `r`'s element type, written (once) by a memset and a DMA.
fn constant(l: &mut Lowering, rw: &mut Rewriter<'_>, r: &Tensor, value: f64) -> Result<Tensor, String> {
    let key = (r.elem, value.to_bits());
    let t = l.buffers.constants.get(&key).cloned().ok_or("no constant buffer was planned for this value")?;
    if l.constants_written.insert(key) {
        let bytes = (CONSTANT_ELEMS * r.elem.bytes()) as u32;
        let slices = Slices { chip: 0, cluster: 0, first: 0, end: 1 };
        let dst = Operand { space: Space::Dm, pattern: AccessPattern::new(0, &[], bytes) };
        l.compute(rw, &Instruction::Memset(Memset { slices, dst, dtype: r.elem, value }))?;
        let dm =
            Side { memory: Memory::Dm { chip: 0, cluster: 0, slice: 0 }, pattern: AccessPattern::new(0, &[], bytes) };
        let hbm = Side { memory: hbm(&t), pattern: AccessPattern::new(0, &[], bytes) };
        l.dma(rw, &Dma::new(dm, hbm), r.elem)?;
    }
    Ok(t)
}

fn hbm(t: &Tensor) -> Memory {
    t.hbm()
}

/// The DMA copying the cells of index box `domain`: from `x` through `read` (or the constant `x` with stride 0
/// when `read` is `None`) into `r` through `write`.
fn copy(
    l: &mut Lowering,
    rw: &mut Rewriter<'_>,
    x: &Tensor,
    read: Option<&Ipf>,
    r: &Tensor,
    write: &Ipf,
    domain: &ZRange,
) -> Result<(), String> {
    let size = r.elem.bytes() as i64;
    // Element stride per index dimension and the offset at the domain's first point, through a map and a layout.
    let through = |ipf: &Ipf, t: &Tensor| -> Result<(Vec<i64>, i64), String> {
        let (strides, base) = ipf.map().pull_strides(&t.strides, t.offset).ok_or("a view whose offsets overflow")?;
        let first = base + strides.iter().zip(domain.start()).map(|(s, a)| s * a).sum::<i64>();
        Ok((strides, first))
    };
    let (ws, wb) = through(write, r)?;
    let (rs, rb) = match read {
        Some(ipf) => through(ipf, x)?,
        None => (vec![0; ws.len()], 0),
    };
    let shape = domain.shape();
    let mut loops: Vec<(u32, i64, i64)> = Vec::new();
    for d in 0..shape.len() {
        if shape[d] > 1 {
            let count = u32::try_from(shape[d]).map_err(|_| "a view of more than 2^32 cells along one dimension")?;
            loops.push((count, rs[d] * size, ws[d] * size));
        }
    }
    // Loops contiguous on both sides merge into the packet. From a constant, a run of the destination up to the
    // constant's length is one packet (the constant read from its start each time).
    let mut packet = size;
    if read.is_none() {
        if let Some(&(count, 0, d)) = loops.last().filter(|l| l.2 == size) {
            let p = (1..=count.min(CONSTANT_ELEMS as u32)).rev().find(|p| count.is_multiple_of(*p)).unwrap_or(1);
            loops.pop();
            if count / p > 1 {
                loops.push((count / p, 0, d * p as i64));
            }
            packet = size * p as i64;
        }
    }
    while let Some(&(count, s, d)) = loops.last().filter(|_| read.is_some()) {
        if s != packet || d != packet {
            break;
        }
        packet *= count as i64;
        loops.pop();
    }
    let (rb, wb) = (u64::try_from(rb * size).map_err(|_| "a view reading before its operand")?, (wb * size) as u64);
    let max = l.cfg.max_packet_bytes;
    l.dma(rw, &dma(x, rb, r, wb, &loops, packet as u32, max), r.elem)
}

/// An HBM-to-HBM DMA from `x` at `src` to `r` at `dst` over `loops` (count, source stride, destination stride),
/// its packet split under the machine's limit.
fn dma(x: &Tensor, src: u64, r: &Tensor, dst: u64, loops: &[(u32, i64, i64)], packet: u32, max: u64) -> Dma {
    let mut loops = loops.to_vec();
    let (count, packet) = split_run(packet as u64, max, 1);
    if count > 1 {
        loops.push((count as u32, packet as i64, packet as i64));
    }
    let side = |t: &Tensor, base: u64, pick: fn(&(u32, i64, i64)) -> i64| Side {
        memory: hbm(t),
        pattern: AccessPattern::new(base, &loops.iter().map(|l| (l.0, pick(l))).collect::<Vec<_>>(), packet as u32),
    };
    Dma::new(side(x, src, |l| l.1), side(r, dst, |l| l.2))
}

/// The boxes of `whole` no box of `parts` covers (a box minus each part in turn, cut along each dimension).
fn difference(whole: &ZRange, parts: &[ZRange]) -> Vec<ZRange> {
    let mut out = vec![whole.clone()];
    for part in parts {
        let mut next = Vec::new();
        for b in out {
            let Some(cut) = b.intersect(part).filter(|c| !c.is_empty()) else {
                next.push(b);
                continue;
            };
            let (mut start, mut end) = (b.start().to_vec(), b.end().to_vec());
            for d in 0..b.rank() {
                for (lo, hi) in [(start[d], cut.start()[d]), (cut.end()[d], end[d])] {
                    if lo < hi {
                        let (mut s, mut e) = (start.clone(), end.clone());
                        (s[d], e[d]) = (lo, hi);
                        next.push(ZRange::new(s, e).expect("a box"));
                    }
                }
                (start[d], end[d]) = (cut.start()[d], cut.end()[d]);
            }
        }
        out = next;
    }
    out
}
