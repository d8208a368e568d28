//! Cell ops on the vector unit. The result's index space (its last dimension padded to the row its layout
//! stores, so padding is computed like data and every row is an aligned packet) is cut into tiles
//! (`tiles`); waves of tiles, one per slice, alternate between two halves of data memory so that a wave's
//! transfers overlap the previous wave's compute. Per tile, each operand's box comes in by DMA and stays dense
//! in DM; the vector instruction reads it in the result's order, a broadcast dimension with stride 0 (so
//! broadcasting by name costs no copy); the result goes back to HBM by DMA.

use super::buffers::npu_elem;
use super::buffers::Tensor;
use super::operand::{map_dims, operand_box, read_pattern, Input};
use super::tiles::{runs, Tile, Tiling, CHUNK_ALIGN};
use super::transfer::{box_dma, dm_box, dm_bytes, round_up};
use super::{lower_op, Lowering};
use crate::array::DType;
use crate::dialects::npu::access::AccessPattern;
use crate::dialects::npu::ops::instruction::Instruction;
use crate::dialects::npu::ops::onchip::{Operand, Slices, Space};
use crate::dialects::npu::ops::stream::{Kind, Requant, Stream};
use crate::dialects::npu::ops::vector::{Rhs, Vector};
use crate::dialects::teg::ops::{decode, Binary, Cell, OpKind, Unary};
use crate::dialects::teg::tensor_type::as_tensor;
use crate::ir::conversion::{ConversionPattern, ConversionRewriter, OpAdaptor};
use crate::ir::rewrite::Rewriter;
use crate::ir::{Context, OpId};
use crate::machine::ElemType;
use std::cell::RefCell;

/// Most slices one op's tiles spread over.
const MAX_SLICES: u64 = 64;
/// Tiles are not made smaller than this many bytes of result to occupy more slices (a DMA's startup would
/// dominate).
const MIN_TILE_BYTES: u64 = 32 << 10;

/// One vector instruction of a cell op: its function and, for a binary one applied to a scalar, the scalar.
type Step = (&'static str, Option<f64>);

/// The vector instructions of a cell op, in order (the first reads the operands, the others its result), if it has
/// them: one, or a clip's `max` and `min` against its bounds (on integers the integers within them, as the
/// reference clips).
fn steps(cell: &Cell, int: bool) -> Option<Vec<Step>> {
    if let Cell::Clip { min, max } = *cell {
        let (min, max) = if int { (min.ceil(), max.floor()) } else { (min, max) };
        // A bound of -inf below or +inf above changes nothing; +inf below or -inf above changes every cell.
        let bounds = [("max", min, f64::NEG_INFINITY), ("min", max, f64::INFINITY)];
        let mut out: Vec<Step> = bounds.into_iter().filter(|b| b.1 != b.2).map(|(f, v, _)| (f, Some(v))).collect();
        if out.is_empty() {
            out.push(("max", Some(f64::NEG_INFINITY)));
        }
        return Some(out);
    }
    function(cell).map(|f| vec![(f, None)])
}

/// The vector instruction of a cell op, if it has one.
fn function(cell: &Cell) -> Option<&'static str> {
    Some(match cell {
        Cell::Unary(u) => match u {
            Unary::Relu => "relu",
            Unary::Neg => "neg",
            Unary::Abs => "abs",
            Unary::Exp => "exp",
            Unary::Tanh => "tanh",
            Unary::Sqrt => "sqrt",
            Unary::Log => "log",
            _ => return None,
        },
        Cell::Binary(b) => match b {
            Binary::Add => "add",
            Binary::Sub => "sub",
            Binary::Mul => "mul",
            Binary::Div => "div",
            Binary::Max => "max",
            Binary::Min => "min",
        },
        Cell::Cast => "cast",
        _ => return None,
    })
}

/// The conversions the lowering computes as the reference does: floats to and from bf16 and f16 (rounding to
/// nearest even), i8 to i32 (`npu.cast`), i32 to i8 (each i32's low byte: TEG's cast wraps where the NPU's
/// saturates), and any type to itself.
fn castable(from: DType, to: DType) -> bool {
    let float = |t: DType| matches!(t, DType::F32 | DType::BF16 | DType::F16);
    from == to
        || (float(from) && float(to) && (from == DType::F32 || to == DType::F32))
        || matches!((from, to), (DType::I8, DType::I32) | (DType::I32, DType::I8))
}

/// The 32-bit type the vector unit and the accumulator compute `elem`s in, when not `elem` itself: bf16 in f32
/// (rounded once at the end, as the reference does), i8 in i32 (its low byte at the end, see [`narrow`]).
pub fn widened(elem: ElemType) -> Option<ElemType> {
    match elem {
        ElemType::Bf16 => Some(ElemType::F32),
        ElemType::I8 => Some(ElemType::I32),
        _ => None,
    }
}

/// What a cell op with results of `elem` computes in ([`widened`]): a cast to bf16 is one instruction, a cast to
/// i8 goes through i32 too.
fn computed_in(elem: ElemType, f: &[Step]) -> Option<ElemType> {
    widened(elem).filter(|_| !(elem == ElemType::Bf16 && f[0].0 == "cast"))
}

/// Whether a cell op's results of `dtype` are integers (a clip then keeps the integers within its bounds).
fn integer(dtype: Option<DType>) -> bool {
    matches!(dtype, Some(DType::I32 | DType::I8))
}

/// The element type of `op`'s tensor result, if it has one.
fn result_dtype(ctx: &Context, op: OpId) -> Option<DType> {
    ctx.body.results(op).next().and_then(|v| as_tensor(ctx, ctx.body.value_type(v))).map(|t| t.dtype)
}

/// Why the cell op `op` cannot be lowered, if it cannot.
pub fn check(ctx: &Context, op: OpId, cell: &Cell) -> Result<(), String> {
    let name = ctx.op_name(op);
    let dtype = result_dtype(ctx, op);
    let steps = steps(cell, integer(dtype)).ok_or(format!("the NPU has no instruction for '{name}' yet"))?;
    let f = steps[0].0;
    if f == "cast" {
        let from = as_tensor(ctx, ctx.body.value_type(ctx.body.operand(op, 0))).map(|t| t.dtype);
        return match (from, dtype) {
            (Some(a), Some(b)) if castable(a, b) && npu_elem(a).is_some() && npu_elem(b).is_some() => Ok(()),
            (Some(a), Some(b)) => Err(format!(
                "a cast from {a} to {b} is not lowered (the NPU casts f32 to and from bf16, i8 to and from i32)"
            )),
            _ => Err(format!("'{name}' has no tensor operand or result")),
        };
    }
    let integer_ok = matches!(f, "relu" | "neg" | "abs" | "add" | "sub" | "mul" | "max" | "min");
    match dtype {
        Some(DType::F32 | DType::BF16) => Ok(()),
        Some(DType::I32 | DType::I8) if integer_ok => Ok(()),
        Some(t @ (DType::I32 | DType::I8)) => Err(format!(
            "'{name}' on {t} is not lowered (padding would divide by zero); the vector unit computes it on f32"
        )),
        Some(t) => Err(format!(
            "'{name}' on {t} is not lowered yet: the vector unit computes on f32 and i32 (bf16 through f32, i8 \
             through i32)"
        )),
        None => Err(format!("'{name}' has no tensor result")),
    }
}

/// The pattern lowering every cell op with a vector instruction.
pub struct Cells<'s>(pub &'s RefCell<Lowering>);

impl ConversionPattern for Cells<'_> {
    fn name(&self) -> &'static str {
        "Cells"
    }

    fn root(&self) -> Option<&'static str> {
        None
    }

    fn match_and_rewrite(&self, op: OpId, _: &OpAdaptor, rw: &mut ConversionRewriter<'_, '_>) -> bool {
        let Ok(OpKind::Cell(cell)) = decode(rw.ir(), op) else { return false };
        let Some(f) = steps(&cell, integer(result_dtype(rw.ir(), op))) else { return false };
        lower_op(self.0, op, rw, |l, rw, operands, result| {
            let inputs: Vec<Input> =
                operands.iter().map(|t| Input { tensor: t.clone(), map: map_dims(result, t) }).collect();
            lower(l, rw, &f, result, &inputs)
        })
    }
}

/// Writes `acc = f(acc, partial)` for a vector function `f` (`add`, `max`, `min`, `mul`) over tensors of one
/// shape: how a reshard combines partial results.
pub fn combine(
    l: &mut Lowering,
    rw: &mut Rewriter<'_>,
    f: &'static str,
    acc: &Tensor,
    partial: &Tensor,
) -> Result<(), String> {
    let inputs: Vec<Input> =
        [acc, partial].iter().map(|t| Input { tensor: (*t).clone(), map: map_dims(acc, t) }).collect();
    lower(l, rw, &[(f, None)], acc, &inputs)
}

/// Writes `r = x · w` cell by cell, the operands broadcast by name (`teg.prod`: a matmul before its sum).
pub fn product(l: &mut Lowering, rw: &mut Rewriter<'_>, x: &Tensor, w: &Tensor, r: &Tensor) -> Result<(), String> {
    let inputs: Vec<Input> = [x, w].iter().map(|t| Input { tensor: (*t).clone(), map: map_dims(r, t) }).collect();
    lower(l, rw, &[("mul", None)], r, &inputs)
}

/// Writes the tiles of `result = f(operands)`. An op on bf16 or i8 computes in a wider type
/// ([`computed_in`]): its operands are cast to it in data memory first, and its result narrowed at the end.
fn lower(l: &mut Lowering, rw: &mut Rewriter<'_>, f: &[Step], result: &Tensor, inputs: &[Input]) -> Result<(), String> {
    let cfg = l.cfg.clone();
    let space = result.space();
    let budget = cfg.dm_slice_bytes * 3 / 8 / 8 * 8;
    let widen = computed_in(result.elem, f).is_some();
    // Wide copies of the operands and the result, each the result's tile's elements.
    let wide = |ext: &[u64]| match widen {
        true => (inputs.len() as u64 + 1) * (dm_bytes(result, ext, &cfg) / result.elem.bytes() * 4 + 8),
        false => 0,
    };
    // Bytes of a tile's result and operand boxes, each operand with room for the alignment of its row start.
    let bytes = |ext: &[u64]| {
        let tile = Tile { start: vec![0; ext.len()], ext: ext.to_vec() };
        let inputs: u64 = inputs
            .iter()
            .map(|x| {
                let (_, mut e, _) = operand_box(x, &tile, 0);
                *e.last_mut().expect("a dimension") += cfg.dm_write_align;
                dm_bytes(&x.tensor, &e, &cfg)
            })
            .sum();
        dm_bytes(result, ext, &cfg) + inputs + wide(ext)
    };
    let total = dm_bytes(result, &space, &cfg);
    let want = (total / MIN_TILE_BYTES).clamp(1, MAX_SLICES);
    let tiling = Tiling::choose(&space, &bytes, budget, want, CHUNK_ALIGN)?;
    // Per tile: a DMA per operand, the result's DMA, and at most one vector instruction.
    l.kernel.reserve(tiling.count().saturating_mul(inputs.len() as u64 + 1 + f.len() as u64))?;
    let tiles = tiling.tiles();
    let slices = cfg.slices_per_cluster.clamp(1, MAX_SLICES) as usize;
    for wave in tiles.chunks(slices) {
        let base = (l.waves % 2) * budget;
        l.waves += 1;
        let mut reads = Vec::with_capacity(wave.len());
        let mut ends = Vec::with_capacity(wave.len());
        for (slice, tile) in wave.iter().enumerate() {
            let at = base + dm_bytes(result, &tile.ext, &cfg);
            let (read, end) = bring_in(l, rw, inputs, tile, slice as u64, at)?;
            reads.push(read);
            ends.push(end);
        }
        let work: Vec<_> = reads.iter().zip(wave).map(|(r, t)| (r, &t.ext)).collect();
        for (first, end) in runs(&work) {
            let (reads, ext) = work[first as usize];
            let dst = AccessPattern::new(base, &[], dm_bytes(result, ext, &cfg) as u32);
            let slices = l.slices(first, end);
            // Scratch after the furthest operand box of the run's slices.
            let scratch = ends[first as usize..end as usize].iter().copied().max().unwrap_or(base);
            compute(l, rw, f, slices, reads, &dst, inputs, result, widen.then_some(scratch))?;
        }
        for (slice, tile) in wave.iter().enumerate() {
            let dm = dm_box(result, &tile.ext, base, &cfg);
            let at = l.dm(slice as u64);
            l.dma(rw, &box_dma(result, &tile.start, &tile.ext, &dm, at, false, &cfg), result.elem)?;
        }
    }
    Ok(())
}

/// The instructions of `f` on a run of slices: from the operands `reads` into `dst` (the result's tile); with
/// `scratch`, through wide copies there (an op on bf16 or i8, see [`computed_in`]).
#[allow(clippy::too_many_arguments)]
fn compute(
    l: &mut Lowering,
    rw: &mut Rewriter<'_>,
    f: &[Step],
    slices: Slices,
    reads: &[AccessPattern],
    dst: &AccessPattern,
    inputs: &[Input],
    result: &Tensor,
    scratch: Option<u64>,
) -> Result<(), String> {
    let Some(scratch) = scratch else {
        for (k, &(kind, imm)) in f.iter().enumerate() {
            let reads = if k == 0 { reads.to_vec() } else { vec![dst.clone()] };
            let step = match kind {
                "cast" => cast(slices, Space::Dm, &reads[0], inputs[0].tensor.elem, dst.clone(), result.elem),
                _ => vector(kind, imm, slices, &reads, dst.clone(), result.elem),
            };
            l.compute(rw, &step)?;
        }
        return Ok(());
    };
    let wide_t = computed_in(result.elem, f).expect("a wide type");
    let count = dst.bytes().expect("a dense tile") / result.elem.bytes();
    let bytes = round_up(count * 4, 8);
    let at = |k: u64| AccessPattern::new(round_up(scratch, 8) + k * bytes, &[], (count * 4) as u32);
    let mut wide = Vec::with_capacity(reads.len());
    for (k, (read, x)) in reads.iter().zip(inputs).enumerate() {
        // An operand already wide and dense (an i32 cast to i8) is read where it is.
        if x.tensor.elem == wide_t && read.loops.is_empty() {
            wide.push(read.clone());
            continue;
        }
        l.compute(rw, &cast(slices, Space::Dm, read, x.tensor.elem, at(k as u64), wide_t))?;
        wide.push(at(k as u64));
    }
    // A cast is done once its operand is wide; other functions compute the result's wide copy.
    let mut out = wide[0].clone();
    for (k, &(kind, imm)) in f.iter().enumerate().filter(|(_, s)| s.0 != "cast") {
        let reads = if k == 0 { wide.clone() } else { vec![out.clone()] };
        out = at(inputs.len() as u64);
        l.compute(rw, &vector(kind, imm, slices, &reads, out.clone(), wide_t))?;
    }
    l.compute(rw, &narrow(slices, out.base, count, wide_t, dst.base, result.elem))
}

/// Brings each operand's box of `tile` into slice `slice` from `at` on; the patterns reading them in the
/// tile's order, and where the boxes end.
fn bring_in(
    l: &mut Lowering,
    rw: &mut Rewriter<'_>,
    inputs: &[Input],
    tile: &Tile,
    slice: u64,
    mut at: u64,
) -> Result<(Vec<AccessPattern>, u64), String> {
    let cfg = l.cfg.clone();
    let mut reads = Vec::with_capacity(inputs.len());
    for x in inputs {
        let (start, ext, skip) = operand_box(x, tile, cfg.dm_write_align);
        let dm = dm_box(&x.tensor, &ext, at, &cfg);
        let memory = l.dm(slice);
        l.dma(rw, &box_dma(&x.tensor, &start, &ext, &dm, memory, true, &cfg), x.tensor.elem)?;
        let order: Vec<usize> = (0..tile.ext.len()).collect();
        reads.push(read_pattern(x, tile, &order, &dm, skip));
        at += dm.bytes;
    }
    Ok((reads, at))
}

/// The cast of the `from` elements `src` reads (in `space`) into the `to` elements of `dst` in data memory, on
/// `slices` (a move when the types are the same).
pub fn cast(
    slices: Slices,
    space: Space,
    src: &AccessPattern,
    from: ElemType,
    dst: AccessPattern,
    to: ElemType,
) -> Instruction {
    Instruction::Stream(Stream {
        kind: Kind::Cast,
        slices,
        src: Operand { space, pattern: src.clone() },
        dst: Operand { space: Space::Dm, pattern: dst },
        from,
        to,
        relu: false,
        requant: Requant { scale: 1, shift: 0 },
        tile: (1, 1),
    })
}

/// The move narrowing `count` dense `wide` elements (f32 or i32) at `src` in data memory into `to` elements at
/// `dst`: a cast rounding f32 to bf16; for i8, each i32's low byte, read one byte of every four (TEG's i8
/// arithmetic wraps, where the NPU's i32 -> i8 cast saturates).
pub fn narrow(slices: Slices, src: u64, count: u64, wide: ElemType, dst: u64, to: ElemType) -> Instruction {
    let out = AccessPattern::new(dst, &[], (count * to.bytes()) as u32);
    match to {
        ElemType::I8 => cast(slices, Space::Dm, &AccessPattern::new(src, &[(count as u32, 4)], 1), to, out, to),
        _ => cast(slices, Space::Dm, &AccessPattern::new(src, &[], (count * 4) as u32), wide, out, to),
    }
}

/// The instructions taking `count` dense `wide` elements (f32 or i32) out of the accumulator at `acc` to `to`
/// elements at `out` in data memory: one cast, or for i8 a move of the i32s to just after the result's bytes
/// (`out + round_up(count, 8)`) and their low bytes taken by [`narrow`].
pub fn out_of_acc(
    slices: Slices,
    acc: &AccessPattern,
    count: u64,
    wide: ElemType,
    out: u64,
    to: ElemType,
) -> Vec<Instruction> {
    if to != ElemType::I8 {
        let moved = AccessPattern::new(out, &[], (count * to.bytes()) as u32);
        return vec![cast(slices, Space::Acc, acc, wide, moved, to)];
    }
    let at = out + round_up(count, 8);
    let moved = AccessPattern::new(at, &[], (count * 4) as u32);
    vec![cast(slices, Space::Acc, acc, wide, moved, wide), narrow(slices, at, count, wide, out, to)]
}

/// The vector instruction computing `f` of the `dtype` operands read by `reads` (or of the first and `imm`) into
/// `dst` on `slices`.
fn vector(
    f: &str,
    imm: Option<f64>,
    slices: Slices,
    reads: &[AccessPattern],
    dst: AccessPattern,
    dtype: ElemType,
) -> Instruction {
    let dm = |p: &AccessPattern| Operand { space: Space::Dm, pattern: p.clone() };
    let rhs = imm.map(Rhs::Imm).or_else(|| reads.get(1).map(|p| Rhs::Operand(dm(p))));
    Instruction::Vector(Vector {
        kind: f.to_string(),
        slices,
        src: dm(&reads[0]),
        rhs,
        dst: Operand { space: Space::Dm, pattern: dst },
        dtype,
    })
}
