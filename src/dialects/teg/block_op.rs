//! `teg.block`: a user-declared block operator. Its signature is written in the IR (index dimensions with
//! extents, an `affine_map` per input and output from index points to box starts, a box shape each, the reduced
//! index dimensions and their monoid) and its value is computed by its body, a region of other TEG ops that maps
//! the input boxes of one index point to the output box (`teg.yield`), so the evaluator can run it.

use super::signature::Signature;
use super::tensor_type::{as_tensor, TensorType};
use crate::array::fits;
use crate::interfaces::sharding::Monoid;
use crate::ir::{AffineExpr, AffineMap, AffineOp, Attr, Context, OpId, ValueDef};
use crate::zspace::{Ipf, ZAffineMap};

/// The linear form `(coefficients, constant)` of an affine expression over `dims` dimensions, if it is one
/// (IPFs are affine: no `floordiv`, `ceildiv`, `mod`, symbols or products of dimensions).
fn linear(e: &AffineExpr, dims: usize) -> Option<(Vec<i64>, i64)> {
    match e {
        AffineExpr::Dim(i) => {
            let mut c = vec![0; dims];
            *c.get_mut(*i as usize)? = 1;
            Some((c, 0))
        }
        AffineExpr::Const(k) => Some((vec![0; dims], *k)),
        AffineExpr::Symbol(_) => None,
        AffineExpr::Binary(AffineOp::Add, a, b) => {
            let ((ca, ka), (cb, kb)) = (linear(a, dims)?, linear(b, dims)?);
            Some((ca.iter().zip(&cb).map(|(x, y)| x.checked_add(*y)).collect::<Option<_>>()?, ka.checked_add(kb)?))
        }
        AffineExpr::Binary(AffineOp::Mul, a, b) => {
            let (term, k) = match (&**a, &**b) {
                (x, AffineExpr::Const(k)) | (AffineExpr::Const(k), x) => (x, *k),
                _ => return None,
            };
            let (c, k0) = linear(term, dims)?;
            Some((c.iter().map(|x| x.checked_mul(k)).collect::<Option<_>>()?, k0.checked_mul(k)?))
        }
        AffineExpr::Binary(..) => None,
    }
}

/// The IPF of `map` with boxes of `shape`, for an index space of `rank` dimensions.
pub fn ipf_of(map: &AffineMap, shape: Vec<u64>, rank: usize) -> Result<Ipf, String> {
    if map.num_dims as usize != rank || map.num_symbols != 0 {
        return Err(format!("the map ({map}) must take the {rank} index dimensions and no symbols"));
    }
    let mut matrix = Vec::new();
    let mut offset = Vec::new();
    for e in &map.results {
        let (c, k) = linear(e, rank).ok_or_else(|| format!("{e} is not an affine function of the index (in {map})"))?;
        matrix.push(c);
        offset.push(k);
    }
    let map = ZAffineMap::new(rank, matrix, offset).map_err(|e| e.0)?;
    Ipf::new(map, shape).map_err(|e| e.0)
}

/// The signature a `teg.block` op declares, checked for shape (not yet against its tensors).
pub fn declared_signature(ctx: &Context, op: OpId) -> Result<Signature, String> {
    let get =
        |name: &str| ctx.op_attr(op, name).map(|a| ctx.attr_data(a)).ok_or_else(|| format!("needs attribute '{name}'"));
    let list = |name: &str| match get(name)? {
        Attr::Array(items) => Ok(items.to_vec()),
        _ => Err(format!("attribute '{name}' must be a list")),
    };
    let names: Vec<String> = list("index")?
        .iter()
        .map(|&a| ctx.attr_data(a).as_str().map(str::to_string))
        .collect::<Option<_>>()
        .ok_or("attribute 'index' must list dimension names")?;
    let extents = ints(ctx, &list("extents")?).ok_or("attribute 'extents' must list integers in [0, 2^63)")?;
    if names.len() != extents.len() {
        return Err(format!("{} index dimensions but {} extents", names.len(), extents.len()));
    }
    for (i, n) in names.iter().enumerate() {
        if names[..i].contains(n) {
            return Err(format!("index dimension {n} is declared twice"));
        }
    }
    let maps = list("maps")?;
    let boxes = list("boxes")?;
    let arity = ctx.body.operands(op).count() + 1;
    if maps.len() != arity || boxes.len() != arity {
        return Err(format!(
            "needs {arity} maps and boxes (one per input and the output), has {} and {}",
            maps.len(),
            boxes.len()
        ));
    }
    let mut ipfs = Vec::new();
    for (k, (&m, &b)) in maps.iter().zip(&boxes).enumerate() {
        let Attr::AffineMap(map) = ctx.attr_data(m) else { return Err(format!("map {k} must be an affine_map")) };
        let shape = match ctx.attr_data(b) {
            Attr::Array(items) => ints(ctx, items),
            _ => None,
        }
        .ok_or(format!("box {k} must list extents in [0, 2^63)"))?;
        ipfs.push(ipf_of(map, shape, names.len()).map_err(|e| format!("map {k}: {e}"))?);
    }
    let output = ipfs.pop().expect("one per operand and the output");
    let reductions = reductions(ctx, op, &names)?;
    let index = names.into_iter().zip(extents).collect();
    let inputs = ipfs.into_iter().enumerate().map(|(k, f)| (format!("input {k}"), f)).collect();
    Ok(Signature { index, inputs, outputs: vec![("the output".into(), output)], reductions })
}

/// Extents and box sizes: integers in `[0, 2^63)`, so that every coordinate is an `i64`.
fn ints(ctx: &Context, items: &[crate::ir::AttrId]) -> Option<Vec<u64>> {
    let extent = |v: i128| (0..=i64::MAX as i128).contains(&v).then_some(v as u64);
    items.iter().map(|&a| ctx.attr_data(a).as_int().and_then(extent)).collect()
}

/// The reduced index dimensions (`reduce`) with the op's monoid (`monoid`): both or neither.
fn reductions(ctx: &Context, op: OpId, names: &[String]) -> Result<Vec<(usize, Monoid)>, String> {
    let monoid = ctx.op_attr(op, "monoid").map(|a| ctx.attr_data(a));
    let (reduce, monoid) = match (ctx.op_attr(op, "reduce"), monoid) {
        (None, None) => return Ok(Vec::new()),
        (Some(reduce), Some(Attr::String(m))) => match Monoid::from_name(m) {
            Some(Monoid::Mean) | None => return Err(format!("unknown block monoid '{m}' (sum, prod, max, min)")),
            Some(m) => (reduce, m),
        },
        (Some(_), Some(_)) => return Err("attribute 'monoid' must be a string (sum, prod, max, min)".into()),
        (Some(_), None) => return Err("reduced dimensions need a monoid: reduce [...] by \"sum\"".into()),
        (None, Some(_)) => return Err("a monoid needs reduced dimensions: reduce [...] by \"sum\"".into()),
    };
    let Attr::Array(items) = ctx.attr_data(reduce) else { return Err("attribute 'reduce' must be a list".into()) };
    items
        .iter()
        .map(|&a| {
            let name = ctx.attr_data(a).as_str().ok_or("attribute 'reduce' must list index dimension names")?;
            let i = names
                .iter()
                .position(|n| n == name)
                .ok_or(format!("reduced dimension {name} is not an index dimension"))?;
            Ok((i, monoid))
        })
        .collect()
}

/// Each IPF must select boxes of its tensor's rank (`operands`, then the result), each a valid tensor type for
/// the body (see [`fits`]). Whether a box fits its tensor is signature correspondence (a box of an input no index
/// point reads may be larger than the tensor).
pub fn check_boxes(sig: &Signature, tensors: &[&TensorType]) -> Result<(), String> {
    for ((name, f), t) in sig.inputs.iter().chain(&sig.outputs).zip(tensors) {
        if f.shape().len() != t.dims.len() {
            return Err(format!("{name} has rank {}, but its map gives {} coordinates", t.dims.len(), f.shape().len()));
        }
        if !fits(f.shape(), t.dtype.size()) {
            return Err(format!("{name}'s box {:?} takes more than 2^63-1 bytes", f.shape()));
        }
    }
    Ok(())
}

/// The type of the box a tensor of type `t` gives through an IPF of box `shape`: same names and element type.
pub fn box_type(t: &TensorType, shape: &[u64]) -> TensorType {
    TensorType { dims: t.dims.iter().zip(shape).map(|((n, _), &e)| (n.clone(), e)).collect(), dtype: t.dtype }
}

/// Checks the body against the signature: one entry argument per input of its box type, and a `teg.yield` of the
/// output's box type.
pub fn check_body(
    ctx: &Context,
    op: OpId,
    sig: &Signature,
    inputs: &[&TensorType],
    output: &TensorType,
) -> Result<(), String> {
    let region = ctx.body.regions(op)[0];
    let Some(&entry) = ctx.body.region(region).blocks.first() else { return Err("needs a body".into()) };
    let args = &ctx.body.block(entry).args;
    if args.len() != inputs.len() {
        return Err(format!("the body takes {} arguments for {} inputs", args.len(), inputs.len()));
    }
    for (k, ((&arg, t), (_, f))) in args.iter().zip(inputs).zip(&sig.inputs).enumerate() {
        let want = box_type(t, f.shape());
        if as_tensor(ctx, ctx.body.value_type(arg)) != Some(&want) {
            return Err(format!("body argument {k} must be the box !teg.tensor<{want}> of input {k}"));
        }
    }
    for inner in ctx.body.block_ops(entry) {
        for (i, v) in ctx.body.operands(inner).enumerate() {
            let local = match ctx.body.value_def(v) {
                ValueDef::BlockArg { block, .. } => block == entry,
                ValueDef::Result { op: def, .. } => ctx.body.op_parent(def) == Some(entry),
                ValueDef::Placeholder => false,
            };
            if !local {
                return Err(format!(
                    "the body's {} uses operand #{i} from outside the body: a block operator sees only its input boxes",
                    ctx.op_name(inner)
                ));
            }
        }
    }
    let last = ctx.body.last_op(entry).ok_or("the body must end with teg.yield")?;
    if ctx.op_name(last) != "teg.yield" {
        return Err("the body must end with teg.yield".into());
    }
    let want = box_type(output, sig.outputs[0].1.shape());
    let yielded: Vec<_> = ctx.body.operands(last).map(|v| as_tensor(ctx, ctx.body.value_type(v))).collect();
    if yielded != [Some(&want)] {
        let got: Vec<String> =
            ctx.body.operands(last).map(|v| crate::ir::print::type_to_string(ctx, ctx.body.value_type(v))).collect();
        return Err(format!("the body must yield the output box !teg.tensor<{want}>, not ({})", got.join(", ")));
    }
    Ok(())
}
