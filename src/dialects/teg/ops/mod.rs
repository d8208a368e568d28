//! Every TEG op, one table entry each, grouped in one file per family (cell ops, reductions, views, generators,
//! contractions, convolution, user blocks, inputs and outputs). An entry is the op's registration (name, arity,
//! attributes, pretty syntax) and how its attributes decode into an [`OpKind`]; the family's [`OpFamily`]
//! implementation, next to its entries, is the rest: result types, index maps, signature, value. The verifier, the
//! interfaces and the evaluator ask the family and never match op names, so a new op is one entry (and, for a new
//! function of cells, its kernel in `eval/`).

pub mod attrs;
pub mod cell;
pub mod contraction;
pub mod conv2d;
pub mod generators;
pub mod io;
mod maps;
pub mod reduce;
pub mod reshard;
pub mod rules;
mod syntax;
pub mod user_block;
pub mod views;

use super::eval::{Args, EvalError};
use super::tensor_type::TensorType;
use crate::array::Array;
use crate::interfaces::sharding::{IndexMaps, Signature};
use crate::ir::{Context, OpId, OpInfo, Registry};
use attrs::Attrs;
use std::collections::HashMap;
use std::sync::OnceLock;

pub use crate::interfaces::sharding::Monoid;
pub use cell::{Binary, Cell, Predicate, Unary};
pub use contraction::Contraction;
pub use conv2d::Conv2d;
pub use generators::Generator;
pub use io::Io;
pub use reduce::Reduce;
pub use reshard::Reshard;
pub use user_block::UserBlock;
pub use views::{PadMode, View};

/// A decoded TEG op: its family, and within it the op with its attributes.
#[derive(Clone, Debug, PartialEq)]
pub enum OpKind {
    /// An elementwise op.
    Cell(Cell),
    /// A reduction along named dimensions.
    Reduce(Reduce),
    /// A view selector.
    View(View),
    /// A tensor made from its coordinates alone.
    Generate(Generator),
    /// A contraction by dimension names (`contract`, `matmul`, `linear`, `prod`).
    Contraction(Contraction),
    /// A 2-D convolution.
    Conv2d(Conv2d),
    /// A user-declared block operator.
    Block(UserBlock),
    /// A move between shardings.
    Reshard(Reshard),
    /// A source, sink, sequence point or yield: values in and out of a graph or a block body.
    Io(Io),
}

impl OpKind {
    /// What the op's family says about it.
    pub fn family(&self) -> &dyn OpFamily {
        match self {
            OpKind::Cell(op) => op,
            OpKind::Reduce(op) => op,
            OpKind::View(op) => op,
            OpKind::Generate(op) => op,
            OpKind::Contraction(op) => op,
            OpKind::Conv2d(op) => op,
            OpKind::Block(op) => op,
            OpKind::Reshard(op) => op,
            OpKind::Io(op) => op,
        }
    }
}

/// What a family of TEG ops defines for each of its ops, beside its table entry.
pub trait OpFamily {
    /// The result type for operands of these types, or why they do not fit the op (with the numbers that
    /// disagree). `declared` is the written result type: ops whose result does not follow from their operands
    /// (casts, generators, sources) take their shape or element type from it, after checking it.
    fn result_type(&self, operands: &[&TensorType], declared: &TensorType) -> Result<TensorType, String>;

    /// Whether the result type follows from the operands alone (MLIR's InferTypeOpInterface: the pretty form may
    /// leave it out).
    fn infers(&self) -> bool {
        true
    }

    /// Which cells of each operand the op reads to compute a box of its result (the sharding interface's
    /// `index_maps`), given the operand types and the result type (`None` for a sink); `None` for an op without
    /// tensors. A block operator's are its signature's.
    fn index_maps(&self, operands: &[&TensorType], result: Option<&TensorType>) -> Option<IndexMaps> {
        self.signature(operands, result?).map(IndexMaps::from_signature)
    }

    /// A block operator's signature (index space, an IPF per input and output, reductions); `None` for other ops.
    fn signature(&self, _operands: &[&TensorType], _result: &TensorType) -> Option<Signature> {
        None
    }

    /// Whether each result cell is a function of the operands' cells at the same coordinate alone (or of none),
    /// so that a body made of such ops on one-cell tensors can run over vectors of many points' cells at once.
    fn elementwise(&self) -> bool {
        false
    }

    /// The op's value.
    fn eval(&self, args: &Args) -> Result<Array, EvalError>;
}

/// One op: its registration and how it decodes.
pub struct Entry {
    /// Name, arity, traits, attributes, syntax.
    pub info: OpInfo,
    /// How its attributes become its [`OpKind`].
    pub decode: Decode,
}

/// How an op's attributes become its [`OpKind`].
pub enum Decode {
    /// The op takes no attributes that change what it is.
    Fixed(OpKind),
    /// Read from the attributes (an error names the attribute).
    With(fn(&Attrs) -> Result<OpKind, String>),
}

/// Every family's entries, in registration order.
pub const FAMILIES: &[&[Entry]] = &[
    io::OPS,
    cell::OPS,
    views::OPS,
    generators::OPS,
    contraction::OPS,
    conv2d::OPS,
    user_block::OPS,
    reduce::OPS,
    reshard::OPS,
];

/// The entry of each op, by name.
fn entries() -> &'static HashMap<&'static str, &'static Entry> {
    static BY_NAME: OnceLock<HashMap<&'static str, &'static Entry>> = OnceLock::new();
    BY_NAME.get_or_init(|| FAMILIES.iter().copied().flatten().map(|e| (e.info.name, e)).collect())
}

/// Registers every op (and `teg.graph`, the container, which has no kind).
pub fn register(registry: &mut Registry) {
    registry.register_op(io::GRAPH);
    for entry in FAMILIES.iter().copied().flatten() {
        registry.register_op(entry.info);
    }
}

/// Decodes `op`; the error says which attribute is missing or wrong.
pub fn decode(ctx: &Context, op: OpId) -> Result<OpKind, String> {
    let name = ctx.op_name(op);
    match entries().get(name).map(|e| &e.decode) {
        Some(Decode::Fixed(kind)) => Ok(kind.clone()),
        Some(Decode::With(read)) => read(&Attrs { ctx, op }),
        None => Err(format!("'{name}' is not a TEG op")),
    }
}
