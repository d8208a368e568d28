//! The interfaces teg ops implement: every op's signature through the sharding interface (block operators have
//! one; the others do not yet), and the memory effects of the ops that talk to the outside world (sources read
//! the bound inputs, sinks write the named outputs, sequence points order both). The other teg ops are `Pure`.

use super::signature;
use crate::interfaces::memory_effects::{Effect, EffectKind, MemoryEffects};
use crate::interfaces::sharding::{ShardingInterface, Signature};
use crate::ir::{Context, OpId, Registry};

/// The resource teg's sources read and sinks write: the values bound outside the graph.
pub const IO_RESOURCE: &str = "teg.io";

/// Attaches the interfaces to every teg op.
pub fn attach(registry: &mut Registry) {
    let names: Vec<&'static str> = registry.ops().map(|r| r.info.name).filter(|n| n.starts_with("teg.")).collect();
    for name in names {
        registry.attach_op_interface::<dyn ShardingInterface>(name, &TegSharding);
    }
    registry.attach_op_interface::<dyn MemoryEffects>("teg.source", &ReadsInputs);
    registry.attach_op_interface::<dyn MemoryEffects>("teg.sink", &WritesOutputs);
    registry.attach_op_interface::<dyn MemoryEffects>("teg.sequence_point", &OrdersIo);
}

/// The signatures of teg's block operators, built in or declared.
struct TegSharding;

impl ShardingInterface for TegSharding {
    fn signature(&self, ctx: &Context, op: OpId) -> Option<Signature> {
        signature::signature_of(ctx, op)
    }
}

/// `teg.source`: reads an input bound outside the graph.
struct ReadsInputs;

impl MemoryEffects for ReadsInputs {
    fn effects(&self, _: &Context, _: OpId) -> Vec<Effect> {
        vec![Effect::on(EffectKind::Read, IO_RESOURCE)]
    }
}

/// `teg.sink`: makes a value observable outside the graph.
struct WritesOutputs;

impl MemoryEffects for WritesOutputs {
    fn effects(&self, _: &Context, _: OpId) -> Vec<Effect> {
        vec![Effect::on(EffectKind::Write, IO_RESOURCE)]
    }
}

/// `teg.sequence_point`: orders the reads and writes of the graph's inputs and outputs around it.
struct OrdersIo;

impl MemoryEffects for OrdersIo {
    fn effects(&self, _: &Context, _: OpId) -> Vec<Effect> {
        vec![Effect::on(EffectKind::Read, IO_RESOURCE), Effect::on(EffectKind::Write, IO_RESOURCE)]
    }
}
