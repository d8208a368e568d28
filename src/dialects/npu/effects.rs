//! The memory effects of `npu` instructions: which bytes of which memory each reads and writes, as byte extents
//! of the resources `npu.hbm` (one unit per kernel argument) and `npu.dm`, `npu.acc`, `npu.trf`, `npu.vrf` (one
//! unit per slice). The interpreter's race detector reads exactly these, so the two cannot disagree.
//!
//! An operand of at most [`MAX_FOOTPRINT_PACKETS`] packets reports each run of adjacent packets, so patterns that
//! interleave without touching (two queues writing alternate rows) do not race; a larger one reports the one range
//! it spans, which may see a race where the packets do not meet.

use super::ops::instruction::{Access, Instruction};
use crate::interfaces::memory_effects::{Effect, EffectKind, Extent, MemoryEffects};
use crate::ir::{Context, OpId, Registry};
use crate::machine::NpuConfig;

/// Most packets of one operand reported one run at a time.
pub const MAX_FOOTPRINT_PACKETS: u64 = 256;

/// Attaches the implementation to every instruction that touches memory.
pub fn register(registry: &mut Registry) {
    let ops = [
        "npu.dma",
        "npu.memset",
        "npu.load_trf",
        "npu.load_vrf",
        "npu.cast",
        "npu.transpose",
        "npu.matmul",
        "npu.vec.unary",
        "npu.vec.binary",
        "npu.vec.reduce",
        "npu.reduce.slices",
    ];
    for op in ops {
        registry.attach_op_interface::<dyn MemoryEffects>(op, &Touches);
    }
}

/// Reads and writes the bytes its operands name.
struct Touches;

impl MemoryEffects for Touches {
    fn effects(&self, ctx: &Context, op: OpId) -> Vec<Effect> {
        let cfg = NpuConfig::default();
        match Instruction::decode(ctx, op, &cfg) {
            Ok(Some(instruction)) => instruction.accesses(&cfg).iter().flat_map(effects).collect(),
            // Malformed (the verifier says why): anything may happen.
            _ => ["npu.hbm", "npu.dm"]
                .into_iter()
                .flat_map(|r| [Effect::on(EffectKind::Read, r), Effect::on(EffectKind::Write, r)])
                .collect(),
        }
    }
}

/// The effects of one access.
pub fn effects(access: &Access) -> Vec<Effect> {
    let kind = if access.write { EffectKind::Write } else { EffectKind::Read };
    let (resource, unit) = (access.site.resource(), access.site.unit());
    extents(&access.pattern)
        .into_iter()
        .map(|(low, high)| Effect::within(kind, resource, Extent { unit, low, high }))
        .collect()
}

/// The byte ranges a pattern touches: run by run when it has at most [`MAX_FOOTPRINT_PACKETS`] packets, else the
/// one range it spans.
fn extents(pattern: &crate::dialects::npu::access::AccessPattern) -> Vec<(i128, i128)> {
    let Some((low, high)) = pattern.range() else { return Vec::new() };
    if pattern.packets().is_none_or(|n| n > MAX_FOOTPRINT_PACKETS) {
        return vec![(low, high)];
    }
    let mut starts: Vec<i128> = pattern.offsets().map(|o| pattern.base as i128 + o).collect();
    starts.sort_unstable();
    let mut out: Vec<(i128, i128)> = Vec::new();
    for start in starts {
        let end = start + pattern.packet as i128;
        match out.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => out.push((start, end)),
        }
    }
    out
}
