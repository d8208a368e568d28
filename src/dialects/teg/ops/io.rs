//! Values in and out: `teg.source` (an input bound by name), `teg.sink` (an output by name, giving a token),
//! `teg.sequence_point` (orders and roots what is observed), `teg.yield` (a block body's output box, its entry in
//! `user_block.rs`), and `teg.graph`, the container. The evaluator binds and collects these itself.

use super::maps::Maps;
use super::syntax::{attr, fixed, optional, value_op, with};
use super::{Entry, OpFamily, OpKind};
use crate::array::Array;
use crate::dialects::teg::eval::{Args, EvalError};
use crate::dialects::teg::tensor_type::TensorType;
use crate::interfaces::sharding::IndexMaps;
use crate::ir::{Arity, AttrKind, OpInfo, OpTrait, Syntax};

/// An op that moves values in or out of a graph or a block body.
#[derive(Clone, Debug, PartialEq)]
pub enum Io {
    /// A named input.
    Source {
        /// The name it is bound by.
        name: String,
    },
    /// A named output.
    Sink {
        /// The name it is written under.
        name: String,
    },
    /// An ordering and observation point.
    SequencePoint,
    /// The end of a block operator's body.
    Yield,
}

/// Sources, sinks and sequence points.
pub const OPS: &[Entry] = &[
    with(
        OpInfo {
            traits: &[OpTrait::HasParent(&["teg.graph"])],
            attrs: &[
                attr("name", AttrKind::String),
                optional("layout", AttrKind::Any),
                optional("placement", AttrKind::Any),
            ],
            ..value_op(
                "teg.source",
                "a tensor that comes from outside (bound by name)",
                Arity::Exact(0),
                &[],
                "$name attr-dict `:` type($results)",
            )
        },
        |a| Ok(OpKind::Io(Io::Source { name: a.string("name")? })),
    ),
    with(
        OpInfo {
            traits: &[OpTrait::HasParent(&["teg.graph"])],
            ..value_op(
                "teg.sink",
                "makes a tensor observable outside under a name; gives a token only sequence points take",
                Arity::Exact(1),
                &[attr("name", AttrKind::String)],
                "$name $operands attr-dict `:` type($operands) `->` type($results)",
            )
        },
        |a| Ok(OpKind::Io(Io::Sink { name: a.string("name")? })),
    ),
    fixed(
        OpInfo {
            operands: Arity::Any,
            results: Arity::Exact(0),
            traits: &[OpTrait::HasParent(&["teg.graph"])],
            verify: Some(crate::dialects::teg::verify::verify_op),
            syntax: Syntax::Format("$operands attr-dict (`:` type($operands)^)?"),
            ..OpInfo::new("teg.sequence_point", "orders what happens before it and roots what is observed")
        },
        OpKind::Io(Io::SequencePoint),
    ),
];

/// The graph container.
pub const GRAPH: OpInfo = OpInfo {
    regions: Arity::Exact(1),
    traits: &[OpTrait::Symbol, OpTrait::IsolatedFromAbove, OpTrait::SingleBlock, OpTrait::NoTerminator],
    attrs: &[attr("sym_name", AttrKind::String)],
    verify: Some(crate::dialects::teg::verify::verify_graph),
    syntax: Syntax::Format("$sym_name attr-dict $regions"),
    ..OpInfo::new("teg.graph", "a Tapestry expression graph: sources, selectors, operators, sinks")
};

impl OpFamily for Io {
    /// A source's is its written type; the others have no tensor result.
    fn result_type(&self, _: &[&TensorType], declared: &TensorType) -> Result<TensorType, String> {
        match self {
            Io::Source { .. } => Ok(declared.clone()),
            _ => Err("has no tensor result".into()),
        }
    }

    fn infers(&self) -> bool {
        false
    }

    /// A source reads nothing and writes its cells; a sink (outside the graph) and a yield (out of a block body)
    /// make their operand observable, cell by cell.
    fn index_maps(&self, operands: &[&TensorType], result: Option<&TensorType>) -> Option<IndexMaps> {
        match (self, result) {
            (Io::Source { .. }, Some(result)) => {
                let m = Maps::over(result.dims.clone());
                let out = m.ipf(m.by_name(result));
                Some(m.done(vec![("result".into(), out)], Vec::new()))
            }
            (Io::Sink { .. } | Io::Yield, _) => {
                let x = operands.first()?;
                let mut m = Maps::over(x.dims.clone());
                m.read("x", m.by_name(x));
                let observed = m.ipf(m.by_name(x));
                Some(m.done(vec![("observed".into(), observed)], Vec::new()))
            }
            _ => None,
        }
    }

    /// A yield passes its operand on (a body's vectors of many points' cells, too).
    fn elementwise(&self) -> bool {
        *self == Io::Yield
    }

    /// The evaluator binds sources and collects sinks and yields itself.
    fn eval(&self, _: &Args) -> Result<Array, EvalError> {
        Err(EvalError { op: None, message: format!("{self:?} is not a value op") })
    }
}
