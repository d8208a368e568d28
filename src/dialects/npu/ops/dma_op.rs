//! `npu.dma`: one DMA command.
//!
//! `npu.dma queue(dma0) waits(%s = 1) src(%a, base 0) dst(dm[0, 3], base 4096) loops [(32, 1024, 64)] packet 64
//! : bf16 signals(%s = 2)` copies, for each tuple of loop indices, `packet` bytes from `src base + Σ i·src_stride`
//! to `dst base + Σ i·dst_stride` (loops are `(count, source stride, destination stride)`, outer to inner, as the
//! RNGD DMA sequencer pairs them). A side is an HBM buffer (an operand) or the data memory of one slice
//! (`dm[cluster, slice]` on chip 0, `dm[chip, cluster, slice]` on another). The element type says what the bytes
//! are; a DMA never converts. It runs on a DMA queue of the source's chip; from one chip's HBM to another's, it goes
//! over the link between them.
//!
//! A trailing `spread [(count, slice step, HBM stride), ...]` (outer to inner) makes one command serve several
//! slices of the DM side's cluster: for each index tuple, the slice moves by the steps and the HBM side's base by
//! the strides. `src(%x, base 0) dst(dm[0, 0], base 0) ... spread [(4, 8, 16384), (8, 1, 0)]` gives slices
//! `8r + c` the `r`-th 16 KiB block of `%x`; a stride of 0 broadcasts (the bytes are read once), and a spread out of
//! DM gathers (its slices must write apart).
//!
//! Properties: `queue`; `src_space`/`dst_space` (`"hbm"` or `"dm"`), `src_slice`/`dst_slice` (`[cluster, slice]`
//! or `[chip, cluster, slice]`, DM only), `src_base`/`dst_base`; `loops` (`[[count, src_stride, dst_stride], ...]`);
//! `packet`; `spread` (`[[count, step, hbm_stride], ...]`, optional); `dtype`; `waits`/`signals`. Operands: the HBM buffers (source first), then the semaphores waited for
//! and signalled. The verifier applies `dma::Dma::check` with the program's machine (`npu.machine`).

use super::clauses::{
    int, int_list, int_prop, ints, parse_queue, parse_syncs, parse_tail, print_queue, print_syncs, print_tail,
};
use super::clauses::{loops_prop, parse_tuples, prop, str_prop, sync_of};
use super::instruction::registration;
use crate::dialects::npu::access::AccessPattern;
use crate::dialects::npu::dma::{Dma, Memory, Side, SpreadLoop};
use crate::dialects::npu::types::{as_buf, elem_name, elem_type, BufType};
use crate::ir::asm::{AsmItem, CustomParser, Delim, ParsedOp};
use crate::ir::print::OpPrinter;
use crate::ir::{Context, Diagnostic, OpId, OpInfo, ValueDef, ValueId};
use crate::machine::NpuConfig;
use std::fmt;

/// The registration of `npu.dma`.
pub const DMA: OpInfo =
    registration("npu.dma", "copies packets between HBM buffers and slices' data memory", parse, print);

/// One side as written: an HBM buffer (its operand) or a slice's DM, and the base.
#[derive(Debug)]
enum Place {
    Hbm(ValueId),
    Dm { chip: u64, cluster: u64, slice: u64 },
}

/// Decodes `op` into the command it describes, with the element type; the message says what is malformed.
pub fn decode(ctx: &Context, op: OpId, cfg: &NpuConfig) -> Result<(Dma, crate::machine::ElemType), String> {
    let operands: Vec<ValueId> = ctx.body.operands(op).collect();
    let mut next = 0;
    let mut side = |which: &str| -> Result<(Place, u64), String> {
        let base = int_prop(ctx, op, &format!("{which}_base")).ok_or(format!("needs '{which}_base'"))?;
        let base = u64::try_from(base).map_err(|_| format!("the {which} base {base} is negative"))?;
        let place = match str_prop(ctx, op, &format!("{which}_space")) {
            Some("hbm") => {
                let v = *operands.get(next).ok_or(format!("the {which} buffer operand is missing"))?;
                next += 1;
                Place::Hbm(v)
            }
            Some("dm") => {
                let at = ints(ctx, op, &format!("{which}_slice")).ok_or(format!("needs '{which}_slice'"))?;
                let [chip, cluster, slice] = match at[..] {
                    [cluster, slice] => [0, cluster, slice],
                    [chip, cluster, slice] => [chip, cluster, slice],
                    _ => return Err(format!("'{which}_slice' is [cluster, slice] or [chip, cluster, slice]")),
                };
                dm(chip, cluster, slice, cfg).map_err(|m| format!("the {which} {m}"))?
            }
            _ => return Err(format!("'{which}_space' must be \"hbm\" or \"dm\"")),
        };
        Ok((place, base))
    };
    let (src, src_base) = side("src")?;
    let (dst, dst_base) = side("dst")?;
    let buffers = [&src, &dst].iter().filter(|p| matches!(p, Place::Hbm(_))).count();
    sync_of(ctx, op, buffers)?;
    let dtype = str_prop(ctx, op, "dtype").ok_or("needs 'dtype'")?;
    let dtype = elem_type(dtype).map_err(|e| e.message)?;
    let packet = int_prop(ctx, op, "packet").and_then(|p| u32::try_from(p).ok()).ok_or("'packet' must fit a u32")?;
    let loops = loops_of(ctx, op)?;
    let spread = spread_of(ctx, op)?;
    let pattern = |base: u64, pick: fn(&[i64; 3]) -> i64| {
        AccessPattern::new(base, &loops.iter().map(|l| (l[0] as u32, pick(l))).collect::<Vec<_>>(), packet)
    };
    let memory = |place: &Place| match place {
        Place::Hbm(v) => buffer(ctx, *v).map(|(region, b)| Memory::Hbm { chip: b.chip, region, bytes: b.bytes() }),
        Place::Dm { chip, cluster, slice } => Ok(Memory::Dm { chip: *chip, cluster: *cluster, slice: *slice }),
    };
    for place in [&src, &dst] {
        if let Place::Hbm(v) = place {
            let elem = buffer(ctx, *v)?.1.elem;
            if elem != dtype {
                return Err(format!("moves {} but a buffer holds {}", elem_name(dtype), elem_name(elem)));
            }
        }
    }
    let src = Side { memory: memory(&src)?, pattern: pattern(src_base, |l| l[1]) };
    let dst = Side { memory: memory(&dst)?, pattern: pattern(dst_base, |l| l[2]) };
    Ok((Dma { src, dst, spread }, dtype))
}

/// A slice's DM, checked against the machine's geometry.
fn dm(chip: i64, cluster: i64, slice: i64, cfg: &NpuConfig) -> Result<Place, String> {
    let ok = |v: i64, n: u64| u64::try_from(v).ok().filter(|&v| v < n);
    match (ok(chip, cfg.chips), ok(cluster, cfg.clusters), ok(slice, cfg.slices_per_cluster)) {
        (Some(chip), Some(cluster), Some(slice)) => Ok(Place::Dm { chip, cluster, slice }),
        _ => {
            let at = if chip == 0 { format!("{cluster}, {slice}") } else { format!("{chip}, {cluster}, {slice}") };
            Err(format!(
                "slice dm[{at}] is not on the machine (chips: {}, clusters per chip: {}, slices per cluster: {})",
                cfg.chips, cfg.clusters, cfg.slices_per_cluster
            ))
        }
    }
}

/// The buffer `v` is: its position among the kernel's arguments (the HBM region) and its type.
fn buffer(ctx: &Context, v: ValueId) -> Result<(u32, BufType), String> {
    let t = as_buf(ctx, ctx.body.value_type(v)).ok_or("an HBM side must be an !npu.buf")?.clone();
    match ctx.body.value_def(v) {
        ValueDef::BlockArg { index, .. } => Ok((index, t)),
        _ => Err("an HBM buffer must be an argument of the kernel".into()),
    }
}

/// `loops` as `[count, src_stride, dst_stride]` triples, counts fitting a u32.
fn loops_of(ctx: &Context, op: OpId) -> Result<Vec<[i64; 3]>, String> {
    Ok(loops_prop(ctx, op, "loops", 3)?.into_iter().map(|l| [l[0], l[1], l[2]]).collect())
}

/// `spread` as loops over slices (none when absent).
fn spread_of(ctx: &Context, op: OpId) -> Result<Vec<SpreadLoop>, String> {
    if ctx.op_attr(op, "spread").is_none() {
        return Ok(Vec::new());
    }
    let loops = loops_prop(ctx, op, "spread", 3)?;
    let bad = |l: &Vec<i64>| format!("the spread's slice step {} is negative", l[1]);
    let step = |l: &Vec<i64>| u64::try_from(l[1]).map_err(|_| bad(l));
    loops.iter().map(|l| Ok(SpreadLoop { count: l[0] as u32, step: step(l)?, hbm_stride: l[2] })).collect()
}

fn parse<'s>(p: &mut CustomParser<'_, 's>) -> Result<ParsedOp<'s>, Diagnostic> {
    let mut op = ParsedOp::default();
    parse_queue(p, &mut op)?;
    let mut syncs = ParsedOp::default();
    parse_syncs(p, &mut syncs, "waits")?;
    for which in ["src", "dst"] {
        p.expect_keyword(which)?;
        parse_side(p, &mut op, which)?;
    }
    p.expect_keyword("loops")?;
    let loops = parse_tuples(p, 3)?;
    p.expect_keyword("packet")?;
    let packet = int(p)?;
    let spread = if p.eat_keyword("spread") { Some(parse_tuples(p, 3)?) } else { None };
    // The semaphores waited for follow the buffers; the tail adds those signalled.
    op.operands.extend(syncs.operands);
    op.props.extend(syncs.props);
    parse_tail(p, &mut op)?;
    let ctx = p.ctx();
    let i64t = ctx.int_type(64);
    let entries = [("loops", loops), ("packet", ctx.int_attr(packet as i128, i64t))];
    for (k, v) in entries.into_iter().chain(spread.map(|s| ("spread", s))) {
        prop(ctx, &mut op, k, v);
    }
    Ok(op)
}

/// `(%a, base 0)` or `(dm[0, 3], base 4096)`.
fn parse_side<'s>(p: &mut CustomParser<'_, 's>, op: &mut ParsedOp<'s>, which: &str) -> Result<(), Diagnostic> {
    let (items, loc) = p.group(Delim::Paren)?;
    let mut inner = p.nested(items, loc);
    let space = match inner.peek() {
        Some(AsmItem::Value(..)) => {
            let (name, at) = inner.value()?;
            let ty = inner.env.value_type(name); // A kernel argument is known by its signature's hint.
            op.operands.push((name, at, ty));
            "hbm"
        }
        _ => {
            inner.expect_keyword("dm")?;
            let (items, loc) = inner.group(Delim::Square)?;
            let mut at = inner.nested(items, loc);
            let mut numbers = vec![int(&mut at)?];
            while at.eat_punct(",") && numbers.len() < 3 {
                numbers.push(int(&mut at)?);
            }
            at.expect_end()?;
            if numbers.len() < 2 {
                return Err(at.expected("dm[cluster, slice] or dm[chip, cluster, slice]"));
            }
            let list = int_list(inner.ctx(), &numbers);
            prop(inner.ctx(), op, &format!("{which}_slice"), list);
            "dm"
        }
    };
    inner.expect_punct(",")?;
    inner.expect_keyword("base")?;
    let base = int(&mut inner)?;
    inner.expect_end()?;
    let ctx = p.ctx();
    let i64t = ctx.int_type(64);
    let entries = [("space", ctx.string_attr(space)), ("base", ctx.int_attr(base as i128, i64t))];
    for (k, v) in entries {
        prop(ctx, op, &format!("{which}_{k}"), v);
    }
    Ok(())
}

fn print(p: &mut OpPrinter<'_, '_>, op: OpId) -> fmt::Result {
    let ctx = p.ctx();
    let buffers = ["src", "dst"].iter().filter(|w| str_prop(ctx, op, &format!("{w}_space")) == Some("hbm")).count();
    print_queue(p, op)?;
    print_syncs(p, op, "waits", buffers)?;
    let mut next = 0;
    for which in ["src", "dst"] {
        let ctx = p.ctx();
        let base = int_prop(ctx, op, &format!("{which}_base")).ok_or(fmt::Error)?;
        p.write(&format!(" {which}("));
        match str_prop(ctx, op, &format!("{which}_space")) {
            Some("hbm") => {
                p.value(ctx.body.operand(op, next))?;
                next += 1;
            }
            Some("dm") => {
                let at = ints(ctx, op, &format!("{which}_slice")).ok_or(fmt::Error)?;
                let text: Vec<String> = match at[..] {
                    [0, cluster, slice] | [cluster, slice] => vec![cluster.to_string(), slice.to_string()],
                    [_, _, _] => at.iter().map(i64::to_string).collect(),
                    _ => return Err(fmt::Error),
                };
                p.write(&format!("dm[{}]", text.join(", ")));
            }
            _ => return Err(fmt::Error),
        }
        p.write(&format!(", base {base})"));
    }
    let ctx = p.ctx();
    let loops = loops_of(ctx, op).map_err(|_| fmt::Error)?;
    let packet = int_prop(ctx, op, "packet").ok_or(fmt::Error)?;
    let loops: Vec<String> = loops.iter().map(|[c, s, d]| format!("({c}, {s}, {d})")).collect();
    p.write(&format!(" loops [{}] packet {packet}", loops.join(", ")));
    let spread = spread_of(ctx, op).map_err(|_| fmt::Error)?;
    if !spread.is_empty() {
        let spread: Vec<String> =
            spread.iter().map(|l| format!("({}, {}, {})", l.count, l.step, l.hbm_stride)).collect();
        p.write(&format!(" spread [{}]", spread.join(", ")));
    }
    let waits = ints(ctx, op, "waits").ok_or(fmt::Error)?.len();
    let sides = ["space", "slice", "base"].iter().flat_map(|k| ["src", "dst"].map(|w| format!("{w}_{k}")));
    let elided: Vec<String> = sides.chain(["loops", "packet", "spread"].map(String::from)).collect();
    print_tail(p, op, buffers + waits, &elided)
}
