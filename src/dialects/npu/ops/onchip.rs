//! The operands of compute instructions. A compute instruction runs on a range of slices of one cluster at once
//! (`on(0, 0:16)`: SPMD, each slice on its own memories), and names each operand by an access pattern into an
//! on-chip space of those slices: `src(dm, base 0, loops [(4, 256)], packet 64)`. Its elements are the pattern's
//! bytes in order.
//!
//! Properties: `cluster` and `slices` (`[first, end)`) once per instruction; per operand `name`, `name_space`
//! (`"dm"` or `"acc"`), `name_base`, `name_loops` (`[[count, stride], ...]`) and `name_packet`.

use super::clauses::{
    int, int_list, int_prop, ints, loops_prop, parse_queue, parse_syncs, parse_tuples, print_queue, print_syncs, prop,
    str_prop,
};
use super::instruction::Site;
use crate::dialects::npu::access::{AccessPattern, Injectivity};
use crate::ir::asm::{AsmItem, CustomParser, Delim, ParsedOp};
use crate::ir::print::OpPrinter;
use crate::ir::{Context, Diagnostic, OpId};
use crate::machine::NpuConfig;
use std::fmt;

/// On-chip memories an instruction names, each a byte array per slice.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Space {
    /// A slice's data memory.
    Dm,
    /// A slice's accumulator (32-bit elements).
    Acc,
    /// A slice's tensor register file, the matmul's stationary operand: lane `l` is bytes
    /// `[l · lane_bytes, (l + 1) · lane_bytes)`. Only `npu.load_trf` writes it.
    Trf,
    /// A slice's vector register file (32-bit elements). Only `npu.load_vrf` writes it.
    Vrf,
}

impl Space {
    /// Every space, in the order of [`Space::index`].
    pub const ALL: [Space; 4] = [Space::Dm, Space::Acc, Space::Trf, Space::Vrf];

    /// The bytes one slice holds of it.
    pub fn capacity(self, cfg: &NpuConfig) -> u64 {
        match self {
            Space::Dm => cfg.dm_slice_bytes,
            Space::Acc => cfg.acc_slice_bytes,
            Space::Trf => cfg.trf_lanes.saturating_mul(cfg.trf_lane_bytes),
            Space::Vrf => cfg.vrf_slice_bytes,
        }
    }

    /// `dm`, `acc`, `trf` or `vrf`.
    pub fn name(self) -> &'static str {
        match self {
            Space::Dm => "dm",
            Space::Acc => "acc",
            Space::Trf => "trf",
            Space::Vrf => "vrf",
        }
    }

    /// The space called `name`.
    pub fn named(name: &str) -> Option<Space> {
        Space::ALL.into_iter().find(|s| s.name() == name)
    }

    /// 0 to 3, in the order of [`Space::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
}

/// The slices an instruction runs on.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Slices {
    /// The chip.
    pub chip: u64,
    /// The cluster.
    pub cluster: u64,
    /// First slice.
    pub first: u64,
    /// One past the last slice.
    pub end: u64,
}

impl Slices {
    /// The memory of `space` of slice `slice` of the range.
    pub fn site(&self, space: Space, slice: u64) -> Site {
        Site::Slice(space, self.chip, self.cluster, slice)
    }
}

/// One operand: a space and the pattern of its bytes on each slice.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Operand {
    /// The space.
    pub space: Space,
    /// The bytes, on every slice.
    pub pattern: AccessPattern,
}

/// Parses the head every compute instruction shares: `queue(q) [waits(...)] on(...)`.
pub fn parse_head<'s>(p: &mut CustomParser<'_, 's>, op: &mut ParsedOp<'s>) -> Result<(), Diagnostic> {
    parse_queue(p, op)?;
    parse_syncs(p, op, "waits")?;
    parse_slices(p, op)
}

/// Prints the head every compute instruction shares: ` queue(q) [waits(...)] on(...)`.
pub fn print_head(p: &mut OpPrinter<'_, '_>, op: OpId, slices: &Slices) -> fmt::Result {
    print_queue(p, op)?;
    print_syncs(p, op, "waits", 0)?;
    print_slices(p, slices);
    Ok(())
}

/// Parses `on(cluster, first:end)` (or `on(cluster, slice)`), or `on(chip, cluster, first:end)` off chip 0.
pub fn parse_slices<'s>(p: &mut CustomParser<'_, 's>, op: &mut ParsedOp<'s>) -> Result<(), Diagnostic> {
    p.expect_keyword("on")?;
    let (items, loc) = p.group(Delim::Paren)?;
    let mut at = p.nested(items, loc);
    let mut numbers = vec![int(&mut at)?];
    at.expect_punct(",")?;
    numbers.push(int(&mut at)?);
    if at.eat_punct(",") {
        numbers.push(int(&mut at)?);
    }
    let first = numbers.pop().expect("two or three numbers");
    let end = if at.eat_punct(":") { int(&mut at)? } else { first.saturating_add(1) };
    at.expect_end()?;
    let (chip, cluster) = match numbers[..] {
        [chip, cluster] => (chip, cluster),
        [cluster] => (0, cluster),
        _ => unreachable!("one or two numbers before the slices"),
    };
    let ctx = p.ctx();
    let i64t = ctx.int_type(64);
    let mut entries = vec![("cluster", ctx.int_attr(cluster as i128, i64t)), ("slices", int_list(ctx, &[first, end]))];
    if chip != 0 {
        entries.push(("chip", ctx.int_attr(chip as i128, i64t)));
    }
    for (k, v) in entries {
        prop(ctx, op, k, v);
    }
    Ok(())
}

/// Parses `name(space, base B, loops [(count, stride), ...], packet P)`.
pub fn parse_operand<'s>(p: &mut CustomParser<'_, 's>, op: &mut ParsedOp<'s>, name: &str) -> Result<(), Diagnostic> {
    p.expect_keyword(name)?;
    let (items, loc) = p.group(Delim::Paren)?;
    let mut inner = p.nested(items, loc);
    let space = match inner.next_item() {
        Some(AsmItem::Keyword(k, _)) if Space::named(k).is_some() => k,
        _ => return Err(inner.expected("a space (dm, acc, trf or vrf)")),
    };
    inner.expect_punct(",")?;
    inner.expect_keyword("base")?;
    let base = int(&mut inner)?;
    inner.expect_punct(",")?;
    inner.expect_keyword("loops")?;
    let loops = parse_tuples(&mut inner, 2)?;
    inner.expect_punct(",")?;
    inner.expect_keyword("packet")?;
    let packet = int(&mut inner)?;
    inner.expect_end()?;
    let ctx = p.ctx();
    let i64t = ctx.int_type(64);
    let entries = [
        ("space", ctx.string_attr(space)),
        ("base", ctx.int_attr(base as i128, i64t)),
        ("loops", loops),
        ("packet", ctx.int_attr(packet as i128, i64t)),
    ];
    for (k, v) in entries {
        prop(ctx, op, &format!("{name}_{k}"), v);
    }
    Ok(())
}

/// The slices of `op`.
pub fn slices_of(ctx: &Context, op: OpId) -> Result<Slices, String> {
    let cluster = int_prop(ctx, op, "cluster")
        .and_then(|c| u64::try_from(c).ok())
        .ok_or("'cluster' must be a non-negative integer")?;
    let chip = match ctx.op_attr(op, "chip") {
        None => 0,
        Some(_) => int_prop(ctx, op, "chip")
            .and_then(|c| u64::try_from(c).ok())
            .ok_or("'chip' must be a non-negative integer")?,
    };
    let bad = || "'slices' must be [first, end]".to_string();
    let [first, end] = ints(ctx, op, "slices").ok_or_else(bad)?[..] else { return Err(bad()) };
    match (u64::try_from(first), u64::try_from(end)) {
        (Ok(first), Ok(end)) => Ok(Slices { chip, cluster, first, end }),
        _ => Err(format!("slices {first}:{end} must not be negative")),
    }
}

/// Operand `name` of `op`.
pub fn operand_of(ctx: &Context, op: OpId, name: &str) -> Result<Operand, String> {
    let space = str_prop(ctx, op, &format!("{name}_space"))
        .and_then(Space::named)
        .ok_or(format!("'{name}_space' must be \"dm\", \"acc\", \"trf\" or \"vrf\""))?;
    let base = int_prop(ctx, op, &format!("{name}_base"))
        .and_then(|b| u64::try_from(b).ok())
        .ok_or(format!("'{name}_base' must be a non-negative integer"))?;
    let packet = int_prop(ctx, op, &format!("{name}_packet"))
        .and_then(|p| u32::try_from(p).ok())
        .ok_or(format!("'{name}_packet' must fit a u32"))?;
    let loops: Vec<(u32, i64)> =
        loops_prop(ctx, op, &format!("{name}_loops"), 2)?.iter().map(|l| (l[0] as u32, l[1])).collect();
    Ok(Operand { space, pattern: AccessPattern::new(base, &loops, packet) })
}

/// The property names of operand `name`, for a printer to leave out of the attribute dictionary.
pub fn props(name: &str) -> [String; 4] {
    ["space", "base", "loops", "packet"].map(|k| format!("{name}_{k}"))
}

/// Checks the slices against the machine's geometry.
pub fn check_slices(s: &Slices, cfg: &NpuConfig) -> Result<(), String> {
    if s.chip >= cfg.chips {
        return Err(format!("chip {} is not on the machine ({} chips)", s.chip, cfg.chips));
    }
    if s.cluster >= cfg.clusters || s.first >= s.end || s.end > cfg.slices_per_cluster {
        return Err(format!(
            "slices {}:{} of cluster {} are not a non-empty range on the chip ({} clusters of {} slices)",
            s.first, s.end, s.cluster, cfg.clusters, cfg.slices_per_cluster
        ));
    }
    Ok(())
}

/// Checks that operand `name` is in one of the spaces `allowed`.
pub fn check_space(name: &str, o: &Operand, allowed: &[Space]) -> Result<(), String> {
    if allowed.contains(&o.space) {
        return Ok(());
    }
    let names: Vec<&str> = allowed.iter().map(|s| s.name()).collect();
    Err(format!("{name} is in {}, but here it must be in {}", o.space.name(), names.join(" or ")))
}

/// Checks operand `name`: inside its space, whole `elem_bytes` elements per packet, and, when `write`, injective
/// and (in DM) 8-byte aligned.
pub fn check_operand(name: &str, o: &Operand, elem_bytes: u64, write: bool, cfg: &NpuConfig) -> Result<(), String> {
    let p = &o.pattern;
    if p.packet == 0 || p.bytes().is_none() {
        return Err(format!("{name}: a pattern moves packets of at least 1 byte, and at most 2^64 bytes in all"));
    }
    if !(p.packet as u64).is_multiple_of(elem_bytes) {
        return Err(format!("{name}: a packet of {} B is not a whole number of {elem_bytes}-byte elements", p.packet));
    }
    let size = o.space.capacity(cfg);
    if !p.within(size) {
        let (low, high) = p.range().expect("a pattern out of bounds touches bytes");
        return Err(format!("{name}: bytes {low}..{high} are outside the {size} B of {} per slice", o.space.name()));
    }
    if !write {
        return Ok(());
    }
    let align = cfg.dm_write_align as i64;
    if let (Space::Dm, Some((what, v))) = (o.space, p.misaligned(align)) {
        return Err(format!("{name}: writes into DM must be {align}-byte aligned, but the {what} is {v}"));
    }
    match p.injectivity() {
        Injectivity::Injective => Ok(()),
        Injectivity::Overlap(a, b) => Err(format!("{name}: writes twice: packets at offsets {a} and {b} overlap")),
        Injectivity::Unknown => Err(format!("{name}: cannot show each byte is written once (MAX_ENUMERATED_PACKETS)")),
    }
}

/// Prints ` on(cluster, first:end)` (` on(chip, cluster, first:end)` off chip 0).
pub fn print_slices(p: &mut OpPrinter<'_, '_>, s: &Slices) {
    let range = if s.end == s.first + 1 { s.first.to_string() } else { format!("{}:{}", s.first, s.end) };
    let chip = if s.chip == 0 { String::new() } else { format!("{}, ", s.chip) };
    p.write(&format!(" on({chip}{}, {range})", s.cluster));
}

/// Prints ` name(space, base B, loops [...], packet P)`.
pub fn print_operand(p: &mut OpPrinter<'_, '_>, name: &str, o: &Operand) -> fmt::Result {
    let loops: Vec<String> = o.pattern.loops.iter().map(|l| format!("({}, {})", l.count, l.stride)).collect();
    p.write(&format!(
        " {name}({}, base {}, loops [{}], packet {})",
        o.space.name(),
        o.pattern.base,
        loops.join(", "),
        o.pattern.packet
    ));
    Ok(())
}
