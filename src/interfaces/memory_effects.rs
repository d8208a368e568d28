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

/// Bytes `[low, high)` of one instance of a resource (a buffer, a slice's memory), which `unit` tells apart.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Extent {
    /// Which instance.
    pub unit: u64,
    /// First byte.
    pub low: i128,
    /// One past the last byte.
    pub high: i128,
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
