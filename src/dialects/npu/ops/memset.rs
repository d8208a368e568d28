//! `npu.memset`: fills bytes of on-chip memory with one value, on every slice of a range at once.
//!
//! `npu.memset queue(main) on(0, 0:16) dst(dm, base 0, loops [(4, 256)], packet 64) value 0.0 : f32 signals(%s = 1)`
//! fills, in the data memory of slices 0 to 15 of cluster 0, the `packet` bytes at `base + Σ i·stride` for each
//! tuple of loop indices with the value as `f32` elements. `acc` names the accumulator instead (32-bit types only).
//! It costs `setup + ceil(bytes / flit)` cycles, the slices working in lockstep.
//!
//! Properties: `queue`, the slices and the `dst` operand (`onchip`), `value`, `dtype`, `waits`, `signals`;
//! operands: the semaphores.

use super::clauses::{elem_prop, parse_tail, print_tail};
use super::instruction::registration;
use super::onchip::{self, Operand, Slices, Space};
use crate::dialects::npu::types::elem_name;
use crate::ir::asm::{CustomParser, ParsedOp};
use crate::ir::print::{format_float, OpPrinter};
use crate::ir::types::FloatKind;
use crate::ir::{Attr, Context, Diagnostic, OpId, OpInfo};
use crate::machine::{ElemType, NpuConfig};
use std::fmt;

/// The registration of `npu.memset`.
pub const MEMSET: OpInfo =
    registration("npu.memset", "fills on-chip memory of a range of slices with one value", parse, print);

/// A decoded `npu.memset`.
#[derive(Clone, Debug)]
pub struct Memset {
    /// The slices.
    pub slices: Slices,
    /// The bytes of each slice it fills.
    pub dst: Operand,
    /// The element type.
    pub dtype: ElemType,
    /// The value.
    pub value: f64,
}

impl Memset {
    /// The little-endian bytes of one element of the value.
    pub fn element(&self) -> Vec<u8> {
        let v = self.value;
        match self.dtype {
            ElemType::F32 => (v as f32).to_le_bytes().to_vec(),
            ElemType::Bf16 => half::bf16::from_f64(v).to_bits().to_le_bytes().to_vec(),
            ElemType::F16 => half::f16::from_f64(v).to_bits().to_le_bytes().to_vec(),
            ElemType::I32 => (v as i32).to_le_bytes().to_vec(),
            ElemType::I8 => (v as i8).to_le_bytes().to_vec(),
            ElemType::F8 => vec![0], // Refused by the verifier: no f8 encoding yet.
        }
    }

    /// Cycles: `setup + ceil(bytes / flit)` for one slice (they run in lockstep).
    pub fn cycles(&self, cfg: &NpuConfig) -> u64 {
        cfg.flit_cycles(self.dst.pattern.bytes().unwrap_or(u64::MAX))
    }
}

/// Decodes `op`; the message says what is malformed.
pub fn decode(ctx: &Context, op: OpId) -> Result<Memset, String> {
    let slices = onchip::slices_of(ctx, op)?;
    let dst = onchip::operand_of(ctx, op, "dst")?;
    let dtype = elem_prop(ctx, op, "dtype")?;
    let value = match ctx.op_attr(op, "value").map(|a| ctx.attr_data(a)) {
        Some(Attr::Float { bits, .. }) => f64::from_bits(*bits),
        Some(other) => other.as_int().ok_or("'value' must be a number")? as f64,
        None => return Err("needs 'value'".into()),
    };
    Ok(Memset { slices, dst, dtype, value })
}

/// The machine's rules for a memset.
pub fn check(m: &Memset, cfg: &NpuConfig) -> Result<(), String> {
    onchip::check_slices(&m.slices, cfg)?;
    onchip::check_space("dst", &m.dst, &[Space::Dm, Space::Acc])?;
    if m.dtype == ElemType::F8 || (m.dst.space == Space::Acc && m.dtype.bytes() != 4) {
        return Err(format!("cannot fill {} with {} elements", m.dst.space.name(), elem_name(m.dtype)));
    }
    onchip::check_operand("dst", &m.dst, m.dtype.bytes(), true, cfg)
}

fn parse<'s>(p: &mut CustomParser<'_, 's>) -> Result<ParsedOp<'s>, Diagnostic> {
    let mut op = ParsedOp::default();
    onchip::parse_head(p, &mut op)?;
    onchip::parse_operand(p, &mut op, "dst")?;
    p.expect_keyword("value")?;
    let value = p.f64_attr()?;
    parse_tail(p, &mut op)?;
    let key = p.ctx().sym("value");
    op.props.push((key, value));
    Ok(op)
}

fn print(p: &mut OpPrinter<'_, '_>, op: OpId) -> fmt::Result {
    let m = decode(p.ctx(), op).map_err(|_| fmt::Error)?;
    onchip::print_head(p, op, &m.slices)?;
    onchip::print_operand(p, "dst", &m.dst)?;
    p.write(&format!(" value {}", format_float(m.value, FloatKind::F64)));
    let waits = super::clauses::ints(p.ctx(), op, "waits").ok_or(fmt::Error)?.len();
    let mut elided: Vec<String> = onchip::props("dst").into();
    elided.extend(["chip", "cluster", "slices", "value"].map(String::from));
    print_tail(p, op, waits, &elided)
}
