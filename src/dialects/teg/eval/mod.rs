//! The TEG reference evaluator: runs a graph on the host, op by op in program order (decoded once into a plan),
//! exactly per the op definitions; the oracle every later lowering is checked against. Strided views share their
//! operand's cells (`value.rs`); cell ops read them and broadcasts in place.
//!
//! Arithmetic rules. Floats compute in their own type (`f16` and `bf16` in `f32`, rounded to the type after each
//! op); integers wrap at 64 bits and are truncated to their type; integer division truncates toward zero and a
//! division by zero is an error. Reductions of `f32`, `f16` and `bf16` accumulate in `f64` and round once;
//! `f64` accumulates in `f64`; a run of cells along a reduced innermost dimension folds in eight interleaved
//! partial results (combined in a fixed order), other cells in index order. `matmul`, `linear` and `conv2d` on `f32` accumulate in `f32` in
//! the GEMM's blocked order (so a result may differ from a sequential sum in the last bits); `f16` and `bf16`
//! operands compute in `f32`. `cast` from a float to an integer truncates toward zero and saturates (NaN gives 0);
//! between integers it wraps; to `i1` it is `x != 0`.

pub(crate) mod block;
mod broadcast;
pub(crate) mod cell;
pub(crate) mod contract;
pub(crate) mod generate;
mod plan;
pub(crate) mod reduce;
pub(crate) mod reshard;
mod simd;
pub(crate) mod user_block;
mod value;
pub(crate) mod views;

use super::graph_ops;
use super::ops::{decode, Cell, Io, OpKind};
use super::tensor_type::{as_tensor, TensorType};
use crate::array::{Array, DType};
use crate::ir::verify::{verify, VerifyOptions};
use crate::ir::{Context, OpId, ValueId};
use broadcast::Read;
use indexmap::IndexMap;
use plan::{BlockPlan, Plan, Step};
use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::time::{Duration, Instant};
use value::Value;

pub use value::Strided;

/// A graph's inputs or outputs by name, in order (what [`evaluate`] takes and gives).
pub type Values = IndexMap<String, Array>;

/// The most elements one value may have: the reference evaluator holds every value in memory.
pub const MAX_ELEMENTS: u64 = 1 << 30;

/// Why evaluation stopped: the op it stopped at (if an op failed) and the reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EvalError {
    /// The op that failed, if the failure is an op's.
    pub op: Option<OpId>,
    /// What went wrong.
    pub message: String,
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for EvalError {}

/// A buffer the evaluator could not allocate: an error at the op, never an abort.
impl From<crate::array::alloc::AllocError> for EvalError {
    fn from(e: crate::array::alloc::AllocError) -> EvalError {
        EvalError { op: None, message: format!("{e} for the result") }
    }
}

fn fail<T>(message: impl Into<String>) -> Result<T, EvalError> {
    Err(EvalError { op: None, message: message.into() })
}

/// `n` zeroed cells for a result (see [`crate::array::alloc::zeroed`]): running out of memory is an error.
fn cells<T: crate::array::alloc::Zeroable>(n: usize) -> Result<Vec<T>, EvalError> {
    crate::array::alloc::zeroed(n).or_else(|e| fail(format!("{e} for the result")))
}

/// The sources a graph reads, by name, with their types: what a caller must bind.
pub fn sources(ctx: &Context, graph: OpId) -> Vec<(String, Vec<u64>, DType)> {
    graph_ops(ctx, graph)
        .filter_map(|op| match decode(ctx, op) {
            Ok(OpKind::Io(Io::Source { name })) => {
                let t = as_tensor(ctx, ctx.body.value_type(ctx.body.result(op, 0)))?;
                Some((name, t.shape(), t.dtype))
            }
            _ => None,
        })
        .collect()
}

/// Evaluates a graph (verified first: unverified IR is an error) with its sources bound by name; returns every sink's value by sink name, in op
/// order. The inputs are borrowed, not copied, so one set of inputs can feed the reference and every lowering
/// checked against it. A missing source, or one of the wrong shape or element type, is an error naming it.
pub fn evaluate(ctx: &Context, graph: OpId, inputs: &Values) -> Result<Values, EvalError> {
    evaluate_timed(ctx, graph, inputs, &mut |_, _| {})
}

/// [`evaluate`], telling `time` how long each op of the graph took (for `tap-run --timing`).
pub fn evaluate_timed(
    ctx: &Context,
    graph: OpId,
    inputs: &Values,
    time: &mut dyn FnMut(OpId, Duration),
) -> Result<Values, EvalError> {
    check_graph(ctx, graph)?;
    let plan = plan::plan(ctx, graph_ops(ctx, graph))?;
    let mut state = State::default();
    state.run(&plan, inputs, time)?;
    Ok(state.sinks)
}

/// `graph` must be a `teg.graph` that verifies: the evaluator relies on what the verifier checks (types agree,
/// attributes are in range), so unverified IR is an error here, never a panic later.
fn check_graph(ctx: &Context, graph: OpId) -> Result<(), EvalError> {
    if ctx.body.is_erased(graph) || ctx.op_name(graph) != "teg.graph" {
        let message = format!("'{}' is not a teg.graph", ctx.op_name(graph));
        return Err(EvalError { op: Some(graph), message });
    }
    match verify(ctx, graph, VerifyOptions::default()).into_iter().next() {
        Some(d) => Err(EvalError { op: Some(graph), message: format!("the graph does not verify: {}", d.message) }),
        None => Ok(()),
    }
}

/// Values computed so far (the inputs borrowed, the rest owned, views sharing their operand's cells), sinks met,
/// and what a block body yielded. A value is dropped right after the last step that reads it (a view keeps its
/// cells alive), so a chain of ops holds about two values at a time.
#[derive(Default)]
struct State<'a> {
    env: HashMap<ValueId, Value<'a>>,
    sinks: IndexMap<String, Array>,
    yielded: Option<Array>,
}

impl<'a> State<'a> {
    /// Runs the plan's steps in order.
    fn run(
        &mut self,
        plan: &Plan,
        inputs: &'a IndexMap<String, Array>,
        time: &mut dyn FnMut(OpId, Duration),
    ) -> Result<(), EvalError> {
        for (i, step) in plan.steps.iter().enumerate() {
            let start = Instant::now();
            let dies = |v: &ValueId| plan.last_use.get(v) == Some(&i);
            self.step(step, &dies, inputs).map_err(|e| EvalError { op: e.op.or(Some(step.op)), ..e })?;
            // Drop the values this step read last, and a result nothing reads.
            for v in step.operands.iter().filter(|v| dies(v)) {
                self.env.remove(v);
            }
            if let Some((r, _)) = step.result.as_ref().filter(|(r, _)| !plan.last_use.contains_key(r)) {
                self.env.remove(r);
            }
            time(step.op, start.elapsed());
        }
        Ok(())
    }

    /// A unary or binary cell op computed over its first operand's cells (one that `computes_in_place`), when that value is a dense array held
    /// nowhere else, has the result's shape and element type, and dies with the op (read by it once, last): the
    /// chain of cell ops of an expression then allocates one buffer, not one per op. `None` when the op computes
    /// into a fresh buffer.
    fn in_place(
        &mut self,
        step: &Step,
        dies: &dyn Fn(&ValueId) -> bool,
        ty: &TensorType,
    ) -> Result<Option<Array>, EvalError> {
        if !matches!(&step.kind, OpKind::Cell(c) if c.computes_in_place()) {
            return Ok(None);
        }
        let first = step.operands[0];
        if !dies(&first) || step.operands.iter().filter(|&&v| v == first).count() != 1 {
            return Ok(None);
        }
        let Some(value) = self.env.remove(&first) else { return Ok(None) };
        let mut value = match value.into_unique() {
            Ok(a) if a.shape() == ty.shape() && a.dtype() == ty.dtype => a,
            Ok(a) => return self.keep(first, Value::owned(a)),
            Err(v) => return self.keep(first, v),
        };
        match step.kind {
            OpKind::Cell(Cell::Unary(u)) => cell::unary_in_place(u, &mut value)?,
            OpKind::Cell(Cell::Binary(b)) => {
                let other = &self.env[&step.operands[1]];
                let reads =
                    vec![Read::dense(value.shape()), Read::of(&step.result_names, &step.names[1], &other.layout())];
                let shape = ty.shape();
                cell::binary_in_place(b, &mut value, other.base(), &cell::Broadcast { shape: &shape, reads })?;
            }
            _ => unreachable!("checked above: a unary or binary op"),
        }
        Ok(Some(value))
    }

    /// Puts `value` back (an operand [`State::in_place`] could not overwrite).
    fn keep(&mut self, id: ValueId, value: Value<'a>) -> Result<Option<Array>, EvalError> {
        self.env.insert(id, value);
        Ok(None)
    }

    fn step(
        &mut self,
        step: &Step,
        dies: &dyn Fn(&ValueId) -> bool,
        inputs: &'a IndexMap<String, Array>,
    ) -> Result<(), EvalError> {
        let unevaluated = || EvalError { op: None, message: "operand not evaluated".into() };
        let copy = |env: &HashMap<ValueId, Value>, i: usize| match step.operands.get(i).and_then(|v| env.get(v)) {
            Some(v) => Ok(v.dense()?.into_owned()),
            None => Err(unevaluated()),
        };
        match &step.kind {
            OpKind::Io(Io::Sink { name }) => {
                // A value the sink reads last moves out instead of being copied.
                let value = step.operands[0];
                let v = if dies(&value) { self.env.remove(&value).map(Value::into_array) } else { None };
                let v = match v {
                    Some(v) => v?,
                    None => copy(&self.env, 0)?,
                };
                self.sinks.insert(name.clone(), v);
                return Ok(());
            }
            OpKind::Io(Io::Yield) => {
                self.yielded = Some(copy(&self.env, 0)?);
                return Ok(());
            }
            OpKind::Io(Io::SequencePoint) => return Ok(()),
            _ => {}
        }
        let Some((result, ty)) = &step.result else { return fail("the result is not a tensor") };
        if ty.size() > MAX_ELEMENTS {
            return fail(format!(
                "the result has {} elements, more than the evaluator's limit of {MAX_ELEMENTS}",
                ty.size()
            ));
        }
        if let Some(value) = self.in_place(step, dies, ty)? {
            self.env.insert(*result, Value::owned(value));
            return Ok(());
        }
        let shape = ty.shape();
        let values: Vec<&Value> = step.operands.iter().map(|v| &self.env[v]).collect();
        // A strided view shares its operand's cells.
        let view = match (&step.kind, values.as_slice()) {
            (OpKind::View(view), [x]) => view.strided(&x.layout(), &step.names[0], &step.result_names, &shape),
            _ => None,
        };
        let value = match (&step.kind, view) {
            (OpKind::Io(Io::Source { name }), _) => Value::borrowed(bind(name, inputs, &shape, ty.dtype)?),
            (_, Some(layout)) => values[0].view(layout),
            (kind, None) => {
                let block = step.block.as_deref();
                let args = Args::new(&values, &step.names, &shape, &step.result_names, ty.dtype, block);
                Value::owned(kind.family().eval(&args)?)
            }
        };
        self.env.insert(*result, value);
        Ok(())
    }
}

/// Runs a block operator's body (its plan) on one index point's input boxes; returns the yielded output box.
fn run_body(args: &[ValueId], body: &Plan, tiles: Vec<Array>) -> Result<Array, EvalError> {
    let no_inputs = IndexMap::new();
    let mut state = State::default();
    for (&arg, tile) in args.iter().zip(tiles) {
        state.env.insert(arg, Value::owned(tile));
    }
    state.run(body, &no_inputs, &mut |_, _| {})?;
    state.yielded.ok_or_else(|| EvalError { op: None, message: "the body yielded nothing".into() })
}

/// The input bound to source `name`.
fn bind<'a>(
    name: &str,
    inputs: &'a IndexMap<String, Array>,
    shape: &[u64],
    dtype: DType,
) -> Result<&'a Array, EvalError> {
    let Some(a) = inputs.get(name) else { return fail(format!("source '{name}' is not bound to an input")) };
    if a.shape() != shape || a.dtype() != dtype {
        return fail(format!(
            "source '{name}' is {dtype} of shape {shape:?} but its input is {} of shape {:?}",
            a.dtype(),
            a.shape()
        ));
    }
    Ok(a)
}

/// What an op's evaluation reads: its operands (in place: views and broadcasts are not copied unless the op asks
/// for a dense copy), their dimension names, and the result's extents, dimension names and element type.
pub struct Args<'v, 'a> {
    values: &'v [&'v Value<'a>],
    /// Each operand's dimension names.
    pub names: &'v [Vec<String>],
    /// The result's extents.
    pub shape: &'v [u64],
    /// The result's dimension names.
    pub out_names: &'v [String],
    /// The result's element type.
    pub dtype: DType,
    block: Option<&'v BlockPlan>,
}

impl<'v, 'a> Args<'v, 'a> {
    /// The arguments of an op reading `values` (dimension `names`) into a result of extents `shape`, dimension
    /// `out_names` and element type `dtype`; `block` is a user block's prepared body.
    pub(crate) fn new(
        values: &'v [&'v Value<'a>],
        names: &'v [Vec<String>],
        shape: &'v [u64],
        out_names: &'v [String],
        dtype: DType,
        block: Option<&'v BlockPlan>,
    ) -> Self {
        Args { values, names, shape, out_names, dtype, block }
    }

    /// How many operands.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether the op has no operands.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Operand `i` as a dense array (a view copied out).
    pub fn dense(&self, i: usize) -> Result<Cow<'v, Array>, EvalError> {
        self.values[i].dense()
    }

    /// Every operand as a dense array.
    pub fn dense_all(&self) -> Result<Vec<Cow<'v, Array>>, EvalError> {
        (0..self.len()).map(|i| self.dense(i)).collect()
    }

    /// The array holding operand `i`'s cells (for a view, read it through [`Args::broadcast`]).
    pub fn base(&self, i: usize) -> &'v Array {
        self.values[i].base()
    }

    /// How each operand's cells are read at the result's coordinates: by dimension name, through its layout.
    pub(crate) fn broadcast(&self) -> cell::Broadcast<'v> {
        let reads = self.values.iter().zip(self.names).map(|(v, n)| Read::of(self.out_names, n, &v.layout()));
        cell::Broadcast { shape: self.shape, reads: reads.collect() }
    }

    /// How the dense copy of operand `i` is read at the coordinates of operand `of` (by dimension name).
    pub(crate) fn strides_of(&self, i: usize, of: usize) -> Read {
        broadcast::strides_in(&self.names[of], &self.names[i], &self.values[i].layout().shape)
    }

    /// The position of dimension `name` in operand `i`.
    pub fn dim(&self, i: usize, name: &str) -> Result<usize, EvalError> {
        match self.names[i].iter().position(|n| n == name) {
            Some(k) => Ok(k),
            None => fail(format!("operand {i} has no dimension {name}")),
        }
    }

    /// A user block's prepared signature and body.
    pub(crate) fn block(&self) -> Option<&'v BlockPlan> {
        self.block
    }
}

/// The cells of `x` read through `layout`, as an array of their own.
pub fn copy_view(x: &Array, layout: Strided) -> Result<Array, EvalError> {
    Ok(Value::borrowed(x).view(layout).dense()?.into_owned())
}
