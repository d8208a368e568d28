//! The interfaces teg ops implement: through the sharding interface, block operators' signatures and every op's
//! index maps, and the memory effects of the ops that talk to the outside world (sources read
//! the bound inputs, sinks write the named outputs, sequence points order both). The other teg ops are `Pure`.

use super::kind::decode;
use super::tensor_type::{as_tensor, TensorType};
use super::{index_maps, signature};
use crate::interfaces::memory_effects::{Effect, EffectKind, MemoryEffects};
use crate::interfaces::sharding::{IndexMaps, ShardingInterface, Signature};
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

    /// Block operators' from their signatures, every other op's from `index_maps::of_op`.
    fn index_maps(&self, ctx: &Context, op: OpId) -> Option<IndexMaps> {
        if let Some(sig) = self.signature(ctx, op) {
            return Some(IndexMaps::from_signature(sig));
        }
        let kind = decode(ctx, op).ok()?;
        let types: Vec<&TensorType> =
            ctx.body.operands(op).map(|v| as_tensor(ctx, ctx.body.value_type(v))).collect::<Option<_>>()?;
        let result = ctx.body.results(op).next().and_then(|v| as_tensor(ctx, ctx.body.value_type(v)));
        index_maps::of_op(&kind, &types, result)
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
