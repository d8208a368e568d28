//! Reductions, on 32-bit elements (`f32`, `i32`; integers wrap), `sum`, `max` or `min` (a float NaN wins, as in
//! `npu.vec.binary`):
//!
//! - `npu.vec.reduce sum queue(main) on(0, 0:4) src(dm, ...) dst(dm, ...) : f32`, within each slice: the source's
//!   elements are rows of `w = src / dst` elements, and each row gives one element of the destination. It costs
//!   `setup + ceil(src / 8) + ceil(log2 w)` cycles (the rate of the vector unit plus its reduction tree's depth).
//! - `npu.reduce.slices sum queue(main) on(0, 0:16) src(dm, ...) dst(dm, ...) : f32`, across the slices of the
//!   range: element `e` of the destination, on every slice, is the reduction of element `e` of the source over the
//!   slices (all-reduce). It costs `setup + ceil(n / 8) + slices` cycles (a ring around the group).
//!
//! Both reduce in a fixed order (ascending elements, ascending slices), so sums are deterministic.
//!
//! Properties: `kind`, `queue`, the slices and the `src`/`dst` operands (`onchip`), `dtype`, `waits`, `signals`;
//! operands: the semaphores.

use super::clauses::{elem_prop, ints, parse_kind, parse_tail, print_kind, print_tail, str_prop};
use super::instruction::registration;
use super::onchip::{self, Operand, Slices, Space};
use super::vector::extremum;
use crate::dialects::npu::types::elem_name;
use crate::ir::asm::{CustomParser, ParsedOp};
use crate::ir::print::OpPrinter;
use crate::ir::{Context, Diagnostic, OpId, OpInfo};
use crate::machine::{ElemType, NpuConfig};
use std::fmt;

/// The registration of `npu.vec.reduce`.
pub const WITHIN: OpInfo =
    registration("npu.vec.reduce", "reduces rows of on-chip elements within each slice", parse, print);

/// The registration of `npu.reduce.slices`.
pub const ACROSS: OpInfo = registration(
    "npu.reduce.slices",
    "reduces on-chip elements across the slices of a range (all-reduce)",
    parse,
    print,
);

const KINDS: &[&str] = &["sum", "max", "min"];

/// A decoded reduction.
#[derive(Clone, Debug)]
pub struct Reduce {
    /// Across the slices (`npu.reduce.slices`) rather than within each.
    pub across: bool,
    /// `sum`, `max` or `min`.
    pub kind: String,
    /// The slices.
    pub slices: Slices,
    /// What it reduces.
    pub src: Operand,
    /// Where the results go.
    pub dst: Operand,
    /// `f32` or `i32`.
    pub dtype: ElemType,
}

impl Reduce {
    fn count(o: &Operand) -> u64 {
        o.pattern.bytes().unwrap_or(u64::MAX) / 4
    }

    /// Elements each result reduces within a slice (1 across slices).
    pub fn width(&self) -> u64 {
        if self.across {
            1
        } else {
            Self::count(&self.src) / Self::count(&self.dst).max(1)
        }
    }

    /// Cycles (see the module's documentation).
    pub fn cycles(&self, cfg: &NpuConfig) -> u64 {
        let rate = cfg.vector_cycles(Self::count(&self.src), false);
        let extra = if self.across { self.slices.end - self.slices.first } else { ceil_log2(self.width()) };
        rate.saturating_add(extra)
    }

    /// Combines two elements (32-bit words).
    fn combine(&self, x: u32, y: u32) -> u32 {
        let kind = self.kind.as_str();
        if self.dtype == ElemType::I32 {
            let (x, y) = (x as i32, y as i32);
            return match kind {
                "sum" => x.wrapping_add(y),
                "max" => x.max(y),
                _ => x.min(y),
            } as u32;
        }
        let (x, y) = (f32::from_bits(x), f32::from_bits(y));
        match kind {
            "sum" => x + y,
            "max" => extremum(x, y, x >= y),
            _ => extremum(x, y, x <= y),
        }
        .to_bits()
    }

    /// Within a slice: each row of [`Reduce::width`] elements of `src` reduced in order.
    pub fn rows(&self, src: &[u32]) -> Vec<u32> {
        let w = self.width().max(1) as usize;
        src.chunks(w).map(|row| row[1..].iter().fold(row[0], |acc, &x| self.combine(acc, x))).collect()
    }

    /// Across slices: element by element, folding in `next` (the next slice's elements) into `acc`.
    pub fn fold(&self, acc: &mut [u32], next: &[u32]) {
        for (a, &x) in acc.iter_mut().zip(next) {
            *a = self.combine(*a, x);
        }
    }
}

fn ceil_log2(w: u64) -> u64 {
    if w <= 1 {
        0
    } else {
        64 - (w - 1).leading_zeros() as u64
    }
}

/// Decodes `op`; the message says what is malformed.
pub fn decode(ctx: &Context, op: OpId) -> Result<Reduce, String> {
    let across = ctx.op_name(op) == "npu.reduce.slices";
    let kind = str_prop(ctx, op, "kind").ok_or("needs 'kind'")?.to_string();
    let slices = onchip::slices_of(ctx, op)?;
    let src = onchip::operand_of(ctx, op, "src")?;
    let dst = onchip::operand_of(ctx, op, "dst")?;
    let dtype = elem_prop(ctx, op, "dtype")?;
    Ok(Reduce { across, kind, slices, src, dst, dtype })
}

/// The machine's rules for a reduction.
pub fn check(r: &Reduce, cfg: &NpuConfig) -> Result<(), String> {
    if !KINDS.contains(&r.kind.as_str()) {
        return Err(format!("unknown reduction '{}' (one of {})", r.kind, KINDS.join(", ")));
    }
    if !matches!(r.dtype, ElemType::F32 | ElemType::I32) {
        return Err(format!("reduces 32-bit elements (f32, i32), not {}", elem_name(r.dtype)));
    }
    onchip::check_slices(&r.slices, cfg)?;
    let sources: &[Space] = if r.across { &[Space::Dm, Space::Acc] } else { &[Space::Dm, Space::Acc, Space::Vrf] };
    onchip::check_space("src", &r.src, sources)?;
    onchip::check_space("dst", &r.dst, &[Space::Dm, Space::Acc])?;
    onchip::check_operand("src", &r.src, 4, false, cfg)?;
    onchip::check_operand("dst", &r.dst, 4, true, cfg)?;
    let (n, m) = (Reduce::count(&r.src), Reduce::count(&r.dst));
    if n == 0 {
        return Err("src has no elements to reduce".into());
    }
    let fits = if r.across { n == m } else { m > 0 && n.is_multiple_of(m) };
    if !fits {
        let want = if r.across { "as many" } else { "a whole multiple of the" };
        return Err(format!("src has {n} elements, not {want} elements dst has ({m})"));
    }
    Ok(())
}

/// `kind queue(...) [waits(...)] on(...) src(...) dst(...) : T [signals(...)]`.
fn parse<'s>(p: &mut CustomParser<'_, 's>) -> Result<ParsedOp<'s>, Diagnostic> {
    let mut op = ParsedOp::default();
    parse_kind(p, &mut op, "the reduction (sum, max or min)")?;
    onchip::parse_head(p, &mut op)?;
    onchip::parse_operand(p, &mut op, "src")?;
    onchip::parse_operand(p, &mut op, "dst")?;
    parse_tail(p, &mut op)?;
    Ok(op)
}

fn print(p: &mut OpPrinter<'_, '_>, op: OpId) -> fmt::Result {
    let r = decode(p.ctx(), op).map_err(|_| fmt::Error)?;
    print_kind(p, &r.kind)?;
    onchip::print_head(p, op, &r.slices)?;
    onchip::print_operand(p, "src", &r.src)?;
    onchip::print_operand(p, "dst", &r.dst)?;
    let mut elided: Vec<String> = onchip::props("src").into_iter().chain(onchip::props("dst")).collect();
    elided.extend(["kind", "chip", "cluster", "slices"].map(String::from));
    let waits = ints(p.ctx(), op, "waits").ok_or(fmt::Error)?.len();
    print_tail(p, op, waits, &elided)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialects::npu::access::AccessPattern;

    fn reduce(kind: &str, across: bool, dtype: ElemType, src: u32, dst: u32) -> Reduce {
        let on = |bytes| Operand { space: Space::Dm, pattern: AccessPattern::new(0, &[], bytes) };
        let slices = Slices { chip: 0, cluster: 0, first: 0, end: 4 };
        Reduce { across, kind: kind.into(), slices, src: on(src * 4), dst: on(dst * 4), dtype }
    }

    #[test]
    fn rows_reduce_in_order() {
        let words: Vec<u32> = [1.0f32, 2.0, 3.0, -4.0, 5.0, 0.5].iter().map(|x| x.to_bits()).collect();
        let sums = reduce("sum", false, ElemType::F32, 6, 2).rows(&words);
        assert_eq!(sums, [6.0f32.to_bits(), 1.5f32.to_bits()]);
        let max = reduce("max", false, ElemType::F32, 6, 3).rows(&words);
        assert_eq!(max, [2.0f32.to_bits(), 3.0f32.to_bits(), 5.0f32.to_bits()]);
        let ints: Vec<u32> = [i32::MAX, 1, -7, 3].iter().map(|&x| x as u32).collect();
        assert_eq!(reduce("sum", false, ElemType::I32, 4, 2).rows(&ints), [i32::MIN as u32, (-4i32) as u32]);
        assert_eq!(reduce("min", false, ElemType::I32, 4, 1).rows(&ints), [(-7i32) as u32]);
    }

    #[test]
    fn slices_fold_element_by_element() {
        let r = reduce("max", true, ElemType::I32, 2, 2);
        let mut acc = vec![1u32, (-5i32) as u32];
        r.fold(&mut acc, &[0, (-2i32) as u32]);
        assert_eq!(acc, [1, (-2i32) as u32]);
        // 64 + ceil(2 / 8) + 4 slices.
        assert_eq!(r.cycles(&NpuConfig::default()), 69);
        // 64 + ceil(6 / 8) + ceil(log2 3).
        assert_eq!(reduce("sum", false, ElemType::F32, 6, 2).cycles(&NpuConfig::default()), 67);
    }
}
