//! User-declared block operators: the body, decoded once into a plan, runs once per index point (or, when every
//! value it makes is one cell and every op elementwise, once over vectors holding every point's cells), on the boxes its IPFs select from the
//! inputs; each output box is written (or, along reduced index dimensions, combined with the monoid, in `f64`
//! for floats and wrapping `i64` for integers) into the output.

use super::broadcast::{for_each_offset, Read};
use super::plan::{BlockPlan, Plan};
use super::value::Value;
use super::{run_body, Args, EvalError};
use crate::array::alloc::filled;
use crate::array::{strides, Array, DType, Data};
use crate::dialects::teg::ops::{decode, Contraction, Io, Monoid, OpKind};
use crate::dialects::teg::tensor_type::as_tensor;
use crate::interfaces::sharding::Signature;
use crate::ir::ValueId;
use crate::ir::{Context, OpId};
use crate::zspace::{Ipf, ZRange};
use std::collections::HashMap;

/// The most index points a block body is run for (the body runs once per point, op by op).
pub const MAX_POINTS: u128 = 1 << 24;

/// The most op runs (index points times body ops) of a body run point by point: about half a microsecond each,
/// so a couple of seconds.
pub const MAX_OP_RUNS: u128 = 1 << 22;

/// The most cells a block may touch over all its index points (its input boxes and the values its body makes):
/// a bound on the evaluator's time, which is about a nanosecond per cell.
pub const MAX_CELLS: u128 = 1 << 32;

/// Prepares the `teg.block` op `op` of signature `sig`: its body's plan, after checking the evaluator's limits.
pub fn prepare(ctx: &Context, op: OpId, sig: Signature) -> Result<BlockPlan, EvalError> {
    let err = |message: String| EvalError { op: Some(op), message };
    let points = sig.index_range().size();
    if points > MAX_POINTS {
        return Err(err(format!(
            "the index space has {points} points; the evaluator runs a body at most {MAX_POINTS} times"
        )));
    }
    let cells = block_work(ctx, op, &sig);
    if cells > MAX_CELLS {
        return Err(err(format!(
            "the body touches {cells} cells over its {points} index points, more than the evaluator's limit of {MAX_CELLS}"
        )));
    }
    let body = ctx.body.region(ctx.body.regions(op)[0]).blocks[0];
    let args = ctx.body.block(body).args.clone();
    let plan = super::plan::plan(ctx, ctx.body.block_ops(body))?;
    let one_cell_args = args.iter().all(|&a| as_tensor(ctx, ctx.body.value_type(a)).is_some_and(|t| t.size() == 1));
    let vectorized = one_cell_args && vectorizable(&plan);
    let runs = points.saturating_mul(plan.steps.len() as u128);
    if !vectorized && runs > MAX_OP_RUNS {
        return Err(err(format!(
            "the body runs op by op at each of the {points} index points ({} ops, {runs} op runs), more than the evaluator's limit of {MAX_OP_RUNS} (a body of one-cell elementwise ops runs over all points at once)",
            plan.steps.len()
        )));
    }
    Ok(BlockPlan { sig, args, body: plan, vectorized })
}

/// Whether a body can run over all index points at once: every value it makes is one cell and every op is
/// elementwise (its family says so: cell ops, constants, views that only rename a one-cell tensor), so that running
/// it on vectors holding the cells of every point computes each point's cell as running it point by point does.
fn vectorizable(body: &Plan) -> bool {
    body.steps.iter().all(|s| s.kind.family().elementwise() && s.result.as_ref().is_none_or(|(_, t)| t.size() == 1))
}

/// Runs a vectorizable body once, on vectors holding every index point's input cell (in index order); returns
/// the vector of every point's output cell. Each op is evaluated by its family on vectors of shape `[n]`, every
/// operand read by one name.
fn run_vectorized(block: &BlockPlan, inputs: Vec<Array>, n: u64) -> Result<Array, EvalError> {
    let mut env: HashMap<ValueId, Array> = block.args.iter().copied().zip(inputs).collect();
    let point = vec!["point".to_string()];
    let shape = [n];
    for step in &block.body.steps {
        let vector = |i: usize| &env[&step.operands[i]];
        let value = match &step.kind {
            OpKind::Io(Io::Yield) => return Ok(vector(0).clone()),
            // One cell renamed: the same vector.
            OpKind::View(_) => vector(0).clone(),
            kind => {
                let values: Vec<Value> = (0..step.operands.len()).map(|i| Value::borrowed(vector(i))).collect();
                let refs: Vec<&Value> = values.iter().collect();
                let names = vec![point.clone(); refs.len()];
                let dtype = step.result.as_ref().map_or(DType::F32, |r| r.1.dtype);
                kind.family().eval(&Args::new(&refs, &names, &shape, &point, dtype, None))?
            }
        };
        if let Some((r, _)) = &step.result {
            env.insert(*r, value);
        }
    }
    Err(EvalError { op: None, message: "the body yielded nothing".into() })
}

/// Evaluates a prepared user block whose result has `shape` and `dtype`: its body's plan runs once per index
/// point.
pub fn apply(block: &BlockPlan, args: &[&Array], shape: &[u64], dtype: DType) -> Result<Array, EvalError> {
    let err = |message: String| EvalError { op: None, message };
    let sig = &block.sig;
    let mut out = Output::new(sig.reductions.first().map(|r| r.1), shape, dtype)?;
    let out_strides = strides(shape);
    let ipf_err = |e: crate::zspace::ZError| err(e.0);
    if block.vectorized {
        // One cell per point in and out: every point's cells gathered, the body run once, the cells combined.
        let index = sig.index_range().shape();
        let inputs = sig.inputs.iter().zip(args).map(|((_, f), a)| {
            let picks = box_starts(f, a.shape(), &index);
            let cells = a.data().try_gather(picks.iter().copied())?;
            Ok(Array::new(vec![picks.len() as u64], cells).expect("one cell per point"))
        });
        let all = run_vectorized(block, inputs.collect::<Result<_, EvalError>>()?, index.iter().product())?;
        for (i, at) in box_starts(&sig.outputs[0].1, shape, &index).into_iter().enumerate() {
            out.put(at, all.data(), i);
        }
    }
    for p in sig.index_range().points().filter(|_| !block.vectorized) {
        let mut tiles = Vec::with_capacity(args.len());
        for ((_, f), a) in sig.inputs.iter().zip(args) {
            tiles.push(extract(a, &f.apply(&p).map_err(ipf_err)?)?);
        }
        let tile = run_body(&block.args, &block.body, tiles)?;
        let target = sig.outputs[0].1.apply(&p).map_err(ipf_err)?;
        for (j, cell) in target.points().enumerate() {
            let at: usize = cell.iter().zip(&out_strides).map(|(&c, &s)| c as usize * s).sum();
            out.put(at, tile.data(), j);
        }
    }
    out.finish(shape)
}

/// A user block's result being built: each cell written, or along reduced index dimensions combined with the
/// monoid, in `f64` for floats and wrapping `i64` for integers.
struct Output {
    monoid: Option<Monoid>,
    dtype: DType,
    floats: Vec<f64>,
    ints: Vec<i64>,
}

impl Output {
    fn new(monoid: Option<Monoid>, shape: &[u64], dtype: DType) -> Result<Output, EvalError> {
        let total = shape.iter().product::<u64>() as usize;
        // Without a reduction every cell is written once, so the start value is never read.
        let (floats, ints) = match dtype.is_float() {
            true => (filled(total, monoid.map_or(0.0, Monoid::identity_f64))?, Vec::new()),
            false => (Vec::new(), filled(total, monoid.map_or(0, |m| m.identity_int(dtype)))?),
        };
        Ok(Output { monoid, dtype, floats, ints })
    }

    /// Writes or combines cell `j` of `from` into result cell `at`.
    fn put(&mut self, at: usize, from: &Data, j: usize) {
        if self.dtype.is_float() {
            let v = from.get_f64(j);
            self.floats[at] = self.monoid.map_or(v, |m| m.combine_f64(self.floats[at], v));
        } else {
            let v = from.get_i64(j);
            self.ints[at] = self.monoid.map_or(v, |m| m.combine_int(self.ints[at], v));
        }
    }

    fn finish(self, shape: &[u64]) -> Result<Array, EvalError> {
        let data = match self.dtype.is_float() {
            true => Data::try_from_f64(self.dtype, self.floats.into_iter())?,
            false => Data::try_from_i64(self.dtype, &self.ints)?,
        };
        Ok(Array::new(shape.to_vec(), data).expect("shape and count agree"))
    }
}

/// For every point of an index space of extents `index` (in index order), the row-major offset in a tensor of
/// `shape` of the first cell of the box `f` selects: the IPF is affine, so the offsets step by fixed strides.
fn box_starts(f: &Ipf, shape: &[u64], index: &[u64]) -> Vec<usize> {
    let st = strides(shape);
    let map = f.map();
    let base: isize = (0..map.outputs()).map(|j| map.offset(j) as isize * st[j] as isize).sum();
    let steps = (0..map.inputs()).map(|i| (0..map.outputs()).map(|j| map.coef(j, i) as isize * st[j] as isize).sum());
    // Point 0 selects a box inside the tensor (signature correspondence), so `base` is a cell; an empty index
    // space reads nothing.
    let read = Read { offset: base.max(0) as usize, strides: steps.collect() };
    let mut out = Vec::with_capacity(index.iter().product::<u64>() as usize);
    for_each_offset(index, [&read], |[o]| out.push(o));
    out
}

/// About how many cells a block of signature `sig` touches: its input boxes and body ops once per index point.
fn block_work(ctx: &Context, op: OpId, sig: &Signature) -> u128 {
    let boxes = sig.inputs.iter().map(|(_, f)| cells(f.shape())).fold(0u128, u128::saturating_add);
    let body = ctx.body.region(ctx.body.regions(op)[0]).blocks[0];
    let inner = ctx.body.block_ops(body).map(|o| work(ctx, o)).fold(0u128, u128::saturating_add);
    sig.index_range().size().saturating_mul(boxes.saturating_add(inner))
}

/// About how many cells evaluating the body op `op` touches: its operands and result, times the contracted extent
/// of a contraction.
fn work(ctx: &Context, op: OpId) -> u128 {
    let shape = |v| as_tensor(ctx, ctx.body.value_type(v)).map_or(vec![], |t| t.shape());
    let operand = |i| ctx.body.operands(op).nth(i).map_or(vec![], shape);
    let result = ctx.body.results(op).map(|v| cells(&shape(v))).fold(0u128, u128::saturating_add);
    match decode(ctx, op) {
        Ok(OpKind::Contraction(Contraction::Matmul | Contraction::Linear)) => {
            result.saturating_mul(cells(&operand(0)[operand(0).len().saturating_sub(1)..]))
        }
        // At most every cell of x per result cell (the summed extent is a part of x).
        Ok(OpKind::Contraction(Contraction::Contract)) => result.saturating_mul(cells(&operand(0))),
        Ok(OpKind::Conv2d(_)) => result.saturating_mul(cells(operand(1).get(1..).unwrap_or(&[]))),
        _ => ctx.body.operands(op).map(|v| cells(&shape(v))).fold(result, u128::saturating_add),
    }
}

/// The number of cells of `shape`, saturating.
fn cells(shape: &[u64]) -> u128 {
    shape.iter().fold(1u128, |a, &e| a.saturating_mul(e as u128))
}

/// The cells of `a` inside `r` (which lies inside `a`'s range: signature correspondence), row-major.
fn extract(a: &Array, r: &ZRange) -> Result<Array, EvalError> {
    let s = strides(a.shape());
    let picks = r.points().map(|c| c.iter().zip(&s).map(|(&x, &st)| x as usize * st).sum());
    Ok(Array::new(r.shape(), a.data().try_gather(picks)?).expect("box count"))
}
