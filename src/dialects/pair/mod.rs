//! The `pair` dialect, a test dialect (as MLIR's `test`): a few ops that exist to exercise the IR core from
//! `tap-opt`, not to compute anything. `!pair.pair` is a pair of `i32` that `test-convert-pairs` splits into its two halves
//! (a one-to-two type conversion); `pair.opaque` is an op no conversion knows.

use crate::interfaces::memory_effects::{Effect, EffectKind, MemoryEffects};
use crate::ir::dialect_data::{DialectData, DialectValue};
use crate::ir::registry::ItemError;
use crate::ir::{Arity, Context, DialectInfo, Interners, OpId, OpInfo, OpTrait, Registry, Syntax, TypeId, TypeKind};
use std::sync::Arc;

const FUNCTIONAL: Syntax = Syntax::Format("$operands attr-dict `:` functional-type($operands, $results)");

/// Every op of the dialect.
const OPS: [OpInfo; 5] = [
    OpInfo {
        operands: Arity::Exact(2),
        results: Arity::Exact(1),
        traits: &[OpTrait::Pure],
        syntax: FUNCTIONAL,
        ..OpInfo::new("pair.make", "a !pair.pair of two i32")
    },
    OpInfo {
        operands: Arity::Exact(2),
        results: Arity::Exact(1),
        traits: &[OpTrait::Pure],
        syntax: FUNCTIONAL,
        ..OpInfo::new("pair.add", "the sum of two pairs, half by half")
    },
    OpInfo {
        operands: Arity::Exact(1),
        results: Arity::Exact(1),
        traits: &[OpTrait::Pure],
        syntax: FUNCTIONAL,
        ..OpInfo::new("pair.first", "the first half of a pair")
    },
    OpInfo {
        operands: Arity::Any,
        results: Arity::Any,
        syntax: FUNCTIONAL,
        ..OpInfo::new("pair.opaque", "an op with effects that no conversion knows")
    },
    OpInfo {
        operands: Arity::Any,
        results: Arity::Any,
        syntax: FUNCTIONAL,
        ..OpInfo::new("pair.unconvertible", "an op conversions must remove but cannot")
    },
];

/// Registers the `pair` dialect.
pub fn register(registry: &mut Registry) {
    registry.register_dialect(DialectInfo {
        name: "pair",
        summary: "ops for testing the IR core (conversion, rewriting)",
        parse_type: Some(parse_type),
        parse_attr: None,
        materialize_constant: None,
    });
    for info in OPS {
        registry.register_op(info);
    }
    registry.attach_op_interface::<dyn MemoryEffects>("pair.opaque", &WritesMemory);
}

/// `pair.opaque` writes memory: dead-code elimination must keep it even when nothing reads its results.
struct WritesMemory;

impl MemoryEffects for WritesMemory {
    fn effects(&self, _: &Context, _: OpId) -> Vec<Effect> {
        vec![Effect::on(EffectKind::Write, "default")]
    }
}

/// The payload of `!pair.pair`.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct PairType;

impl DialectValue for PairType {
    fn name(&self) -> &str {
        "pair.pair"
    }

    fn print_body(&self) -> Option<String> {
        None
    }
}

/// The interned `!pair.pair` type.
pub fn pair_type(ctx: &mut Interners) -> TypeId {
    ctx.ty(TypeKind::Dialect(DialectData(Arc::new(PairType))))
}

/// Whether `ty` is `!pair.pair`.
pub fn is_pair(ctx: &Interners, ty: TypeId) -> bool {
    matches!(ctx.type_kind(ty), TypeKind::Dialect(d) if d.downcast::<PairType>().is_some())
}

fn parse_type(ctx: &mut Context, name: &str, body: Option<&str>) -> Result<TypeId, ItemError> {
    match (name, body) {
        ("pair.pair", None) => Ok(pair_type(ctx)),
        ("pair.pair", Some(_)) => Err(ItemError::new("!pair.pair takes no parameters")),
        _ => Err(ItemError::new(format!("unknown type '{name}' in dialect 'pair'"))),
    }
}
