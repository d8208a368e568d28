//! `npu.memset`: fills bytes of on-chip memory with one value, on every slice of a range at once (compute
//! instructions are SPMD over slices: each slice fills its own memory).
//!
//! `npu.memset queue(main) dst(dm[0, 0:16], base 0, loops [(4, 256)], packet 64) value 0.0 : f32 signals(%s = 1)`
//! fills, in data memory of slices 0 to 15 of cluster 0, `packet` bytes at `base + Σ i·stride` for each tuple of
//! loop indices with the value as `f32` elements. `acc[c, s]` names the accumulator instead (32-bit types only).
//! Writes into DM are 8-byte aligned; the pattern is injective and inside the space. It costs
//! `setup + ceil(bytes / flit)` cycles, the slices working in lockstep.
//!
//! Properties: `queue`, `space` (`"dm"` or `"acc"`), `cluster`, `slices` (`[first, end)`), `base`, `loops`
//! (`[[count, stride], ...]`), `packet`, `value`, `dtype`, `waits`, `signals`; operands: the semaphores.

use super::clauses::{elem, int, int_list, int_prop, ints, parse_queue, parse_syncs, print_queue, print_syncs};
use super::clauses::{loops_prop, parse_tuples, queue_index, str_prop, sync_of};
use crate::dialects::npu::access::{AccessPattern, Injectivity};
use crate::dialects::npu::types::{elem_name, elem_type};
use crate::ir::asm::{CustomParser, Delim, ParsedOp};
use crate::ir::print::format_float;
use crate::ir::print::OpPrinter;
use crate::ir::types::FloatKind;
use crate::ir::verify::op_error;
use crate::ir::{Arity, Attr, Context, Diagnostic, OpId, OpInfo, OpTrait, Syntax};
use crate::machine::{ElemType, NpuConfig};
use std::fmt;

/// The registration of `npu.memset`.
pub const MEMSET: OpInfo = OpInfo {
    operands: Arity::Any,
    traits: &[OpTrait::HasParent(&["npu.kernel"])],
    verify: Some(verify),
    syntax: Syntax::Custom { parse, print },
    ..OpInfo::new("npu.memset", "fills on-chip memory of a range of slices with one value")
};

/// On-chip memories an instruction names.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Space {
    /// A slice's data memory.
    Dm,
    /// A slice's accumulator.
    Acc,
}

impl Space {
    /// The bytes one slice holds of it.
    pub fn capacity(self, cfg: &NpuConfig) -> u64 {
        match self {
            Space::Dm => cfg.dm_slice_bytes,
            Space::Acc => cfg.acc_slice_bytes,
        }
    }
}

/// A decoded `npu.memset`.
#[derive(Clone, Debug)]
pub struct Memset {
    /// Which memory.
    pub space: Space,
    /// The cluster.
    pub cluster: u64,
    /// The slices, `[first, end)`.
    pub slices: (u64, u64),
    /// The bytes of each slice it fills.
    pub pattern: AccessPattern,
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
        cfg.flit_cycles(self.pattern.bytes().unwrap_or(u64::MAX))
    }
}

/// Decodes `op`; the message says what is malformed.
pub fn decode(ctx: &Context, op: OpId) -> Result<Memset, String> {
    let space = match str_prop(ctx, op, "space") {
        Some("dm") => Space::Dm,
        Some("acc") => Space::Acc,
        _ => return Err("'space' must be \"dm\" or \"acc\"".into()),
    };
    let nonneg = |name: &str| {
        int_prop(ctx, op, name)
            .and_then(|v| u64::try_from(v).ok())
            .ok_or(format!("'{name}' must be a non-negative integer"))
    };
    let cluster = nonneg("cluster")?;
    let base = nonneg("base")?;
    let slices = ints(ctx, op, "slices").ok_or("'slices' must be [first, end]")?;
    let [first, end] = slices[..] else { return Err("'slices' must be [first, end]".into()) };
    let (Ok(first), Ok(end)) = (u64::try_from(first), u64::try_from(end)) else {
        return Err(format!("slices {first}:{end} must not be negative"));
    };
    let packet = int_prop(ctx, op, "packet").and_then(|p| u32::try_from(p).ok()).ok_or("'packet' must fit a u32")?;
    let loops: Vec<(u32, i64)> = loops_prop(ctx, op, "loops", 2)?.iter().map(|l| (l[0] as u32, l[1])).collect();
    let dtype = elem_type(str_prop(ctx, op, "dtype").ok_or("needs 'dtype'")?).map_err(|e| e.message)?;
    let value = match ctx.op_attr(op, "value").map(|a| ctx.attr_data(a)) {
        Some(Attr::Float { bits, .. }) => f64::from_bits(*bits),
        Some(other) => other.as_int().ok_or("'value' must be a number")? as f64,
        None => return Err("needs 'value'".into()),
    };
    let pattern = AccessPattern::new(base, &loops, packet);
    Ok(Memset { space, cluster, slices: (first, end), pattern, dtype, value })
}

/// The machine's rules for a memset.
pub fn check(m: &Memset, cfg: &NpuConfig) -> Result<(), String> {
    let (first, end) = m.slices;
    if m.cluster >= cfg.clusters || first >= end || end > cfg.slices_per_cluster {
        return Err(format!(
            "slices {first}:{end} of cluster {} are not a non-empty range on the chip ({} clusters of {} slices)",
            m.cluster, cfg.clusters, cfg.slices_per_cluster
        ));
    }
    let bytes = m.dtype.bytes();
    if m.dtype == ElemType::F8 || (m.space == Space::Acc && bytes != 4) {
        return Err(format!("cannot fill {} with {} elements", space_name(m.space), elem_name(m.dtype)));
    }
    let p = &m.pattern;
    if !(p.packet as u64).is_multiple_of(bytes) {
        return Err(format!("a packet of {} B is not a whole number of {} elements", p.packet, elem_name(m.dtype)));
    }
    let align = cfg.dm_write_align as i64;
    if let (Space::Dm, Some((what, v))) = (m.space, p.misaligned(align)) {
        return Err(format!("writes into DM must be {align}-byte aligned, but the {what} is {v}"));
    }
    let size = m.space.capacity(cfg);
    if !p.within(size) {
        let (low, high) = p.range().expect("a pattern out of bounds touches bytes");
        return Err(format!("fills bytes {low}..{high}, outside the {size} B of {} per slice", space_name(m.space)));
    }
    match p.injectivity() {
        Injectivity::Injective => Ok(()),
        Injectivity::Overlap(a, b) => Err(format!("writes twice: packets at offsets {a} and {b} overlap")),
        Injectivity::Unknown => Err("cannot show the pattern writes each byte once (MAX_ENUMERATED_PACKETS)".into()),
    }
}

fn space_name(space: Space) -> &'static str {
    match space {
        Space::Dm => "dm",
        Space::Acc => "acc",
    }
}

fn verify(ctx: &Context, op: OpId) -> Result<(), Diagnostic> {
    let cfg = NpuConfig::default();
    let err = |m: String| op_error(ctx, op, m);
    let m = decode(ctx, op).map_err(err)?;
    sync_of(ctx, op, 0).map_err(err)?;
    let queue = str_prop(ctx, op, "queue").unwrap_or_default();
    if queue_index(queue, cfg.dma_engines).is_none_or(|q| q < cfg.dma_engines as usize) {
        return Err(err(format!("runs on the main or sub queue, not '{queue}'")));
    }
    check(&m, &cfg).map_err(err)
}

fn parse<'s>(p: &mut CustomParser<'_, 's>) -> Result<ParsedOp<'s>, Diagnostic> {
    let mut op = ParsedOp::default();
    parse_queue(p, &mut op)?;
    parse_syncs(p, &mut op, "waits")?;
    p.expect_keyword("dst")?;
    let (items, loc) = p.group(Delim::Paren)?;
    let mut dst = p.nested(items, loc);
    let space = if dst.eat_keyword("acc") { "acc" } else { dst.expect_keyword("dm").map(|_| "dm")? };
    let (items, loc) = dst.group(Delim::Square)?;
    let mut at = dst.nested(items, loc);
    let cluster = int(&mut at)?;
    at.expect_punct(",")?;
    let first = int(&mut at)?;
    let end = if at.eat_punct(":") { int(&mut at)? } else { first + 1 };
    at.expect_end()?;
    dst.expect_punct(",")?;
    dst.expect_keyword("base")?;
    let base = int(&mut dst)?;
    dst.expect_punct(",")?;
    dst.expect_keyword("loops")?;
    let loops = parse_tuples(&mut dst, 2)?;
    dst.expect_punct(",")?;
    dst.expect_keyword("packet")?;
    let packet = int(&mut dst)?;
    dst.expect_end()?;
    p.expect_keyword("value")?;
    let value = p.f64_attr()?;
    p.expect_punct(":")?;
    let dtype = elem(p)?;
    let mut signals = ParsedOp::default();
    parse_syncs(p, &mut signals, "signals")?;
    p.attr_dict(&mut op);
    p.expect_end()?;
    let ctx = p.ctx();
    let i64t = ctx.int_type(64);
    let slices = int_list(ctx, &[first, end]);
    let entries = [
        ("space", ctx.string_attr(space)),
        ("cluster", ctx.int_attr(cluster as i128, i64t)),
        ("slices", slices),
        ("base", ctx.int_attr(base as i128, i64t)),
        ("loops", loops),
        ("packet", ctx.int_attr(packet as i128, i64t)),
        ("value", value),
        ("dtype", ctx.string_attr(elem_name(dtype))),
    ];
    for (k, v) in entries {
        let key = ctx.sym(k);
        op.props.push((key, v));
    }
    op.operands.extend(signals.operands);
    op.props.extend(signals.props);
    Ok(op)
}

fn print(p: &mut OpPrinter<'_, '_>, op: OpId) -> fmt::Result {
    let m = decode(p.ctx(), op).map_err(|_| fmt::Error)?;
    print_queue(p, op)?;
    print_syncs(p, op, "waits", 0)?;
    let (first, end) = m.slices;
    let slices = if end == first + 1 { first.to_string() } else { format!("{first}:{end}") };
    let loops: Vec<String> = m.pattern.loops.iter().map(|l| format!("({}, {})", l.count, l.stride)).collect();
    p.write(&format!(
        " dst({}[{}, {slices}], base {}, loops [{}], packet {}) value ",
        space_name(m.space),
        m.cluster,
        m.pattern.base,
        loops.join(", "),
        m.pattern.packet
    ));
    p.write(&format_float(m.value, FloatKind::F64));
    p.write(&format!(" : {}", elem_name(m.dtype)));
    let waits = ints(p.ctx(), op, "waits").ok_or(fmt::Error)?.len();
    print_syncs(p, op, "signals", waits)?;
    let elided =
        ["queue", "space", "cluster", "slices", "base", "loops", "packet", "value", "dtype", "waits", "signals"];
    p.attr_dict(op, &elided)
}
