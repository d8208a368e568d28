//! Instructions that stream one on-chip operand's elements, in order, into another, SPMD over a range of slices:
//!
//! - `npu.load_trf queue(sub) on(0, 0:64) src(dm, ...) dst(trf, ...) : bf16`: data memory into the tensor register
//!   file, the matmul's stationary operand (`bf16`, `f16`, `f32` or `i8`);
//! - `npu.load_vrf queue(sub) on(0, 0) src(dm, ...) dst(vrf, ...) : f32`: data memory into the vector register
//!   file (32-bit elements), which vector instructions read (a stride-0 loop broadcasts it);
//! - `npu.cast queue(main) on(0, 0) src(acc, ...) dst(dm, ...) [relu] [scale S shift H] : f32 -> bf16`: converts
//!   each element: `f32` to `bf16` or `f16` rounding to nearest even, `i32` to `i8` as
//!   `clamp((x · scale + 2^(shift-1)) >> shift)` (round half up, saturating), `bf16`/`f16` to `f32` and `i8` to
//!   `i32` exactly, or a type to itself (a move, how results leave the accumulator); `relu` first zeroes the
//!   negative elements;
//! - `npu.transpose queue(main) on(0, 0) src(dm, ...) dst(dm, ...) tile(R, C) : bf16`: the source is a sequence of
//!   `R × C` row-major tiles, each written as its `C × R` transpose; a tile fits one NoC flit.
//!
//! Each costs `setup + ceil(bytes / flit)` cycles for the bytes one slice writes (one flit per cycle).
//!
//! Properties: `queue`, the slices and the `src`/`dst` operands (`onchip`), `dtype` (and `out_dtype` for a cast),
//! `relu`, `scale`, `shift`, `tile`, `waits`, `signals`; operands: the semaphores.

use super::clauses::{
    elem_prop, int, int_list, int_prop, int_prop_of, ints, parse_flag, parse_tail, print_tail, prop, unit_flag,
};
use super::instruction::registration;
use super::onchip::{self, Operand, Slices, Space};
use crate::dialects::npu::types::elem_name;
use crate::ir::asm::{CustomParser, Delim, ParsedOp};
use crate::ir::print::OpPrinter;
use crate::ir::{Attr, Context, Diagnostic, OpId, OpInfo};
use crate::machine::{ElemType, NpuConfig};
use half::{bf16, f16};
use std::fmt;

const fn info(name: &'static str, summary: &'static str) -> OpInfo {
    registration(name, summary, parse, print)
}

/// The registration of `npu.load_trf`.
pub const LOAD_TRF: OpInfo = info("npu.load_trf", "loads the tensor register file of a range of slices from DM");
/// The registration of `npu.load_vrf`.
pub const LOAD_VRF: OpInfo = info("npu.load_vrf", "loads the vector register file of a range of slices from DM");
/// The registration of `npu.cast`.
pub const CAST: OpInfo = info("npu.cast", "converts on-chip elements to another type, rounding to nearest even");
/// The registration of `npu.transpose`.
pub const TRANSPOSE: OpInfo = info("npu.transpose", "transposes small row-major tiles of on-chip elements");

/// Which streaming instruction.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `npu.load_trf`.
    LoadTrf,
    /// `npu.load_vrf`.
    LoadVrf,
    /// `npu.cast`.
    Cast,
    /// `npu.transpose`.
    Transpose,
}

impl Kind {
    fn of(name: &str) -> Option<Kind> {
        Some(match name {
            "npu.load_trf" => Kind::LoadTrf,
            "npu.load_vrf" => Kind::LoadVrf,
            "npu.cast" => Kind::Cast,
            "npu.transpose" => Kind::Transpose,
            _ => return None,
        })
    }

    /// The spaces its source and its destination may be in.
    fn spaces(self) -> (&'static [Space], &'static [Space]) {
        match self {
            Kind::LoadTrf => (&[Space::Dm], &[Space::Trf]),
            Kind::LoadVrf => (&[Space::Dm], &[Space::Vrf]),
            Kind::Cast => (&[Space::Dm, Space::Acc], &[Space::Dm, Space::Acc]),
            Kind::Transpose => (&[Space::Dm], &[Space::Dm]),
        }
    }
}

/// How a cast rescales `i32` to `i8`: `(x · scale + 2^(shift-1)) >> shift`, saturated.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Requant {
    /// The multiplier.
    pub scale: i32,
    /// The right shift, 0 to 31.
    pub shift: u32,
}

/// A decoded streaming instruction.
#[derive(Clone, Debug)]
pub struct Stream {
    /// Which one.
    pub kind: Kind,
    /// The slices.
    pub slices: Slices,
    /// What it reads.
    pub src: Operand,
    /// Where it writes.
    pub dst: Operand,
    /// The source's element type.
    pub from: ElemType,
    /// The destination's element type (the source's but for a cast).
    pub to: ElemType,
    /// A cast's fused relu.
    pub relu: bool,
    /// A cast's `i32` to `i8` rescaling.
    pub requant: Requant,
    /// A transpose's tile, rows and columns.
    pub tile: (u64, u64),
}

impl Stream {
    /// Cycles: `setup + ceil(bytes / flit)` for the bytes one slice writes.
    pub fn cycles(&self, cfg: &NpuConfig) -> u64 {
        cfg.flit_cycles(self.dst.pattern.bytes().unwrap_or(u64::MAX))
    }

    /// Whether it copies bytes unchanged (a load, or a move without relu).
    pub fn is_copy(&self) -> bool {
        matches!(self.kind, Kind::LoadTrf | Kind::LoadVrf)
            || (self.kind == Kind::Cast && self.from == self.to && !self.relu)
    }

    /// The destination's bytes for the source's bytes `src` (of one slice); loads and moves give `src` back.
    pub fn apply(&self, src: Vec<u8>) -> Vec<u8> {
        match self.kind {
            _ if self.is_copy() => src,
            Kind::Transpose => transpose(&src, self.tile, self.from.bytes() as usize),
            _ => self.convert(&src),
        }
    }

    fn convert(&self, src: &[u8]) -> Vec<u8> {
        let (from, to) = (self.from, self.to);
        let n = src.len() / from.bytes() as usize;
        let mut out = Vec::with_capacity(n * to.bytes() as usize);
        for e in src.chunks_exact(from.bytes() as usize) {
            match (from, to) {
                (ElemType::I32 | ElemType::I8, _) => {
                    let x = if from == ElemType::I32 {
                        i32::from_le_bytes([e[0], e[1], e[2], e[3]])
                    } else {
                        e[0] as i8 as i32
                    };
                    let x = if self.relu { x.max(0) } else { x };
                    if to == ElemType::I8 {
                        out.push(self.requantize(x) as u8);
                    } else {
                        out.extend_from_slice(&x.to_le_bytes());
                    }
                }
                _ => {
                    let x = float(from, e);
                    let x = if self.relu { super::vector::relu_f32(x) } else { x };
                    match to {
                        ElemType::Bf16 => out.extend_from_slice(&bf16::from_f32(x).to_bits().to_le_bytes()),
                        ElemType::F16 => out.extend_from_slice(&f16::from_f32(x).to_bits().to_le_bytes()),
                        _ => out.extend_from_slice(&x.to_le_bytes()),
                    }
                }
            }
        }
        out
    }

    fn requantize(&self, x: i32) -> i8 {
        let Requant { scale, shift } = self.requant;
        let round = if shift > 0 { 1i64 << (shift - 1) } else { 0 };
        ((x as i64 * scale as i64 + round) >> shift).clamp(i8::MIN as i64, i8::MAX as i64) as i8
    }
}

/// A float element's value (`f32`, `bf16` or `f16`, little-endian).
fn float(t: ElemType, e: &[u8]) -> f32 {
    match t {
        ElemType::Bf16 => bf16::from_bits(u16::from_le_bytes([e[0], e[1]])).to_f32(),
        ElemType::F16 => f16::from_bits(u16::from_le_bytes([e[0], e[1]])).to_f32(),
        _ => f32::from_le_bytes([e[0], e[1], e[2], e[3]]),
    }
}

/// Each `rows × cols` tile of `src` (elements of `size` bytes) transposed.
fn transpose(src: &[u8], tile: (u64, u64), size: usize) -> Vec<u8> {
    match size {
        1 => transposed::<1>(src, tile),
        2 => transposed::<2>(src, tile),
        _ => transposed::<4>(src, tile),
    }
}

/// [`transpose`] of `N`-byte elements, each moved whole; bytes past the last whole tile are zero.
fn transposed<const N: usize>(src: &[u8], (rows, cols): (u64, u64)) -> Vec<u8> {
    let (rows, cols) = (rows as usize, cols as usize);
    let tile = (rows * cols).max(1);
    let elements: Vec<[u8; N]> = src.chunks_exact(N).map(|e| e.try_into().expect("N bytes")).collect();
    let mut out = vec![[0u8; N]; elements.len()];
    for (from, to) in elements.chunks_exact(tile).zip(out.chunks_exact_mut(tile)) {
        for r in 0..rows {
            for c in 0..cols {
                to[c * rows + r] = from[r * cols + c];
            }
        }
    }
    let mut bytes = out.concat();
    bytes.resize(src.len(), 0);
    bytes
}

/// The conversions `npu.cast` makes.
fn converts(from: ElemType, to: ElemType) -> bool {
    use ElemType::*;
    from == to && from != F8
        || matches!((from, to), (F32, Bf16) | (F32, F16) | (Bf16, F32) | (F16, F32) | (I32, I8) | (I8, I32))
}

/// Decodes `op`; the message says what is malformed.
pub fn decode(ctx: &Context, op: OpId) -> Result<Stream, String> {
    let kind = Kind::of(ctx.op_name(op)).ok_or("not a streaming instruction")?;
    let slices = onchip::slices_of(ctx, op)?;
    let src = onchip::operand_of(ctx, op, "src")?;
    let dst = onchip::operand_of(ctx, op, "dst")?;
    let from = elem_prop(ctx, op, "dtype")?;
    let to = if kind == Kind::Cast { elem_prop(ctx, op, "out_dtype")? } else { from };
    let relu = unit_flag(ctx, op, "relu")?;
    let int_or = |name: &str, default: i64| match ctx.op_attr(op, name) {
        None => Ok(default),
        Some(_) => int_prop(ctx, op, name).ok_or(format!("'{name}' must be an integer")),
    };
    let (scale, shift) = (int_or("scale", 1)?, int_or("shift", 0)?);
    let requant = match (i32::try_from(scale), u32::try_from(shift)) {
        (Ok(scale), Ok(shift)) if shift < 32 => Requant { scale, shift },
        _ => return Err(format!("scale {scale} must fit an i32 and shift {shift} be 0 to 31")),
    };
    let tile = match (ctx.op_attr(op, "tile"), ints(ctx, op, "tile").as_deref()) {
        (None, _) => (1, 1),
        (_, Some(&[r, c])) if r > 0 && c > 0 => (r as u64, c as u64),
        _ => return Err("'tile' must be [rows, columns], both positive".into()),
    };
    let requantizes = ctx.op_attr(op, "scale").is_some() || ctx.op_attr(op, "shift").is_some();
    if kind != Kind::Cast && (relu || requantizes) {
        return Err("only npu.cast takes relu, scale and shift".into());
    }
    if kind != Kind::Transpose && ctx.op_attr(op, "tile").is_some() {
        return Err("only npu.transpose takes a tile".into());
    }
    Ok(Stream { kind, slices, src, dst, from, to, relu, requant, tile })
}

/// The machine's rules for a streaming instruction.
pub fn check(s: &Stream, cfg: &NpuConfig) -> Result<(), String> {
    onchip::check_slices(&s.slices, cfg)?;
    let (from_spaces, to_spaces) = s.kind.spaces();
    onchip::check_space("src", &s.src, from_spaces)?;
    onchip::check_space("dst", &s.dst, to_spaces)?;
    check_types(s)?;
    onchip::check_operand("src", &s.src, s.from.bytes(), false, cfg)?;
    onchip::check_operand("dst", &s.dst, s.to.bytes(), true, cfg)?;
    let count = |o: &Operand, t: ElemType| o.pattern.bytes().unwrap_or(u64::MAX) / t.bytes();
    let (n, m) = (count(&s.src, s.from), count(&s.dst, s.to));
    if n != m {
        return Err(format!("src has {n} elements but dst has {m}"));
    }
    if s.kind == Kind::Transpose {
        let (r, c) = s.tile;
        let bytes = r.saturating_mul(c).saturating_mul(s.from.bytes());
        if bytes > cfg.flit_bytes {
            return Err(format!(
                "a {r} x {c} tile of {} is {bytes} B, more than one {} B flit",
                elem_name(s.from),
                cfg.flit_bytes
            ));
        }
        if !n.is_multiple_of(r.saturating_mul(c)) {
            return Err(format!("{n} elements are not a whole number of {r} x {c} tiles"));
        }
    }
    Ok(())
}

fn check_types(s: &Stream) -> Result<(), String> {
    let (from, to) = (s.from, s.to);
    let ok = match s.kind {
        Kind::LoadTrf => matches!(from, ElemType::Bf16 | ElemType::F16 | ElemType::F32 | ElemType::I8),
        Kind::LoadVrf => matches!(from, ElemType::F32 | ElemType::I32),
        Kind::Transpose => from != ElemType::F8,
        Kind::Cast => converts(from, to),
    };
    if !ok {
        let what = if s.kind == Kind::Cast {
            format!("{} to {}", elem_name(from), elem_name(to))
        } else {
            elem_name(from).to_string()
        };
        return Err(format!("does not take {what}"));
    }
    if s.dst.space == Space::Acc && to.bytes() != 4 {
        return Err(format!("the accumulator holds 32-bit elements, not {}", elem_name(to)));
    }
    if (s.requant != Requant { scale: 1, shift: 0 }) && (from, to) != (ElemType::I32, ElemType::I8) {
        return Err("scale and shift rescale i32 to i8 only".into());
    }
    Ok(())
}

/// `queue(...) [waits(...)] on(...) src(...) dst(...) <options> : T [-> U] [signals(...)]`.
fn parse<'s>(p: &mut CustomParser<'_, 's>) -> Result<ParsedOp<'s>, Diagnostic> {
    let mut op = ParsedOp::default();
    onchip::parse_head(p, &mut op)?;
    onchip::parse_operand(p, &mut op, "src")?;
    onchip::parse_operand(p, &mut op, "dst")?;
    parse_flag(p, &mut op, "relu");
    for name in ["scale", "shift"] {
        if p.eat_keyword(name) {
            let v = int(p)?;
            int_prop_of(p.ctx(), &mut op, name, v);
        }
    }
    if p.eat_keyword("tile") {
        let (items, loc) = p.group(Delim::Paren)?;
        let mut inner = p.nested(items, loc);
        let rows = int(&mut inner)?;
        inner.expect_punct(",")?;
        let cols = int(&mut inner)?;
        inner.expect_end()?;
        let tile = int_list(p.ctx(), &[rows, cols]);
        prop(p.ctx(), &mut op, "tile", tile);
    }
    parse_tail(p, &mut op)?;
    Ok(op)
}

fn print(p: &mut OpPrinter<'_, '_>, op: OpId) -> fmt::Result {
    let s = decode(p.ctx(), op).map_err(|_| fmt::Error)?;
    onchip::print_head(p, op, &s.slices)?;
    onchip::print_operand(p, "src", &s.src)?;
    onchip::print_operand(p, "dst", &s.dst)?;
    let ctx = p.ctx();
    let mut elided: Vec<String> = onchip::props("src").into_iter().chain(onchip::props("dst")).collect();
    elided.extend(["chip", "cluster", "slices"].map(String::from));
    if ctx.op_attr(op, "relu").is_some_and(|a| matches!(ctx.attr_data(a), Attr::Unit)) {
        p.write(" relu");
        elided.push("relu".into());
    }
    for name in ["scale", "shift"] {
        if let Some(v) = int_prop(p.ctx(), op, name) {
            p.write(&format!(" {name} {v}"));
            elided.push(name.into());
        }
    }
    if let Some([r, c]) = ints(p.ctx(), op, "tile").as_deref().and_then(|t| <[i64; 2]>::try_from(t).ok()) {
        p.write(&format!(" tile({r}, {c})"));
        elided.push("tile".into());
    }
    let waits = ints(p.ctx(), op, "waits").ok_or(fmt::Error)?.len();
    print_tail(p, op, waits, &elided)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialects::npu::access::AccessPattern;

    fn stream(kind: Kind, from: ElemType, to: ElemType) -> Stream {
        let o = Operand { space: Space::Dm, pattern: AccessPattern::new(0, &[], 8) };
        let slices = Slices { chip: 0, cluster: 0, first: 0, end: 1 };
        let requant = Requant { scale: 1, shift: 0 };
        Stream { kind, slices, src: o.clone(), dst: o, from, to, relu: false, requant, tile: (1, 1) }
    }

    #[test]
    fn casts_round_to_nearest_even() {
        // 1 + 2^-8 lies halfway between two bf16 values: ties go to the even one (1.0); 1 + 3·2^-8 rounds up.
        let src: Vec<u8> =
            [1.0 + 1.0 / 256.0, 1.0 + 3.0 / 256.0, -2.5f32].iter().flat_map(|x: &f32| x.to_le_bytes()).collect();
        let out = stream(Kind::Cast, ElemType::F32, ElemType::Bf16).apply(src.clone());
        let got: Vec<f32> = out.chunks(2).map(|e| float(ElemType::Bf16, e)).collect();
        assert_eq!(got, [1.0, 1.0 + 4.0 / 256.0, -2.5]);
        let mut relu = stream(Kind::Cast, ElemType::F32, ElemType::F32);
        relu.relu = true;
        let back: Vec<f32> = relu.apply(src).chunks(4).map(|e| float(ElemType::F32, e)).collect();
        assert_eq!(back, [1.0 + 1.0 / 256.0, 1.0 + 3.0 / 256.0, 0.0]);
    }

    #[test]
    fn requantizes_with_rounding_and_saturation() {
        let mut s = stream(Kind::Cast, ElemType::I32, ElemType::I8);
        s.requant = Requant { scale: 3, shift: 2 };
        let src: Vec<u8> = [5i32, -5, 1000, -1000, 2].iter().flat_map(|x| x.to_le_bytes()).collect();
        // 15/4 = 3.75 → 4; -15/4 = -3.75 → -4 (round half up: (-15 + 2) >> 2 = -4); saturates at ±127/-128; 6/4 → 2.
        assert_eq!(s.apply(src), [4u8, (-4i8) as u8, 127, (-128i8) as u8, 2]);
    }

    #[test]
    fn transposes_each_tile() {
        let mut s = stream(Kind::Transpose, ElemType::I8, ElemType::I8);
        s.tile = (2, 3);
        assert_eq!(s.apply(vec![1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]), [1, 4, 2, 5, 3, 6, 7, 10, 8, 11, 9, 12]);
    }
}
