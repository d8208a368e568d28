//! The memory-effects interface: what an op reads, writes, allocates and frees, and on which resource. An op
//! with the `Pure` trait has no effects without implementing it; an op with neither may do anything. Dead-code
//! elimination, CSE and the greedy driver's clean-up decide from it; the NPU interpreter's race detector reads the
//! byte extents its instructions report.

use crate::ir::registry::OpTrait;
use crate::ir::walk::preorder;
use crate::ir::{Context, OpId, ValueId};

/// What an op does to a resource.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum EffectKind {
    /// Reads it.
    Read,
    /// Writes it.
    Write,
    /// Creates it (a buffer the op returns, say).
    Allocate,
    /// Releases it.
    Free,
}

/// One effect: its kind, the resource (`"default"` when nothing finer is known), the value it concerns, if one,
/// and which bytes of which instance of the resource, when the op knows.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Effect {
    /// What happens.
    pub kind: EffectKind,
    /// Where: a named resource (memory, an external input set, a device).
    pub resource: &'static str,
    /// The operand or result it concerns, if it concerns one.
    pub value: Option<ValueId>,
    /// The bytes it touches, if known (else all of the resource).
    pub extent: Option<Extent>,
}

/// Bytes of one instance of a resource (a buffer, a slice's memory), which `unit` tells apart: `count` runs of
/// `len` bytes, the first at `low`, each `stride` bytes after the one before (a strided view, as a memref with a
/// strided layout touches). Built by [`Extent::run`] or [`Extent::strided`], which keep `stride` positive.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Extent {
    /// Which instance.
    pub unit: u64,
    /// First byte of the first run.
    pub low: i128,
    /// Bytes per run (positive).
    pub len: i128,
    /// Runs (at least 1).
    pub count: u64,
    /// Bytes from one run's start to the next's (positive when `count` is above 1).
    pub stride: i128,
}

/// Most runs [`Extent::overlaps`] walks to tell two strided extents apart; past it, extents whose bounds meet are
/// taken to overlap (a conservative answer).
pub const MAX_OVERLAP_RUNS: u64 = 1 << 16;

impl Extent {
    /// Bytes `[low, high)` (`high > low`).
    pub fn run(unit: u64, low: i128, high: i128) -> Extent {
        Extent { unit, low, len: high - low, count: 1, stride: 0 }
    }

    /// `count` runs of `len` bytes from `low`, `stride` apart (any sign); runs that touch or overlap become one.
    pub fn strided(unit: u64, low: i128, len: i128, count: u64, stride: i128) -> Extent {
        let span = (count.max(1) - 1) as i128 * stride;
        let first = low.min(low + span);
        if count <= 1 || stride.abs() <= len {
            return Extent::run(unit, first, first + span.abs() + len);
        }
        Extent { unit, low: first, len, count, stride: stride.abs() }
    }

    /// The bytes from the first run's start to the last run's end.
    pub fn bounds(&self) -> (i128, i128) {
        (self.low, self.low + (self.count - 1) as i128 * self.stride + self.len)
    }

    /// Whether some byte is in both (same unit assumed).
    pub fn overlaps(&self, other: &Extent) -> bool {
        let ((a, b), (c, d)) = (self.bounds(), other.bounds());
        if b <= c || d <= a {
            return false;
        }
        let (few, many) = if self.count <= other.count { (self, other) } else { (other, self) };
        if many.count == 1 {
            return true;
        }
        if few.count > 1 && few.stride == many.stride {
            return few.meets_alike(many);
        }
        if few.count > MAX_OVERLAP_RUNS {
            return true;
        }
        (0..few.count).any(|i| many.meets(few.low + i as i128 * few.stride, few.len))
    }

    /// Whether some run of it meets some run of `other`, both strided alike: run `i` here and run `j` there meet
    /// when `d + (i - j)·stride` (with `d` the distance between first runs) lies strictly between `-self.len` and
    /// `other.len`, so it is a question about one integer `t = i - j`, answered without walking the runs.
    fn meets_alike(&self, other: &Extent) -> bool {
        let (d, s) = (self.low - other.low, self.stride);
        let lowest = (-self.len - d).div_euclid(s) + 1;
        let highest = (other.len - d - 1).div_euclid(s);
        lowest.max(1 - other.count as i128) <= highest.min(self.count as i128 - 1)
    }

    /// Whether one of its runs meets `[at, at + len)`.
    fn meets(&self, at: i128, len: i128) -> bool {
        // Run i spans [low + i·stride, low + i·stride + self.len): it meets when it starts before at + len and
        // ends after at.
        let (from, to) = (at - self.len - self.low, at + len - 1 - self.low);
        let (first, last) = match (i64::try_from(from), i64::try_from(to), i64::try_from(self.stride)) {
            // The same in 64 bits when it fits (128-bit division is slow, and this runs per run walked).
            (Ok(f), Ok(t), Ok(s)) => (f.div_euclid(s) as i128 + 1, t.div_euclid(s) as i128),
            _ => (from.div_euclid(self.stride) + 1, to.div_euclid(self.stride)),
        };
        first.max(0) <= last.min(self.count as i128 - 1)
    }

    /// Whether every byte of `other` is in it, when that is easy to see (one run covering the other's bounds, or
    /// the same extent); `false` when unsure.
    pub fn covers(&self, other: &Extent) -> bool {
        let ((a, b), (c, d)) = (self.bounds(), other.bounds());
        (self.count == 1 && a <= c && d <= b) || self == other
    }
}

impl Effect {
    /// An effect on a whole resource.
    pub fn on(kind: EffectKind, resource: &'static str) -> Effect {
        Effect { kind, resource, value: None, extent: None }
    }

    /// An effect on some bytes of a resource.
    pub fn within(kind: EffectKind, resource: &'static str, extent: Extent) -> Effect {
        Effect { kind, resource, value: None, extent: Some(extent) }
    }
}

/// The interface: an op's effects.
pub trait MemoryEffects: Sync {
    /// Every effect of `op` (nested ops not included).
    fn effects(&self, ctx: &Context, op: OpId) -> Vec<Effect>;
}

/// The effects of `op` itself: from its interface, none if it is `Pure`, `None` if unknown (anything may happen).
pub fn effects_of(ctx: &Context, op: OpId) -> Option<Vec<Effect>> {
    if let Some(imp) = ctx.op_interface::<dyn MemoryEffects>(op) {
        return Some(imp.effects(ctx, op));
    }
    ctx.has_trait(op, OpTrait::Pure).then(Vec::new)
}

/// True if `op` and everything nested in it has no effect at all (terminators of nested blocks aside, as they
/// only hand values on): it may be merged with an identical op (CSE).
pub fn has_no_effects(ctx: &Context, op: OpId) -> bool {
    recursively(ctx, op, |o| effects_of(ctx, o).is_some_and(|e| e.is_empty()))
}

/// True if `op` and everything nested in it has no effect but allocating its own results: unused, it may go.
pub fn is_effect_free(ctx: &Context, op: OpId) -> bool {
    let free = |o: OpId| match effects_of(ctx, o) {
        Some(effects) => effects.iter().all(|e| e.kind == EffectKind::Allocate && allocates_own_result(ctx, o, e)),
        None => false,
    };
    recursively(ctx, op, free)
}

fn recursively(ctx: &Context, op: OpId, holds: impl Fn(OpId) -> bool) -> bool {
    let terminator = |o: OpId| ctx.has_trait(o, OpTrait::Terminator);
    holds(op) && preorder(&ctx.body, op).into_iter().all(|o| holds(o) || terminator(o))
}

fn allocates_own_result(ctx: &Context, op: OpId, effect: &Effect) -> bool {
    effect.value.is_some_and(|v| ctx.body.results(op).any(|r| r == v))
}

/// True for an op that may be erased when nothing uses its results: effect free and not a terminator.
pub fn is_trivially_dead(ctx: &Context, op: OpId) -> bool {
    ctx.body.results(op).all(|v| !ctx.body.has_uses(v))
        && !ctx.has_trait(op, OpTrait::Terminator)
        && is_effect_free(ctx, op)
}
