//! Block operator signatures: an index space (named dimensions with extents) and an IPF per input and output, so
//! that an operator can be sharded mechanically. The built-in operators derive theirs from their operand types;
//! the verifier checks every signature: the index space projected through each IPF must cover exactly the
//! tensor's range, and an output IPF must not send two index points to the same cell unless the index dimension
//! that separates them is a declared reduction.

use super::kind::{Monoid, OpKind};
use super::tensor_type::TensorType;
use crate::zspace::{Ipf, ZAffineMap, ZRange};

pub use crate::interfaces::sharding::Signature;

/// An IPF from rows `(index dim or none, coefficient, offset, extent)`, one per tensor dimension.
fn ipf(rank: usize, rows: &[(Option<usize>, i64, i64, u64)]) -> Ipf {
    let matrix = rows
        .iter()
        .map(|&(dim, coef, _, _)| (0..rank).map(|i| if Some(i) == dim { coef } else { 0 }).collect())
        .collect();
    let offset = rows.iter().map(|r| r.2).collect();
    let map = ZAffineMap::new(rank, matrix, offset).expect("rows of the index rank");
    Ipf::new(map, rows.iter().map(|r| r.3).collect()).expect("one extent per row")
}

/// The signature of a built-in block operator with these operand and result types (`None` for other ops).
pub fn builtin(kind: &OpKind, operands: &[&TensorType], result: &TensorType) -> Option<Signature> {
    match kind {
        OpKind::Matmul | OpKind::Linear | OpKind::Contract => Some(contraction(kind, operands, result)),
        OpKind::Prod => Some(prod(operands, result)),
        OpKind::Conv2d { strides, dilations, padding } => {
            Some(conv2d(operands, result, *strides, *dilations, *padding))
        }
        _ => None,
    }
}

/// A contraction by dimension names (`contract`, and `matmul` and `linear`, its cases): the index space is the
/// result's dimensions, then the summed ones (in both operands, not in the result) in `x`'s order; every tensor
/// reads its dimensions at their index positions, and the summed dimensions are `sum` reductions. For
/// `x[b.., k] · w[k, n]` that is index `(b.., n, k)`.
fn contraction(kind: &OpKind, operands: &[&TensorType], result: &TensorType) -> Signature {
    let (x, w) = (operands[0], operands[1]);
    let mut index = result.dims.clone();
    let summed = x.dims.iter().filter(|d| w.position(&d.0).is_some() && result.position(&d.0).is_none());
    index.extend(summed.cloned());
    let rank = index.len();
    let at = |t: &TensorType| -> Ipf {
        let rows: Vec<_> = t.dims.iter().map(|d| (index.iter().position(|i| i.0 == d.0), 1, 0, 1)).collect();
        ipf(rank, &rows)
    };
    let mut inputs = vec![("x".to_string(), at(x)), ("w".to_string(), at(w))];
    if let OpKind::Linear = kind {
        inputs.push(("b".to_string(), at(operands[2])));
    }
    let reductions = (result.dims.len()..rank).map(|i| (i, Monoid::Sum)).collect();
    let outputs = vec![("y".into(), at(result))];
    Signature { index, inputs, outputs, reductions }
}

/// `p[b.., in, out] = x[b.., in] · w[in, out]`: every index dimension parallel.
fn prod(operands: &[&TensorType], result: &TensorType) -> Signature {
    let x = operands[0];
    let index = result.dims.clone();
    let rank = index.len();
    let unit = |d: usize| (Some(d), 1, 0, 1);
    let x_rows: Vec<_> = (0..x.dims.len()).map(unit).collect();
    let w_rows = [unit(rank - 2), unit(rank - 1)];
    let p_rows: Vec<_> = (0..rank).map(unit).collect();
    Signature {
        index,
        inputs: vec![("x".into(), ipf(rank, &x_rows)), ("w".into(), ipf(rank, &w_rows))],
        outputs: vec![("p".into(), ipf(rank, &p_rows))],
        reductions: Vec::new(),
    }
}

/// Index `(n, o, oh, ow, c)`, `c` a sum: x is read through windows of the padded input, one channel per point,
/// the kernels one channel of one output channel per point. With `c` in the index space a convolution shards over
/// input channels (partial sums) as matmul does over `k`.
fn conv2d(operands: &[&TensorType], result: &TensorType, s: [i64; 2], d: [i64; 2], p: [i64; 2]) -> Signature {
    let (x, k) = (operands[0], operands[1]);
    let mut index = result.dims.clone();
    index.push(x.dims[1].clone());
    let c = 4;
    let window = |i: usize| ((k.dims[2 + i].1 as i64 - 1) * d[i] + 1) as u64;
    let x_rows =
        [(Some(0), 1, 0, 1), (Some(c), 1, 0, 1), (Some(2), s[0], -p[0], window(0)), (Some(3), s[1], -p[1], window(1))];
    let k_rows = [(Some(1), 1, 0, 1), (Some(c), 1, 0, 1), (None, 0, 0, k.dims[2].1), (None, 0, 0, k.dims[3].1)];
    let y_rows: Vec<_> = (0..4).map(|i| (Some(i), 1, 0, 1)).collect();
    Signature {
        index,
        inputs: vec![("x".into(), ipf(5, &x_rows)), ("k".into(), ipf(5, &k_rows))],
        outputs: vec![("y".into(), ipf(5, &y_rows))],
        reductions: vec![(c, Monoid::Sum)],
    }
}

/// Checks signature correspondence and that each output is written exactly once. `inputs` and `outputs` are the
/// ranges each IPF must cover exactly (empty ranges are all equal); an input given as `(range, true)` may be
/// covered partly (a strided window that leaves the last cells of a padded input unread). Outputs are checked
/// harder than inputs: every output cell must be written by exactly one index point (reduction dimensions aside),
/// since a cell never written has no value, while an input cell never read is harmless.
pub fn check(sig: &Signature, inputs: &[(ZRange, bool)], outputs: &[ZRange]) -> Result<(), String> {
    let index = sig.index_range();
    let written = written_points(sig)?;
    for ((name, f), (range, partial)) in sig.inputs.iter().zip(inputs) {
        // An input that no reduction moves (a bias) is read once per written cell, even by an empty reduction.
        let still = sig.reductions.iter().all(|(i, _)| (0..f.map().outputs()).all(|j| f.map().coef(j, *i) == 0));
        let reading = if still { &written } else { &index };
        if reading.is_empty() {
            continue; // Nothing is read (a batch of 0): any tensor of the right rank will do.
        }
        let got = f.project(reading).map_err(|e| format!("{name}: {e}"))?;
        let ok = if *partial { range.contains_range(&got) && got.start() == range.start() } else { same(&got, range) };
        if !ok {
            return Err(mismatch(&index, name, &got, range));
        }
    }
    for ((name, f), range) in sig.outputs.iter().zip(outputs) {
        reductions_stay(sig, name, f)?;
        if written.is_empty() {
            // A rank-0 output is one cell, but an empty index space writes none.
            if !range.is_empty() {
                return Err(format!("{name}: the index space {index} is empty, so none of its cells is written"));
            }
            continue;
        }
        let got = f.project(&written).map_err(|e| format!("{name}: {e}"))?;
        if !same(&got, range) {
            return Err(mismatch(&index, name, &got, range));
        }
        exactly_once(sig, name, f, &written)?;
    }
    Ok(())
}

/// Equal as sets of points of one rank: the same range, or both empty.
fn same(a: &ZRange, b: &ZRange) -> bool {
    a == b || (a.rank() == b.rank() && a.is_empty() && b.is_empty())
}

fn mismatch(index: &ZRange, name: &str, got: &ZRange, range: &ZRange) -> String {
    format!("signature correspondence: the index space {index} projects {name} to {got}, but {name} is {range}")
}

/// The index points that write outputs: the index space with each reduction dimension held at its start (a
/// reduction over an empty range still writes its monoid's identity).
fn written_points(sig: &Signature) -> Result<ZRange, String> {
    let index = sig.index_range();
    let mut end = index.end().to_vec();
    for (i, _) in &sig.reductions {
        end[*i] = index.start()[*i] + 1;
    }
    ZRange::new(index.start().to_vec(), end).map_err(|e| e.0)
}

/// A reduction dimension combines the values of its points into one cell, so it must not move an output's box.
fn reductions_stay(sig: &Signature, name: &str, f: &Ipf) -> Result<(), String> {
    for (i, monoid) in &sig.reductions {
        if let Some(j) = (0..f.map().outputs()).find(|&j| f.map().coef(j, *i) != 0) {
            return Err(format!(
                "index dimension {} is a declared {} reduction, but it moves {name} (coefficient {} in row {j})",
                sig.index[*i].0,
                monoid.name(),
                f.map().coef(j, *i)
            ));
        }
    }
    Ok(())
}

/// Whether the boxes of output `f` over `points` are pairwise disjoint and fill their bounding box. Decided
/// structurally when each moving index dimension moves its own tensor dimension (then it must step by exactly its
/// box extent: less overlaps, more leaves gaps), else point by point.
fn exactly_once(sig: &Signature, name: &str, f: &Ipf, points: &ZRange) -> Result<(), String> {
    let mut moves = Vec::new();
    let mut rows_used = vec![false; f.map().outputs()];
    for (i, (dim, _)) in sig.index.iter().enumerate() {
        if points.shape()[i] <= 1 {
            continue;
        }
        let rows: Vec<usize> = (0..f.map().outputs()).filter(|&j| f.map().coef(j, i) != 0).collect();
        match rows.as_slice() {
            [] => {
                return Err(format!(
                    "{name} is written by every point along index dimension {dim} (extent {}), which is not a declared reduction",
                    points.shape()[i]
                ))
            }
            [j] if !std::mem::replace(&mut rows_used[*j], true) => moves.push((dim, *j, f.map().coef(*j, i))),
            _ => return exactly_once_by_points(name, f, points, dim),
        }
    }
    for (dim, j, coef) in moves {
        let (step, width) = (coef.unsigned_abs(), f.shape()[j]);
        if step != width {
            let what =
                if step < width { "overlap: cells are written twice" } else { "leave gaps: cells are never written" };
            return Err(format!(
                "{name}: index dimension {dim} moves the box by {step} along dimension {j}, but the box there is {width} wide, so the boxes {what}"
            ));
        }
    }
    Ok(())
}

/// Index points whose output boxes are checked one by one.
const POINT_LIMIT: u128 = 1 << 20;

/// The exact decision by marking every output cell each index point writes.
fn exactly_once_by_points(name: &str, f: &Ipf, points: &ZRange, dim: &str) -> Result<(), String> {
    let bbox = f.project(points).map_err(|e| e.0)?;
    if points.size() > POINT_LIMIT || bbox.size() > POINT_LIMIT * 16 {
        return Err(format!(
            "{name}: index dimension {dim} moves its box together with another dimension, and the op ({} index points, {} cells) is too large to check point by point",
            points.size(),
            bbox.size()
        ));
    }
    let shape = bbox.shape();
    let offset = |cell: &[i64]| {
        cell.iter().zip(bbox.start()).zip(&shape).fold(0u64, |acc, ((&c, &s), &n)| acc * n + (c - s) as u64) as usize
    };
    let mut written = vec![false; bbox.size() as usize];
    for p in points.points() {
        for cell in f.apply(&p).map_err(|e| e.0)?.points() {
            if std::mem::replace(&mut written[offset(&cell)], true) {
                return Err(format!(
                    "{name}: index point {p:?} writes cell {cell:?}, which another index point writes too"
                ));
            }
        }
    }
    let unwritten = bbox.points().find(|cell| !written[offset(cell)]);
    match unwritten {
        Some(cell) => Err(format!("{name}: no index point writes cell {cell:?}")),
        None => Ok(()),
    }
}

/// The signature of a verified TEG block operator: built in, or declared by a `teg.block`.
pub fn signature_of(ctx: &crate::ir::Context, op: crate::ir::OpId) -> Option<Signature> {
    use super::tensor_type::as_tensor;
    if !ctx.op_name(op).starts_with("teg.") {
        return None;
    }
    let kind = super::kind::decode(ctx, op).ok()?;
    if let OpKind::Block { .. } = kind {
        return super::block_op::declared_signature(ctx, op).ok();
    }
    let types: Vec<_> = ctx.body.operands(op).map(|v| as_tensor(ctx, ctx.body.value_type(v))).collect::<Option<_>>()?;
    let result = as_tensor(ctx, ctx.body.value_type(ctx.body.results(op).next()?))?;
    builtin(&kind, &types, result)
}
