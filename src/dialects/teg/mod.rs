//! The `teg` dialect: Tapestry expression graphs (seed 004). Value-semantics tensor graphs with named dimensions:
//! sources and sinks, view selectors, generators, cell operators, reductions with monoids, and block operators
//! whose signatures (an index space plus an IPF per input and output, from [`crate::zspace`]) make them shardable.

pub mod block_op;
pub mod eval;
pub mod infer;
pub mod interfaces;
pub mod kind;
pub mod ops;
pub mod signature;
pub mod tensor_type;
pub mod verify;

use crate::ir::registry::ItemError;
use crate::ir::{Context, DialectInfo, Registry, TypeId};
use tensor_type::{tensor_type, token_type, TensorType};

/// Registers the `teg` dialect.
pub fn register(registry: &mut Registry) {
    registry.register_dialect(DialectInfo {
        name: "teg",
        summary: "Tapestry expression graphs: shardable tensor graphs with block-operator signatures",
        parse_type: Some(parse_type),
        parse_attr: None,
        materialize_constant: None,
    });
    registry.register_op(ops::GRAPH);
    let families: [&[crate::ir::OpInfo]; 6] =
        [ops::IO, ops::CELL, ops::VIEWS, ops::GENERATORS, ops::BLOCKS, ops::USER_BLOCK];
    for info in families.into_iter().flatten() {
        registry.register_op(*info);
    }
    registry.register_op(ops::REDUCE);
    interfaces::attach(registry);
}

fn parse_type(ctx: &mut Context, name: &str, body: Option<&str>) -> Result<TypeId, ItemError> {
    match (name, body) {
        ("teg.tensor", Some(body)) => Ok(tensor_type(ctx, TensorType::parse(body)?)),
        ("teg.tensor", None) => {
            Err(ItemError::new("!teg.tensor needs its dimensions and element type: !teg.tensor<[n=4] x f32>"))
        }
        ("teg.token", None) => Ok(token_type(ctx)),
        ("teg.token", Some(_)) => Err(ItemError::new("!teg.token takes no parameters")),
        _ => Err(ItemError::new(format!("unknown type '{name}' in dialect 'teg'"))),
    }
}
