//! `npu.matmul`: the tensor unit's contraction, SPMD over a range of slices.
//!
//! `npu.matmul queue(main) on(0, 0:64) m 128 k 256 n 128 a(dm, ...) b(trf, base 0) c(acc, ...) accumulate : f32 -> f32`
//! computes, on each slice, `C[m × n] = A[m × k] · B[k × n]` (`+=` with `accumulate`). `A` is the `a` operand's
//! elements in order, row-major, from data memory. `B` is stationary in the tensor register file, lane-major: column
//! `j` is `k` consecutive elements in lane `j mod lanes` at byte `base + (j div lanes) · k · size` of the lane (what
//! `npu.load_trf` put there). `C` is the `c` operand's elements in order, row-major, in the accumulator.
//!
//! Inputs widen: `bf16`, `f16` and `f32` into `f32` (products of `bf16` are exact in `f32`), `i8` into `i32`
//! (wrapping). Float sums run on the crate's one GEMM (the evaluator's), whose order is fixed, so results are
//! deterministic; integer sums run `k` ascending. The cost is `setup + m · ceil(k / k_per_cycle) · ceil(n / lanes)`,
//! `k_per_cycle = 64 B / size` (32 `bf16`, 64 `i8`).
//!
//! Properties: `queue`, the slices, `m`, `k`, `n`, the `a` and `c` operands (`onchip`), `b_base`, `accumulate`
//! (unit), `dtype`, `out_dtype`, `waits`, `signals`; operands: the semaphores.

use super::clauses::{elem_prop, int, int_prop, int_prop_of, ints, parse_flag, parse_tail, print_tail, unit_flag};
use super::instruction::registration;
use super::onchip::{self, Operand, Slices, Space};
use crate::dialects::npu::types::elem_name;
use crate::ir::asm::{CustomParser, Delim, ParsedOp};
use crate::ir::print::OpPrinter;
use crate::ir::{Attr, Context, Diagnostic, OpId, OpInfo};
use crate::machine::{ElemType, NpuConfig};
use std::fmt;

/// The registration of `npu.matmul`.
pub const MATMUL: OpInfo =
    registration("npu.matmul", "multiplies DM rows by the stationary TRF operand into the accumulator", parse, print);

/// A decoded `npu.matmul`.
#[derive(Clone, Debug)]
pub struct Matmul {
    /// The slices.
    pub slices: Slices,
    /// Rows of `A` and `C`.
    pub m: u64,
    /// Columns of `A`, rows of `B`.
    pub k: u64,
    /// Columns of `B` and `C`.
    pub n: u64,
    /// `A`, in data memory.
    pub a: Operand,
    /// Where `B` starts in each TRF lane.
    pub b_base: u64,
    /// `C`, in the accumulator.
    pub c: Operand,
    /// `C +=` rather than `C =`.
    pub accumulate: bool,
    /// The input element type.
    pub from: ElemType,
    /// The accumulator's element type.
    pub to: ElemType,
}

impl Matmul {
    /// Cycles: `setup + m · ceil(k / k_per_cycle) · ceil(n / lanes)`.
    pub fn cycles(&self, cfg: &NpuConfig) -> u64 {
        cfg.matmul_cycles(self.m, self.k, self.n, self.from)
    }

    /// The TRF bytes `B` occupies in each lane: `[b_base, b_base + ceil(n / lanes) · k · size)`.
    pub fn lane_bytes(&self, cfg: &NpuConfig) -> (u64, u64) {
        let rows = self.n.div_ceil(cfg.trf_lanes.max(1));
        (self.b_base, self.b_base.saturating_add(rows.saturating_mul(self.k).saturating_mul(self.from.bytes())))
    }

    /// The TRF byte where `B[row][col]` is.
    pub fn b_offset(&self, row: u64, col: u64, cfg: &NpuConfig) -> u64 {
        let lanes = cfg.trf_lanes.max(1);
        (col % lanes) * cfg.trf_lane_bytes + self.b_base + ((col / lanes) * self.k + row) * self.from.bytes()
    }
}

/// Decodes `op`; the message says what is malformed.
pub fn decode(ctx: &Context, op: OpId) -> Result<Matmul, String> {
    let slices = onchip::slices_of(ctx, op)?;
    let dim = |name: &str| {
        int_prop(ctx, op, name)
            .and_then(|v| u64::try_from(v).ok())
            .filter(|&v| v > 0)
            .ok_or(format!("'{name}' must be a positive integer"))
    };
    let (m, k, n) = (dim("m")?, dim("k")?, dim("n")?);
    let a = onchip::operand_of(ctx, op, "a")?;
    let c = onchip::operand_of(ctx, op, "c")?;
    let b_base = int_prop(ctx, op, "b_base")
        .and_then(|v| u64::try_from(v).ok())
        .ok_or("'b_base' must be a non-negative integer")?;
    let accumulate = unit_flag(ctx, op, "accumulate")?;
    let (from, to) = (elem_prop(ctx, op, "dtype")?, elem_prop(ctx, op, "out_dtype")?);
    Ok(Matmul { slices, m, k, n, a, b_base, c, accumulate, from, to })
}

/// The machine's rules for a matmul.
pub fn check(mm: &Matmul, cfg: &NpuConfig) -> Result<(), String> {
    onchip::check_slices(&mm.slices, cfg)?;
    onchip::check_space("a", &mm.a, &[Space::Dm])?;
    onchip::check_space("c", &mm.c, &[Space::Acc])?;
    let widened = match mm.from {
        ElemType::Bf16 | ElemType::F16 | ElemType::F32 => ElemType::F32,
        ElemType::I8 => ElemType::I32,
        other => return Err(format!("does not multiply {} elements (bf16, f16, f32 or i8)", elem_name(other))),
    };
    if mm.to != widened {
        return Err(format!(
            "{} products accumulate in {}, not {}",
            elem_name(mm.from),
            elem_name(widened),
            elem_name(mm.to)
        ));
    }
    onchip::check_operand("a", &mm.a, mm.from.bytes(), false, cfg)?;
    onchip::check_operand("c", &mm.c, 4, true, cfg)?;
    let count = |o: &Operand, t: ElemType| o.pattern.bytes().unwrap_or(u64::MAX) / t.bytes();
    let (a, c) = (count(&mm.a, mm.from), count(&mm.c, mm.to));
    if a != mm.m.saturating_mul(mm.k) || c != mm.m.saturating_mul(mm.n) {
        return Err(format!(
            "m {} k {} n {} needs {} elements of a and {} of c, but a has {a} and c has {c}",
            mm.m,
            mm.k,
            mm.n,
            mm.m.saturating_mul(mm.k),
            mm.m.saturating_mul(mm.n)
        ));
    }
    let (low, high) = mm.lane_bytes(cfg);
    if high > cfg.trf_lane_bytes || !low.is_multiple_of(mm.from.bytes()) {
        return Err(format!(
            "b takes bytes {low}..{high} of each TRF lane, which holds {} B (and starts at a whole element)",
            cfg.trf_lane_bytes
        ));
    }
    Ok(())
}

/// `queue(...) [waits(...)] on(...) m M k K n N a(...) b(trf, base B) c(...) [accumulate] : T -> U [signals(...)]`.
fn parse<'s>(p: &mut CustomParser<'_, 's>) -> Result<ParsedOp<'s>, Diagnostic> {
    let mut op = ParsedOp::default();
    onchip::parse_head(p, &mut op)?;
    for name in ["m", "k", "n"] {
        p.expect_keyword(name)?;
        let v = int(p)?;
        int_prop_of(p.ctx(), &mut op, name, v);
    }
    onchip::parse_operand(p, &mut op, "a")?;
    p.expect_keyword("b")?;
    let (items, loc) = p.group(Delim::Paren)?;
    let mut inner = p.nested(items, loc);
    inner.expect_keyword("trf")?;
    inner.expect_punct(",")?;
    inner.expect_keyword("base")?;
    let base = int(&mut inner)?;
    inner.expect_end()?;
    int_prop_of(p.ctx(), &mut op, "b_base", base);
    onchip::parse_operand(p, &mut op, "c")?;
    parse_flag(p, &mut op, "accumulate");
    parse_tail(p, &mut op)?;
    Ok(op)
}

fn print(p: &mut OpPrinter<'_, '_>, op: OpId) -> fmt::Result {
    let mm = decode(p.ctx(), op).map_err(|_| fmt::Error)?;
    onchip::print_head(p, op, &mm.slices)?;
    p.write(&format!(" m {} k {} n {}", mm.m, mm.k, mm.n));
    onchip::print_operand(p, "a", &mm.a)?;
    p.write(&format!(" b(trf, base {})", mm.b_base));
    onchip::print_operand(p, "c", &mm.c)?;
    let ctx = p.ctx();
    if ctx.op_attr(op, "accumulate").is_some_and(|a| !matches!(ctx.attr_data(a), Attr::Unit)) {
        return Err(fmt::Error);
    }
    if mm.accumulate {
        p.write(" accumulate");
    }
    let mut elided: Vec<String> = onchip::props("a").into_iter().chain(onchip::props("c")).collect();
    elided.extend(["chip", "cluster", "slices", "m", "k", "n", "b_base", "accumulate"].map(String::from));
    let waits = ints(p.ctx(), op, "waits").ok_or(fmt::Error)?.len();
    print_tail(p, op, waits, &elided)
}
