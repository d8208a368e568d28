//! The registration of every TEG op: operand and result counts, declared attributes and the pretty syntax (a
//! declarative format per op). What an op means lives in `kind.rs` (decoded from these attributes), its types in
//! `infer.rs`, its values in `eval/`.

use super::verify::verify_op;
use crate::ir::{Arity, AttrKind, AttrSpec, OpInfo, OpTrait, Syntax};

const fn attr(name: &'static str, kind: AttrKind) -> AttrSpec {
    AttrSpec { name, kind, optional: false, default: None }
}

const fn optional(name: &'static str, kind: AttrKind) -> AttrSpec {
    AttrSpec { name, kind, optional: true, default: None }
}

/// Value ops live in a graph or in the body of a user-declared block operator.
const PARENTS: &[&str] = &["teg.graph", "teg.block"];
const IN_GRAPH: &[OpTrait] = &[OpTrait::Pure, OpTrait::HasParent(PARENTS)];

/// A value-producing op inside a graph: `operands` in, one tensor out.
const fn value_op(
    name: &'static str,
    summary: &'static str,
    operands: Arity,
    attrs: &'static [AttrSpec],
    format: &'static str,
) -> OpInfo {
    OpInfo {
        operands,
        results: Arity::Exact(1),
        traits: IN_GRAPH,
        attrs,
        verify: Some(verify_op),
        syntax: Syntax::Format(format),
        ..OpInfo::new(name, summary)
    }
}

const SAME: &str = "$operands attr-dict (`:` type($results)^)?";
const TYPED: &str = "$operands attr-dict `:` type($operands) (`->` type($results)^)?";
const GENERATOR: &str = "attr-dict `:` type($results)";

const fn same_type(name: &'static str, summary: &'static str, operands: u32) -> OpInfo {
    OpInfo {
        traits: &[OpTrait::Pure, OpTrait::HasParent(PARENTS), OpTrait::SameOperandsAndResultType],
        ..value_op(name, summary, Arity::Exact(operands), &[], SAME)
    }
}

/// A cell operator of two operands that broadcast by dimension name (`infer::broadcast`); the pretty form names
/// the result type only (the operands' types are their definitions').
const fn broadcasting(name: &'static str, summary: &'static str) -> OpInfo {
    value_op(name, summary, Arity::Exact(2), &[], SAME)
}

/// Cell (elementwise) operators: one operand of the result's type, or operands that broadcast by name.
pub const CELL: &[OpInfo] = &[
    broadcasting("teg.add", "elementwise a + b"),
    broadcasting("teg.sub", "elementwise a - b"),
    broadcasting("teg.mul", "elementwise a * b"),
    broadcasting("teg.div", "elementwise a / b"),
    broadcasting("teg.max", "elementwise maximum (NaN wins)"),
    broadcasting("teg.min", "elementwise minimum (NaN wins)"),
    same_type("teg.abs", "elementwise |x|", 1),
    same_type("teg.neg", "elementwise -x", 1),
    same_type("teg.exp", "elementwise e^x", 1),
    same_type("teg.log", "elementwise natural logarithm", 1),
    same_type("teg.sqrt", "elementwise square root", 1),
    same_type("teg.tanh", "elementwise hyperbolic tangent", 1),
    same_type("teg.relu", "elementwise max(x, 0)", 1),
    OpInfo {
        attrs: &[optional("approximate", AttrKind::String)],
        ..same_type("teg.gelu", "elementwise x·Φ(x): the erf form, or its tanh approximation", 1)
    },
    OpInfo {
        traits: &[OpTrait::Pure, OpTrait::HasParent(PARENTS), OpTrait::SameOperandsAndResultType],
        ..value_op(
            "teg.clip",
            "elementwise clamp to [min, max] (either bound may be left out)",
            Arity::Exact(1),
            &[optional("min", AttrKind::Float), optional("max", AttrKind::Float)],
            "$operands (`min` $min^)? (`max` $max^)? attr-dict (`:` type($results)^)?",
        )
    },
    value_op("teg.cast", "elementwise conversion to the result's element type", Arity::Exact(1), &[], TYPED),
    value_op(
        "teg.compare",
        "elementwise comparison (eq, ne, lt, le, gt, ge) to i1",
        Arity::Exact(2),
        &[attr("predicate", AttrKind::Any)],
        "$predicate $operands attr-dict `:` type($operands) (`->` type($results)^)?",
    ),
    value_op("teg.where", "elementwise cond ? a : b", Arity::Exact(3), &[], TYPED),
];

/// Reductions along named dimensions with a monoid.
pub const REDUCE: OpInfo = value_op(
    "teg.reduce",
    "reduction along named dimensions with a monoid (sum, prod, max, min; mean = sum then scale), optionally masked",
    Arity::AtLeast(1),
    &[attr("dims", AttrKind::Array), attr("monoid", AttrKind::Any), optional("default", AttrKind::Float)],
    "$operands `along` $dims `by` $monoid (`default` $default^)? attr-dict `:` type($operands) (`->` type($results)^)?",
);

/// View selectors: every output cell is one known input cell.
pub const VIEWS: &[OpInfo] = &[
    value_op(
        "teg.permute",
        "reorders the dimensions (the result's dimension names, in order)",
        Arity::Exact(1),
        &[attr("dims", AttrKind::Array)],
        "$operands `to` $dims attr-dict `:` type($operands) (`->` type($results)^)?",
    ),
    value_op(
        "teg.reverse",
        "reverses the named dimensions",
        Arity::Exact(1),
        &[attr("dims", AttrKind::Array)],
        "$operands `along` $dims attr-dict `:` type($operands) (`->` type($results)^)?",
    ),
    value_op(
        "teg.slice",
        "the coordinates start, start + step, ... below stop of one dimension",
        Arity::Exact(1),
        &[attr("dim", AttrKind::Any), attr("start", AttrKind::Int), attr("stop", AttrKind::Int), attr("step", AttrKind::Int)],
        "$operands `along` $dim `from` $start `to` $stop `step` $step attr-dict `:` type($operands) (`->` type($results)^)?",
    ),
    value_op(
        "teg.squeeze",
        "removes a dimension of extent 1",
        Arity::Exact(1),
        &[attr("dim", AttrKind::Any)],
        "$operands `along` $dim attr-dict `:` type($operands) (`->` type($results)^)?",
    ),
    value_op(
        "teg.select",
        "one index along a dimension, the dimension dropped (NumPy's x[:, i]; a negative index counts from the end)",
        Arity::Exact(1),
        &[attr("dim", AttrKind::Any), attr("index", AttrKind::Int)],
        "$operands `along` $dim `at` $index attr-dict `:` type($operands) (`->` type($results)^)?",
    ),
    value_op(
        "teg.unsqueeze",
        "inserts a dimension of extent 1 (named as in the result type)",
        Arity::Exact(1),
        &[attr("dim", AttrKind::Any), attr("index", AttrKind::Int)],
        "$operands `as` $dim `at` $index attr-dict `:` type($operands) (`->` type($results)^)?",
    ),
    value_op(
        "teg.broadcast",
        "stretches an extent-1 dimension to `extent`, or (without `along`) broadcasts to the result type by name",
        Arity::Exact(1),
        &[optional("dim", AttrKind::Any), optional("extent", AttrKind::Int)],
        "$operands (`along` $dim^ `to` $extent)? attr-dict `:` type($operands) (`->` type($results)^)?",
    ),
    value_op(
        "teg.concat",
        "joins tensors end to end along a dimension",
        Arity::AtLeast(1),
        &[attr("dim", AttrKind::Any)],
        "$operands `along` $dim attr-dict `:` type($operands) (`->` type($results)^)?",
    ),
    value_op(
        "teg.interleave",
        "alternates the cells of k tensors along a dimension (cell i from input i mod k)",
        Arity::AtLeast(1),
        &[attr("dim", AttrKind::Any)],
        "$operands `along` $dim attr-dict `:` type($operands) (`->` type($results)^)?",
    ),
    value_op(
        "teg.repeat",
        "the tensor repeated end to end along a dimension",
        Arity::Exact(1),
        &[attr("dim", AttrKind::Any), attr("times", AttrKind::Int)],
        "$operands `along` $dim `times` $times attr-dict `:` type($operands) (`->` type($results)^)?",
    ),
    value_op(
        "teg.pad",
        "pads a dimension (mode constant, reflect or wrap)",
        Arity::Exact(1),
        &[
            attr("dim", AttrKind::Any),
            attr("low", AttrKind::Int),
            attr("high", AttrKind::Int),
            attr("mode", AttrKind::Any),
            attr("value", AttrKind::Float),
        ],
        "$operands `along` $dim `low` $low `high` $high $mode $value attr-dict `:` type($operands) (`->` type($results)^)?",
    ),
];

/// Generators: tensors from nothing but their coordinates.
pub const GENERATORS: &[OpInfo] = &[
    value_op("teg.zeros", "a tensor of zeros", Arity::Exact(0), &[], GENERATOR),
    value_op("teg.ones", "a tensor of ones", Arity::Exact(0), &[], GENERATOR),
    value_op(
        "teg.full",
        "a tensor of one value",
        Arity::Exact(0),
        &[attr("value", AttrKind::Float)],
        "$value attr-dict `:` type($results)",
    ),
    value_op(
        "teg.iota",
        "each cell's coordinate along a dimension",
        Arity::Exact(0),
        &[attr("dim", AttrKind::Any)],
        "`along` $dim attr-dict `:` type($results)",
    ),
    value_op(
        "teg.random",
        "uniform values in [0, 1), a function of the seed and the coordinates only",
        Arity::Exact(0),
        &[attr("seed", AttrKind::Int)],
        "`seed` $seed attr-dict `:` type($results)",
    ),
    value_op(
        "teg.index",
        "an index tensor: the coordinates of the leading dimensions' cells, the last dimension naming the axis",
        Arity::Exact(0),
        &[],
        GENERATOR,
    ),
];

/// Block operators with built-in signatures.
pub const BLOCKS: &[OpInfo] = &[
    value_op(
        "teg.contract",
        "x · w over named dimensions: those in both operands and not in the result are summed (einsum)",
        Arity::Exact(2),
        &[],
        TYPED,
    ),
    value_op("teg.matmul", "x[..., k] · w[k, n] summed over k", Arity::Exact(2), &[], TYPED),
    value_op("teg.linear", "x[..., in] · w[in, out] + b[out]", Arity::Exact(3), &[], TYPED),
    value_op("teg.prod", "p[..., in, out] = x[..., in] · w[in, out] (matmul before its sum)", Arity::Exact(2), &[], TYPED),
    value_op(
        "teg.conv2d",
        "y[n, o, oh, ow] = Σ x[n, c, oh·s − p + kh·d, ow·s − p + kw·d] · k[o, c, kh, kw]",
        Arity::Exact(2),
        &[attr("strides", AttrKind::Array), attr("dilations", AttrKind::Array), attr("padding", AttrKind::Array)],
        "$operands `strides` $strides `dilations` $dilations `padding` $padding attr-dict `:` type($operands) (`->` type($results)^)?",
    ),
];

/// A user-declared block operator (signature in the IR, value from its body) and its body's terminator.
pub const USER_BLOCK: &[OpInfo] = &[
    OpInfo {
        regions: Arity::Exact(1),
        // Not IsolatedFromAbove (so that its body's values number on from the graph's, and tools that do not know
        // the op, like mlir-opt, read the print), but its verifier lets the body use only its own values.
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
    OpInfo {
        operands: Arity::Exact(1),
        traits: &[OpTrait::Terminator, OpTrait::HasParent(&["teg.block"])],
        syntax: Syntax::Format("$operands attr-dict `:` type($operands)"),
        ..OpInfo::new("teg.yield", "the output box of a teg.block body")
    },
];

/// Sources, sinks and sequence points.
pub const IO: &[OpInfo] = &[
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
    OpInfo {
        operands: Arity::Any,
        results: Arity::Exact(0),
        traits: &[OpTrait::HasParent(&["teg.graph"])],
        verify: Some(verify_op),
        syntax: Syntax::Format("$operands attr-dict (`:` type($operands)^)?"),
        ..OpInfo::new("teg.sequence_point", "orders what happens before it and roots what is observed")
    },
];

/// The graph container.
pub const GRAPH: OpInfo = OpInfo {
    regions: Arity::Exact(1),
    traits: &[OpTrait::Symbol, OpTrait::IsolatedFromAbove, OpTrait::SingleBlock, OpTrait::NoTerminator],
    attrs: &[attr("sym_name", AttrKind::String)],
    verify: Some(super::verify::verify_graph),
    syntax: Syntax::Format("$sym_name attr-dict $regions"),
    ..OpInfo::new("teg.graph", "a Tapestry expression graph: sources, selectors, operators, sinks")
};
