//! The memory effects of `npu` instructions: which bytes of which memory each reads and writes, as byte extents
//! of the resources `npu.hbm` (one unit per kernel argument) and `npu.dm`, `npu.acc`, `npu.trf`, `npu.vrf` (one
//! unit per slice). The interpreter's race detector reads exactly these, so the two cannot disagree.
//!
//! An operand reports the strided runs its pattern touches (one extent per tuple of its outer loops, up to
//! [`MAX_FOOTPRINT_PACKETS`] of them), so patterns that interleave without touching (two queues writing alternate
//! rows) do not race; past that limit it reports the one range it spans, which may see a race where the packets do
//! not meet.

use super::access::AccessPattern;
use super::machine_attr::machine_of;
use super::ops::instruction::{Access, Instruction};
use crate::interfaces::memory_effects::{Effect, EffectKind, Extent, MemoryEffects};
use crate::ir::{Context, OpId, Registry};

/// Most strided extents one operand reports (tuples of the loops outside its innermost strided loop).
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
        let cfg = machine_of(ctx, op).unwrap_or_default();
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
    extents(unit, &access.pattern).into_iter().map(|e| Effect::within(kind, resource, e)).collect()
}

/// The bytes a pattern touches, as strided extents: loops that continue a contiguous run merge into it, the
/// innermost loop left becomes one strided extent, and each tuple of the loops outside it gives one, when there are
/// at most [`MAX_FOOTPRINT_PACKETS`] tuples; past that, the one range the pattern spans.
fn extents(unit: u64, pattern: &AccessPattern) -> Vec<Extent> {
    let Some((low, high)) = pattern.range() else { return Vec::new() };
    // The inner loops that only continue the contiguous run merge into it.
    let run = pattern.contiguous_run() as i128;
    let mut loops = pattern.loops.clone();
    let mut merged = pattern.packet as i128;
    while let Some(inner) = loops.last().filter(|l| l.count <= 1 || merged < run) {
        merged = merged.saturating_mul(inner.count.max(1) as i128);
        loops.pop();
    }
    let Some(inner) = loops.pop() else { return vec![Extent::run(unit, low, high)] };
    let outer = AccessPattern { base: pattern.base, loops, packet: 1 };
    if outer.packets().is_none_or(|n| n > MAX_FOOTPRINT_PACKETS) {
        return vec![Extent::run(unit, low, high)];
    }
    outer
        .offsets()
        .map(|o| Extent::strided(unit, pattern.base as i128 + o, run, inner.count as u64, inner.stride as i128))
        .collect()
}
