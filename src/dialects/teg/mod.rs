//! The `teg` dialect: Tapestry expression graphs (seed 004). Value-semantics tensor graphs with named dimensions:
//! sources and sinks, view selectors, generators, cell operators, reductions with monoids, and block operators
//! whose signatures (an index space plus an IPF per input and output, from [`crate::zspace`]) make them shardable.

pub mod block_op;
pub mod conv_dense;
pub mod device_costs;
pub mod eval;
pub mod fuse_linear;
pub mod interfaces;
pub mod keep_partial;
pub mod ops;
pub mod patterns;
pub mod shard_plan;
pub mod shard_problem;
pub mod signature;
pub mod tensor_type;
pub mod transfers;
pub mod verify;

use crate::ir::registry::ItemError;
use crate::ir::{Context, DialectInfo, OpId, Registry, TypeId};
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
    ops::register(registry);
    interfaces::attach(registry);
}

/// The `teg.graph @name` nested anywhere under `root`, if there is one.
pub fn find_graph(ctx: &Context, root: OpId, name: &str) -> Option<OpId> {
    let is = |op: OpId| ctx.op_name(op) == "teg.graph" && crate::ir::symbols::symbol_name(ctx, op) == Some(name);
    crate::ir::walk::preorder(&ctx.body, root).into_iter().find(|&op| is(op))
}

/// The attribute on the op defining a tensor that gives the tensor's layout in memory (a layout attribute, as
/// `resolve-layouts` writes it and the lowering to the NPU reads it).
pub const LAYOUT_ATTR: &str = "teg.layout";

/// Every `teg.graph` at or under `root`, in preorder.
pub fn graphs_under(ctx: &Context, root: OpId) -> Vec<OpId> {
    std::iter::once(root)
        .chain(crate::ir::walk::preorder(&ctx.body, root))
        .filter(|&op| ctx.op_name(op) == "teg.graph")
        .collect()
}

/// The ops directly in `graph`'s body, in program order.
pub fn graph_ops(ctx: &Context, graph: OpId) -> impl Iterator<Item = OpId> + '_ {
    let blocks = ctx.body.regions(graph).iter().flat_map(|&r| ctx.body.region(r).blocks.iter().copied());
    blocks.flat_map(|b| ctx.body.block_ops(b))
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
