//! The interfaces teg ops implement: through the sharding interface, block operators' signatures and every op's
//! index maps, and the memory effects of the ops that talk to the outside world (sources read
//! the bound inputs, sinks write the named outputs, sequence points order both). The other teg ops are `Pure`.

use super::ops::{decode, OpKind};
use super::tensor_type::{as_tensor, tensor_type, TensorType};
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
    /// A block operator's, built in or declared (its family's).
    fn signature(&self, ctx: &Context, op: OpId) -> Option<Signature> {
        let (kind, types) = decoded(ctx, op)?;
        let result = as_tensor(ctx, ctx.body.value_type(ctx.body.results(op).next()?))?;
        kind.family().signature(&types, result)
    }

    /// Every op's from its family (a block operator's from its signature).
    fn index_maps(&self, ctx: &Context, op: OpId) -> Option<IndexMaps> {
        let (kind, types) = decoded(ctx, op)?;
        let result = ctx.body.results(op).next().and_then(|v| as_tensor(ctx, ctx.body.value_type(v)));
        kind.family().index_maps(&types, result)
    }
}

/// `op` decoded, with its operand types, if it has as many operands as it takes and all are tensors (the rules
/// index operands by position; parsing asks for inferred types before the verifier has counted them).
fn decoded(ctx: &Context, op: OpId) -> Option<(OpKind, Vec<&TensorType>)> {
    let arity = ctx.registered(op)?.info.operands;
    let types: Vec<&TensorType> =
        ctx.body.operands(op).map(|v| as_tensor(ctx, ctx.body.value_type(v))).collect::<Option<_>>()?;
    arity.admits(types.len()).then_some(())?;
    Some((decode(ctx, op).ok()?, types))
}

/// Result types from operands and attributes, for the ops whose family infers them.
struct TegInference;

impl TegInference {
    fn inferred(ctx: &Context, op: OpId) -> Option<Result<TensorType, String>> {
        let arity = ctx.registered(op)?.info.operands;
        let count = ctx.body.operands(op).count();
        if !arity.admits(count) {
            return Some(Err(format!("it expects {} operands, but got {count}", arity.describe())));
        }
        let (kind, types) = decoded(ctx, op)?;
        let unused = TensorType { dims: Vec::new(), dtype: crate::array::DType::F32 };
        kind.family().infers().then(|| kind.family().result_type(&types, &unused))
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
