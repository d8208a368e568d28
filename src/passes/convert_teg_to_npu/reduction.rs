//! Reductions (`teg.reduce` by `sum`, `max`, `min`, or `mean` on f32 and bf16, through f32; unmasked) on the vector
//! unit. The index space is the result's dimensions, then the reduced ones; tiles cut the kept dimensions, and each
//! tile walks the reduced ones in chunks that fit data memory (the first reduced into the result, the others into a
//! partial the vector unit combines with it), so each result element is one row of `npu.vec.reduce` per chunk, which
//! reads the operand's box in that order through its access pattern (whatever the operand's layout). Results go to the
//! accumulator, laid out as the result's tile in memory (rows padded, the padding zeroed first when the tile leaves
//! some), a `mean` divides there by the count, and a move and a DMA take the tile out.

use super::buffers::Tensor;
use super::elementwise::{cast, out_of_acc, widened};
use super::operand::{operand_box, read_pattern, Input};
use super::tiles::{runs, Tile, Tiling, CHUNK_ALIGN};
use super::transfer::{box_dma, dm_box, dm_bytes};
use super::{lower_op, Lowering};
use crate::array::DType;
use crate::dialects::npu::access::AccessPattern;
use crate::dialects::npu::ops::instruction::Instruction;
use crate::dialects::npu::ops::memset::Memset;
use crate::dialects::npu::ops::onchip::{Operand, Slices, Space};
use crate::dialects::npu::ops::reduce::Reduce as NpuReduce;
use crate::dialects::npu::ops::vector::{Rhs, Vector};
use crate::dialects::teg::ops::{decode, Monoid, OpKind, Reduce};
use crate::dialects::teg::tensor_type::as_tensor;
use crate::ir::conversion::{ConversionPattern, ConversionRewriter, OpAdaptor};
use crate::ir::rewrite::Rewriter;
use crate::ir::{Context, OpId};
use crate::machine::ElemType;
use std::cell::RefCell;

/// Most slices one reduction's tiles spread over.
const MAX_SLICES: u64 = 64;
/// Tiles are not made smaller than this many bytes of operand to occupy more slices.
const MIN_TILE_BYTES: u64 = 32 << 10;

/// Why the reduction `op` cannot be lowered, if it cannot.
pub fn check(ctx: &Context, op: OpId, r: &Reduce) -> Result<(), String> {
    if ctx.body.operands(op).count() > 1 {
        return Err("a masked 'teg.reduce' is not lowered yet".into());
    }
    let dtype = as_tensor(ctx, ctx.body.value_type(ctx.body.operand(op, 0))).map(|t| t.dtype);
    match (r.monoid, dtype) {
        (Monoid::Prod, _) => {
            Err("the NPU has no product reduction: 'teg.reduce ... by \"prod\"' is not lowered".into())
        }
        (Monoid::Sum | Monoid::Max | Monoid::Min | Monoid::Mean, Some(DType::F32 | DType::BF16)) => Ok(()),
        (Monoid::Sum | Monoid::Max | Monoid::Min, Some(DType::I32 | DType::I8)) => Ok(()),
        (_, t) => Err(format!(
            "'teg.reduce' on {} is not lowered yet (f32 and bf16, and i32 and i8 but for mean)",
            t.map_or("?".into(), |t| t.to_string())
        )),
    }
}

/// The pattern lowering reductions.
pub struct Reductions<'s>(pub &'s RefCell<Lowering>);

impl ConversionPattern for Reductions<'_> {
    fn name(&self) -> &'static str {
        "Reductions"
    }

    fn root(&self) -> Option<&'static str> {
        Some("teg.reduce")
    }

    fn match_and_rewrite(&self, op: OpId, _: &OpAdaptor, rw: &mut ConversionRewriter<'_, '_>) -> bool {
        let Ok(OpKind::Reduce(reduce)) = decode(rw.ir(), op) else { return false };
        lower_op(self.0, op, rw, |l, rw, operands, r| lower(l, rw, &reduce, &operands[0], r))
    }
}

/// Writes `r = reduce(x)`. A bf16 or i8 reduction reduces in f32 or i32 ([`widened`]; wrapping i32 sums keep the
/// i8 sum's low byte): each chunk of `x` is cast to it in data memory first, the accumulator holds it, and the
/// result is narrowed on its way out.
fn lower(l: &mut Lowering, rw: &mut Rewriter<'_>, reduce: &Reduce, x: &Tensor, r: &Tensor) -> Result<(), String> {
    let cfg = l.cfg.clone();
    let wide = widened(x.elem);
    // The result as the accumulator holds it.
    let acc_r = Tensor { elem: wide.unwrap_or(r.elem), ..r.clone() };
    // The index space: the result's dimensions (real extents), then the reduced ones.
    let reduced: Vec<(String, u64)> =
        reduce.dims.iter().map(|d| x.dims.iter().find(|e| &e.0 == d).cloned().expect("a reduced dimension")).collect();
    let dims: Vec<&(String, u64)> = r.dims.iter().chain(&reduced).collect();
    let nk = r.dims.len();
    let space: Vec<u64> = dims.iter().map(|d| d.1).collect();
    let map = |t: &Tensor| dims.iter().map(|d| t.dims.iter().position(|e| e.0 == d.0 && e.1 > 1)).collect();
    let (xi, ri) = (Input { tensor: x.clone(), map: map(x) }, Input { tensor: r.clone(), map: map(r) });
    let rk = Input { tensor: r.clone(), map: ri.map[..nk].to_vec() };
    // The result's tile as the accumulator holds it, each element a row of the reduction.
    let rows_of = |ext: &[u64]| {
        let tile = Tile { start: vec![0; nk], ext: ext.to_vec() };
        let out = dm_box(&acc_r, ext, 0, &cfg);
        let acc_rk = Input { tensor: acc_r.clone(), map: rk.map.clone() };
        (read_pattern(&acc_rk, &tile, &(0..nk).collect::<Vec<_>>(), &out, 0), out.bytes)
    };
    // Two thirds of data memory alternate for the operand's boxes; the last third takes the results out.
    let budget = cfg.dm_slice_bytes / 3 / 8 * 8;
    // Where x's rows lie: a tile fixing them at any index needs room to align the box's start.
    let x_last = xi.map.iter().position(|&j| j == Some(x.dims.len() - 1));
    let slack = match x_last {
        Some(d) if d + 1 != nk && d < nk => cfg.dm_write_align,
        _ => 0,
    };
    let x_bytes = |kept: &[u64], red: &[u64]| {
        let ext: Vec<u64> = kept.iter().chain(red).copied().collect();
        let mut xe = operand_box(&xi, &Tile { start: vec![0; ext.len()], ext }, 0).1;
        *xe.last_mut().expect("a dimension") += slack;
        // A narrow box is followed by its wide copy.
        dm_bytes(x, &xe, &cfg) * (1 + wide.map_or(0, |w| w.bytes() / x.elem.bytes()))
    };
    // Kept tiles: the result and a partial fit the accumulator, a box of the smallest chunk the memory (chunks
    // along x's rows are multiples of CHUNK_ALIGN, so that they start aligned).
    let row_align = |d: usize| if Some(d) == x_last { CHUNK_ALIGN } else { 1 };
    let least: Vec<u64> = (nk..space.len()).map(|d| space[d].min(row_align(d))).collect();
    let kept_bytes = |ext: &[u64]| match 2 * dm_bytes(&acc_r, ext, &cfg) <= cfg.acc_slice_bytes.min(budget) {
        true => x_bytes(ext, &least),
        false => u64::MAX,
    };
    let total = x_bytes(&space[..nk], &space[nk..]);
    let want = (total / MIN_TILE_BYTES).clamp(1, MAX_SLICES);
    // The smallest kept tile (one index, or an aligned piece of the last dimension) must fit the accumulator twice.
    let smallest: Vec<u64> = (0..nk).map(|d| if d + 1 == nk { space[d].min(CHUNK_ALIGN) } else { 1 }).collect();
    let acc = 2 * dm_bytes(&acc_r, &smallest, &cfg);
    if acc > cfg.acc_slice_bytes.min(budget) {
        return Err(format!(
            "a tile of the result and its partial take {acc} B, more than the accumulator's {} B per slice",
            cfg.acc_slice_bytes
        ));
    }
    let tiling = Tiling::choose(&space[..nk], &kept_bytes, budget, want, CHUNK_ALIGN)?;
    l.kernel.reserve(tiling.count().saturating_mul(4))?;
    let tiles = tiling.tiles();
    let slices = cfg.slices_per_cluster.clamp(1, MAX_SLICES) as usize;
    let count: u64 = space[nk..].iter().product();
    for wave in tiles.chunks(slices) {
        // The chunks must fit every tile of the wave: the largest extent of each kept dimension (a wave may hold
        // the short tiles at a dimension's end with whole ones).
        let kept: Vec<u64> = (0..nk).map(|d| wave.iter().map(|t| t.ext[d]).max().unwrap_or(1)).collect();
        let align = row_align(space.len() - 1);
        let chunking = Tiling::choose(&space[nk..], &|red| x_bytes(&kept, red), budget, 1, align)?;
        // Per chunk and tile: a DMA, a reduction and a combination.
        l.kernel.reserve(chunking.count().saturating_mul(3 * wave.len() as u64))?;
        let chunks = chunking.tiles();
        for (c, chunk) in chunks.iter().enumerate() {
            let base = (l.waves % 2) * budget;
            l.waves += 1;
            let mut reads = Vec::with_capacity(wave.len());
            let mut end = base;
            for (slice, tile) in wave.iter().enumerate() {
                let t = Tile {
                    start: tile.start.iter().chain(&chunk.start).copied().collect(),
                    ext: tile.ext.iter().chain(&chunk.ext).copied().collect(),
                };
                let (start, ext, skip) = operand_box(&xi, &t, cfg.dm_write_align);
                let dm = dm_box(x, &ext, base, &cfg);
                end = end.max(base + dm.bytes);
                let memory = l.dm(slice as u64);
                l.dma(rw, &box_dma(x, &start, &ext, &dm, memory, true, &cfg), x.elem)?;
                let order: Vec<usize> = (0..space.len()).collect();
                reads.push((read_pattern(&xi, &t, &order, &dm, skip), t.ext[..nk].to_vec(), dm.bytes));
            }
            let scratch = end.div_ceil(8) * 8;
            for (first, last) in runs(&reads) {
                let slices = l.slices(first, last);
                let (src, ext, bytes) = &reads[first as usize];
                let src = match wide {
                    Some(to) => widen_box(l, rw, slices, src, (base, *bytes), scratch, (x.elem, to))?,
                    None => src.clone(),
                };
                let (rows, bytes) = rows_of(ext);
                let step = Chunk { first: c == 0, src, rows, bytes };
                reduce_chunk(l, rw, reduce, slices, &step, &acc_r)?;
            }
        }
        for (first, end) in runs(&wave.iter().map(|t| &t.ext).collect::<Vec<_>>()) {
            let slices = l.slices(first, end);
            let (rows, bytes) = rows_of(&wave[first as usize].ext);
            take_out(l, rw, reduce, slices, rows, bytes, count, 2 * budget, &acc_r, r.elem)?;
        }
        for (slice, tile) in wave.iter().enumerate() {
            let (start, ext, _) = operand_box(&rk, tile, 0);
            let dm = dm_box(r, &ext, 2 * budget, &cfg);
            let memory = l.dm(slice as u64);
            l.dma(rw, &box_dma(r, &start, &ext, &dm, memory, false, &cfg), r.elem)?;
        }
    }
    Ok(())
}

/// One chunk of the reduced dimensions on a run of slices: whether it is the first, the pattern reading the
/// operand's box, and the result's real elements in the accumulator (`bytes`: the whole tile with padding).
struct Chunk {
    first: bool,
    src: AccessPattern,
    rows: AccessPattern,
    bytes: u64,
}

/// Reduces a chunk: the first straight into the result's rows (the padding zeroed first if any), the others
/// into a partial after them, combined into the rows.
fn reduce_chunk(
    l: &mut Lowering,
    rw: &mut Rewriter<'_>,
    reduce: &Reduce,
    slices: Slices,
    c: &Chunk,
    r: &Tensor,
) -> Result<(), String> {
    let acc = |p: &AccessPattern| Operand { space: Space::Acc, pattern: p.clone() };
    let kind = match reduce.monoid {
        Monoid::Max => "max",
        Monoid::Min => "min",
        _ => "sum",
    };
    let mut into = c.rows.clone();
    if c.first && c.rows.bytes() != Some(c.bytes) {
        let zero = Memset { slices, dst: acc(&AccessPattern::new(0, &[], c.bytes as u32)), dtype: r.elem, value: 0.0 };
        l.compute(rw, &Instruction::Memset(zero))?;
    }
    if !c.first {
        into.base += c.bytes;
    }
    let dm = Operand { space: Space::Dm, pattern: c.src.clone() };
    let red = NpuReduce { across: false, kind: kind.into(), slices, src: dm, dst: acc(&into), dtype: r.elem };
    l.compute(rw, &Instruction::Reduce(red))?;
    if c.first {
        return Ok(());
    }
    let combine = Vector {
        kind: if kind == "sum" { "add" } else { kind }.into(),
        slices,
        src: acc(&c.rows),
        rhs: Some(Rhs::Operand(acc(&into))),
        dst: acc(&c.rows),
        dtype: r.elem,
    };
    l.compute(rw, &Instruction::Vector(combine))
}

/// After the last chunk: a mean's division, and the move of the tile (`bytes` in the accumulator, padding
/// included) into data memory at `out`, cast to `to`.
#[allow(clippy::too_many_arguments)]
fn take_out(
    l: &mut Lowering,
    rw: &mut Rewriter<'_>,
    reduce: &Reduce,
    slices: Slices,
    rows: AccessPattern,
    bytes: u64,
    count: u64,
    out: u64,
    r: &Tensor,
    to: ElemType,
) -> Result<(), String> {
    let acc = |p: &AccessPattern| Operand { space: Space::Acc, pattern: p.clone() };
    if reduce.monoid == Monoid::Mean {
        let div = Vector {
            kind: "div".into(),
            slices,
            src: acc(&rows),
            rhs: Some(Rhs::Imm(count as f64)),
            dst: acc(&rows),
            dtype: r.elem,
        };
        l.compute(rw, &Instruction::Vector(div))?;
    }
    let all = AccessPattern::new(0, &[], bytes as u32);
    for step in out_of_acc(slices, &all, bytes / r.elem.bytes(), r.elem, out, to) {
        l.compute(rw, &step)?;
    }
    Ok(())
}

/// Casts the box `(base, bytes)` of data memory from `from` to `to` at `at` (element `i` of the box to element `i`
/// there); the pattern reading there what `src` reads in the box.
#[allow(clippy::too_many_arguments)]
fn widen_box(
    l: &mut Lowering,
    rw: &mut Rewriter<'_>,
    slices: Slices,
    src: &AccessPattern,
    (base, bytes): (u64, u64),
    at: u64,
    (from, to): (ElemType, ElemType),
) -> Result<AccessPattern, String> {
    let f = to.bytes() / from.bytes();
    let (box_, wide) = (AccessPattern::new(base, &[], bytes as u32), AccessPattern::new(at, &[], (f * bytes) as u32));
    l.compute(rw, &cast(slices, Space::Dm, &box_, from, wide, to))?;
    let loops: Vec<(u32, i64)> = src.loops.iter().map(|lp| (lp.count, f as i64 * lp.stride)).collect();
    Ok(AccessPattern::new(at + f * (src.base - base), &loops, f as u32 * src.packet))
}
