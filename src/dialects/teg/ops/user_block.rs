//! `teg.block`, a user-declared block operator (its signature written in the IR, read by `block_op.rs`; its value
//! computed by its body at every index point, `eval/user_block.rs`), and `teg.yield`, its body's terminator.

use super::io::Io;
use super::syntax::{attr, fixed, optional, value_op, with};
use super::{Entry, OpFamily, OpKind};
use crate::array::Array;
use crate::dialects::teg::block_op::declared_signature;
use crate::dialects::teg::eval::{user_block as kernels, Args, EvalError};
use crate::dialects::teg::signature::Signature;
use crate::dialects::teg::tensor_type::TensorType;
use crate::ir::{Arity, AttrKind, OpInfo, OpTrait, Syntax};

/// A user-declared block operator.
#[derive(Clone, Debug, PartialEq)]
pub struct UserBlock {
    /// Its name.
    pub name: String,
    /// Its declared signature, checked for shape (the verifier checks it against the tensors).
    pub sig: Signature,
}

/// The block operator and its terminator.
pub const OPS: &[Entry] = &[
    with(
        OpInfo {
            regions: Arity::Exact(1),
            // Not IsolatedFromAbove (so that its body's values number on from the graph's, and tools that do not
            // know the op, like mlir-opt, read the print), but its verifier lets the body use only its own values.
            traits: &[OpTrait::Pure, OpTrait::HasParent(&["teg.graph"]), OpTrait::SingleBlock],
            ..value_op(
                "teg.block",
                "a user-declared block operator: index space, an IPF per input and output, a body computing one index point",
                Arity::Any,
                &[
                    attr("name", AttrKind::String),
                    attr("index", AttrKind::Array),
                    attr("extents", AttrKind::Array),
                    attr("maps", AttrKind::Array),
                    attr("boxes", AttrKind::Array),
                    optional("reduce", AttrKind::Array),
                    optional("monoid", AttrKind::Any),
                ],
                "$name $operands `over` $index $extents `maps` $maps `boxes` $boxes (`reduce` $reduce^ `by` $monoid)? attr-dict `:` type($operands) `->` type($results) $regions",
            )
        },
        |a| Ok(OpKind::Block(UserBlock { name: a.string("name")?, sig: declared_signature(a.ctx, a.op)? })),
    ),
    fixed(
        OpInfo {
            operands: Arity::Exact(1),
            traits: &[OpTrait::Terminator, OpTrait::HasParent(&["teg.block"])],
            syntax: Syntax::Format("$operands attr-dict `:` type($operands)"),
            ..OpInfo::new("teg.yield", "the output box of a teg.block body")
        },
        OpKind::Io(Io::Yield),
    ),
];

impl OpFamily for UserBlock {
    /// The written result type, which the verifier checks against the signature (signature correspondence).
    fn result_type(&self, _: &[&TensorType], declared: &TensorType) -> Result<TensorType, String> {
        Ok(declared.clone())
    }

    fn infers(&self) -> bool {
        false
    }

    fn signature(&self, _: &[&TensorType], _: &TensorType) -> Option<Signature> {
        Some(self.sig.clone())
    }

    fn eval(&self, a: &Args) -> Result<Array, EvalError> {
        let block = a.block().ok_or_else(|| EvalError { op: None, message: "an unprepared block".into() })?;
        let dense = a.dense_all()?;
        let arrays: Vec<&Array> = dense.iter().map(|d| &**d).collect();
        kernels::apply(block, &arrays, a.shape, a.dtype)
    }
}
