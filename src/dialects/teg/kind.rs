//! What a TEG op is, decoded once from its name and attributes into a typed [`OpKind`]: the verifier infers
//! types from it and the evaluator computes values from it, so both read the attributes the same way.

use crate::ir::{Attr, Context, OpId};

/// Elementwise functions of one operand.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Unary {
    /// `|x|`.
    Abs,
    /// `-x`.
    Neg,
    /// `e^x`.
    Exp,
    /// `ln x`.
    Log,
    /// `√x`.
    Sqrt,
    /// `tanh x`.
    Tanh,
    /// `max(x, 0)`.
    Relu,
    /// `x·Φ(x)`, with the error function.
    Gelu,
    /// `x·Φ(x)` in its tanh approximation: `0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))`.
    GeluTanh,
}

/// Elementwise functions of two operands.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Binary {
    /// `a + b`.
    Add,
    /// `a − b`.
    Sub,
    /// `a · b`.
    Mul,
    /// `a / b`.
    Div,
    /// The larger (NaN if either is).
    Max,
    /// The smaller (NaN if either is).
    Min,
}

/// Comparison predicates.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Predicate {
    /// `==`.
    Eq,
    /// `!=`.
    Ne,
    /// `<`.
    Lt,
    /// `<=`.
    Le,
    /// `>`.
    Gt,
    /// `>=`.
    Ge,
}

/// The monoid of a reduction: the sharding interface's, so that a pass reading an op's reductions through the
/// interface and the evaluator agree on what combining partial results means.
pub use crate::interfaces::sharding::Monoid;

/// How `teg.pad` fills the new cells.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PadMode {
    /// With `value`.
    Constant,
    /// Mirrored at the edge, the edge cell not repeated (NumPy's `reflect`).
    Reflect,
    /// From the other end (toroidal).
    Wrap,
}

/// A decoded TEG op. Variant fields are the op's attributes, as `ops.rs` declares and documents them.
#[derive(Clone, Debug, PartialEq)]
#[allow(missing_docs)]
pub enum OpKind {
    /// An elementwise function of one operand.
    Unary(Unary),
    /// An elementwise function of two operands.
    Binary(Binary),
    /// Clamp to `[min, max]`.
    Clip { min: f64, max: f64 },
    /// Conversion to the result's element type.
    Cast,
    /// Comparison to `i1`.
    Compare(Predicate),
    /// `cond ? a : b`.
    Where,
    /// Reduction of the named dimensions; with a mask (a second operand), only the cells it marks take part, and
    /// a result cell none takes part in is `default` (else the monoid's identity).
    Reduce { dims: Vec<String>, monoid: Monoid, default: Option<f64> },
    /// The dimensions in a new order (the result's names).
    Permute { dims: Vec<String> },
    /// The named dimensions reversed.
    Reverse { dims: Vec<String> },
    /// `start, start + step, ... < stop` along `dim`.
    Slice { dim: String, start: i64, stop: i64, step: i64 },
    /// Drops an extent-1 dimension.
    Squeeze { dim: String },
    /// Picks index `index` along `dim` and drops the dimension (a negative index counts from the end).
    Select { dim: String, index: i64 },
    /// Inserts an extent-1 dimension `dim` at position `index`.
    Unsqueeze { dim: String, index: i64 },
    /// Stretches an extent-1 dimension to `extent`.
    Broadcast { dim: String, extent: i64 },
    /// Broadcasts to the result type by dimension name: adds the dimensions the operand lacks and stretches its
    /// extent-1 ones.
    BroadcastTo,
    /// Joins the operands along `dim`.
    Concat { dim: String },
    /// Alternates the operands' cells along `dim`.
    Interleave { dim: String },
    /// The operand `times` times along `dim`.
    Repeat { dim: String, times: i64 },
    /// `low` and `high` new cells along `dim`.
    Pad { dim: String, low: i64, high: i64, mode: PadMode, value: f64 },
    /// All zeros.
    Zeros,
    /// All ones.
    Ones,
    /// All `value`.
    Full(f64),
    /// Each cell's coordinate along `dim`.
    Iota { dim: String },
    /// Uniform `[0, 1)` values from `seed` and the coordinates.
    Random { seed: i64 },
    /// The coordinates of the leading dimensions.
    Index,
    /// `x · w` over named dimensions: those in both operands and not in the result are summed (einsum).
    Contract,
    /// `x[..., k] · w[k, n]`.
    Matmul,
    /// `x[..., in] · w[in, out] + b[out]`.
    Linear,
    /// `x[..., in] · w[in, out]` kept per `in`.
    Prod,
    /// 2-D convolution, NCHW, kernels OIHW.
    Conv2d { strides: [i64; 2], dilations: [i64; 2], padding: [i64; 2] },
    /// A user-declared block operator (its signature: `block_op::declared_signature`).
    Block { name: String },
    /// The end of a block operator's body.
    Yield,
    /// A named input.
    Source { name: String },
    /// A named output.
    Sink { name: String },
    /// An ordering and observation point.
    SequencePoint,
}

/// Decodes `op`; the error says which attribute is missing or wrong.
pub fn decode(ctx: &Context, op: OpId) -> Result<OpKind, String> {
    let name = ctx.op_name(op);
    let a = Attrs { ctx, op };
    Ok(match name.strip_prefix("teg.").unwrap_or(name) {
        "abs" => OpKind::Unary(Unary::Abs),
        "neg" => OpKind::Unary(Unary::Neg),
        "exp" => OpKind::Unary(Unary::Exp),
        "log" => OpKind::Unary(Unary::Log),
        "sqrt" => OpKind::Unary(Unary::Sqrt),
        "tanh" => OpKind::Unary(Unary::Tanh),
        "relu" => OpKind::Unary(Unary::Relu),
        "gelu" => OpKind::Unary(gelu(&a)?),
        "add" => OpKind::Binary(Binary::Add),
        "sub" => OpKind::Binary(Binary::Sub),
        "mul" => OpKind::Binary(Binary::Mul),
        "div" => OpKind::Binary(Binary::Div),
        "max" => OpKind::Binary(Binary::Max),
        "min" => OpKind::Binary(Binary::Min),
        "clip" => clip(&a)?,
        "cast" => OpKind::Cast,
        "compare" => OpKind::Compare(predicate(&a.string("predicate")?)?),
        "where" => OpKind::Where,
        "reduce" => {
            let monoid = a.string("monoid")?;
            let monoid = Monoid::from_name(&monoid)
                .ok_or_else(|| format!("unknown monoid '{monoid}' (sum, prod, max, min, mean)"))?;
            let default = a.ctx.op_attr(op, "default").map(|_| a.float("default")).transpose()?;
            OpKind::Reduce { dims: a.strings("dims")?, monoid, default }
        }
        "permute" => OpKind::Permute { dims: a.strings("dims")? },
        "reverse" => OpKind::Reverse { dims: a.strings("dims")? },
        "slice" => {
            OpKind::Slice { dim: a.string("dim")?, start: a.int("start")?, stop: a.int("stop")?, step: a.int("step")? }
        }
        "squeeze" => OpKind::Squeeze { dim: a.string("dim")? },
        "select" => OpKind::Select { dim: a.string("dim")?, index: a.int("index")? },
        "unsqueeze" => OpKind::Unsqueeze { dim: a.string("dim")?, index: a.int("index")? },
        "broadcast" if a.ctx.op_attr(op, "dim").is_none() => match a.ctx.op_attr(op, "extent") {
            Some(_) => return Err("an extent needs the dimension it stretches: along \"dim\" to extent".into()),
            None => OpKind::BroadcastTo,
        },
        "broadcast" => OpKind::Broadcast { dim: a.string("dim")?, extent: a.int("extent")? },
        "concat" => OpKind::Concat { dim: a.string("dim")? },
        "interleave" => OpKind::Interleave { dim: a.string("dim")? },
        "repeat" => OpKind::Repeat { dim: a.string("dim")?, times: a.int("times")? },
        "pad" => {
            let mode = match a.string("mode")?.as_str() {
                "constant" => PadMode::Constant,
                "reflect" => PadMode::Reflect,
                "wrap" => PadMode::Wrap,
                m => return Err(format!("unknown pad mode '{m}' (constant, reflect, wrap)")),
            };
            OpKind::Pad {
                dim: a.string("dim")?,
                low: a.int("low")?,
                high: a.int("high")?,
                mode,
                value: a.float("value")?,
            }
        }
        "zeros" => OpKind::Zeros,
        "ones" => OpKind::Ones,
        "full" => OpKind::Full(a.float("value")?),
        "iota" => OpKind::Iota { dim: a.string("dim")? },
        "random" => OpKind::Random { seed: a.int("seed")? },
        "index" => OpKind::Index,
        "contract" => OpKind::Contract,
        "matmul" => OpKind::Matmul,
        "linear" => OpKind::Linear,
        "prod" => OpKind::Prod,
        "conv2d" => OpKind::Conv2d {
            strides: a.pair("strides", 1)?,
            dilations: a.pair("dilations", 1)?,
            padding: a.pair("padding", 0)?,
        },
        "block" => OpKind::Block { name: a.string("name")? },
        "yield" => OpKind::Yield,
        "source" => OpKind::Source { name: a.string("name")? },
        "sink" => OpKind::Sink { name: a.string("name")? },
        "sequence_point" => OpKind::SequencePoint,
        other => return Err(format!("'teg.{other}' is not a TEG op")),
    })
}

fn predicate(p: &str) -> Result<Predicate, String> {
    Ok(match p {
        "eq" => Predicate::Eq,
        "ne" => Predicate::Ne,
        "lt" => Predicate::Lt,
        "le" => Predicate::Le,
        "gt" => Predicate::Gt,
        "ge" => Predicate::Ge,
        _ => return Err(format!("unknown predicate '{p}' (eq, ne, lt, le, gt, ge)")),
    })
}

/// Typed access to an op's attributes, with errors that name the attribute.
struct Attrs<'c> {
    ctx: &'c Context,
    op: OpId,
}

/// `teg.gelu`'s form: `approximate = "none"` (the default, the erf form) or `"tanh"`.
fn gelu(a: &Attrs<'_>) -> Result<Unary, String> {
    match a.optional_string("approximate")?.as_deref() {
        None | Some("none") => Ok(Unary::Gelu),
        Some("tanh") => Ok(Unary::GeluTanh),
        Some(other) => Err(format!("approximate must be \"none\" or \"tanh\", not \"{other}\"")),
    }
}

/// `teg.clip`'s bounds: either may be left out (an open side), not both (NumPy's rule).
fn clip(a: &Attrs<'_>) -> Result<OpKind, String> {
    let bound = |name: &str| a.ctx.op_attr(a.op, name).map(|_| a.float(name)).transpose();
    match (bound("min")?, bound("max")?) {
        (None, None) => Err("needs a bound: min, max or both".into()),
        (min, max) => Ok(OpKind::Clip { min: min.unwrap_or(f64::NEG_INFINITY), max: max.unwrap_or(f64::INFINITY) }),
    }
}

impl Attrs<'_> {
    fn optional_string(&self, name: &str) -> Result<Option<String>, String> {
        self.ctx.op_attr(self.op, name).map(|_| self.string(name)).transpose()
    }

    fn get(&self, name: &str) -> Result<&Attr, String> {
        self.ctx
            .op_attr(self.op, name)
            .map(|a| self.ctx.attr_data(a))
            .ok_or_else(|| format!("needs attribute '{name}'"))
    }

    fn string(&self, name: &str) -> Result<String, String> {
        self.get(name)?.as_str().map(str::to_string).ok_or_else(|| format!("attribute '{name}' must be a string"))
    }

    fn int(&self, name: &str) -> Result<i64, String> {
        let v = self.get(name)?.as_int().ok_or_else(|| format!("attribute '{name}' must be an integer"))?;
        i64::try_from(v).map_err(|_| format!("attribute '{name}' is out of range"))
    }

    fn float(&self, name: &str) -> Result<f64, String> {
        match self.get(name)? {
            Attr::Float { bits, .. } => Ok(f64::from_bits(*bits)),
            other => other.as_int().map(|v| v as f64).ok_or_else(|| format!("attribute '{name}' must be a number")),
        }
    }

    fn strings(&self, name: &str) -> Result<Vec<String>, String> {
        let Attr::Array(items) = self.get(name)? else { return Err(format!("attribute '{name}' must be a list")) };
        let items = items.clone();
        items
            .iter()
            .map(|&i| self.ctx.attr_data(i).as_str().map(str::to_string))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| format!("attribute '{name}' must be a list of dimension names"))
    }

    /// A two-element integer list, `default` for both when absent.
    fn pair(&self, name: &str, default: i64) -> Result<[i64; 2], String> {
        if self.ctx.op_attr(self.op, name).is_none() {
            return Ok([default; 2]);
        }
        let Attr::Array(items) = self.get(name)? else { return Err(format!("attribute '{name}' must be a list")) };
        let values: Option<Vec<i64>> =
            items.iter().map(|&i| self.ctx.attr_data(i).as_int().and_then(|v| i64::try_from(v).ok())).collect();
        match values.as_deref() {
            Some(&[a, b]) => Ok([a, b]),
            _ => Err(format!("attribute '{name}' must be a list of two integers")),
        }
    }
}
