//! The interfaces teg ops implement: through the sharding interface, block operators' signatures and every op's
//! index maps, and the memory effects of the ops that talk to the outside world (sources read
//! the bound inputs, sinks write the named outputs, sequence points order both). The other teg ops are `Pure`.

use super::kind::decode;
use super::tensor_type::{as_tensor, tensor_type, TensorType};
use super::{index_maps, infer, signature};
use crate::interfaces::memory_effects::{Effect, EffectKind, MemoryEffects};
use crate::interfaces::sharding::{IndexMaps, ShardingInterface, Signature};
use crate::ir::infer_types::InferResultTypes;
use crate::ir::{Context, OpId, Registry, TypeId};

/// The resource teg's sources read and sinks write: the values bound outside the graph.
pub const IO_RESOURCE: &str = "teg.io";

/// Attaches the interfaces to every teg op.
pub fn attach(registry: &mut Registry) {
    let names: Vec<&'static str> = registry.ops().map(|r| r.info.name).filter(|n| n.starts_with("teg.")).collect();
    for name in names {
        registry.attach_op_interface::<dyn ShardingInterface>(name, &TegSharding);
        registry.attach_op_interface::<dyn InferResultTypes>(name, &TegInference);
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

/// Result types from operands and attributes, for the ops whose rule gives them (`infer::inferred`).
struct TegInference;

impl TegInference {
    fn inferred(ctx: &Context, op: OpId) -> Option<Result<TensorType, String>> {
        let kind = decode(ctx, op).ok()?;
        let types: Option<Vec<&TensorType>> =
            ctx.body.operands(op).map(|v| as_tensor(ctx, ctx.body.value_type(v))).collect();
        infer::inferred(&kind, &types?)
    }
}

impl InferResultTypes for TegInference {
    fn infer(&self, ctx: &mut Context, op: OpId) -> Result<Vec<TypeId>, String> {
        let t = Self::inferred(ctx, op).ok_or("its result type does not follow from its operands")??;
        Ok(vec![tensor_type(ctx, t)])
    }

    fn matches(&self, ctx: &Context, op: OpId) -> bool {
        let Some(Ok(t)) = Self::inferred(ctx, op) else { return false };
        ctx.body.results(op).next().and_then(|v| as_tensor(ctx, ctx.body.value_type(v))) == Some(&t)
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
