//! Types of TEG ops: the result type each op must have given its operands and attributes, with errors that give
//! the numbers that disagree. The verifier compares it with the declared result type.

use super::kind::{OpKind, PadMode, Unary};
use super::tensor_type::TensorType;
use crate::array::DType;

/// The result type `kind` gives for `operands` alone, for the ops whose result type follows from them (`None` for
/// those that take it from the written type: casts, broadcasts to a type, contractions, generators, sources and
/// user blocks).
pub fn inferred(kind: &OpKind, operands: &[&TensorType]) -> Option<Result<TensorType, String>> {
    let from_declared = matches!(
        kind,
        OpKind::Cast
            | OpKind::BroadcastTo
            | OpKind::Contract
            | OpKind::Zeros
            | OpKind::Ones
            | OpKind::Full(_)
            | OpKind::Iota { .. }
            | OpKind::Random { .. }
            | OpKind::Index
            | OpKind::Source { .. }
            | OpKind::Block { .. }
            | OpKind::Sink { .. }
            | OpKind::SequencePoint
            | OpKind::Yield
    );
    let unused = TensorType { dims: Vec::new(), dtype: DType::F32 };
    (!from_declared).then(|| result_type(kind, operands, &unused))
}

/// The result type `kind` gives for `operands`; `declared` is the written result type (generators, sources and
/// casts take their shape or element type from it, after checking it).
pub fn result_type(kind: &OpKind, operands: &[&TensorType], declared: &TensorType) -> Result<TensorType, String> {
    let x = || operands.first().copied().ok_or("needs an operand".to_string());
    Ok(match kind {
        OpKind::Unary(u) => {
            let t = x()?;
            let float_only = !matches!(u, Unary::Abs | Unary::Neg | Unary::Relu);
            if t.dtype == DType::I1 || (float_only && !t.dtype.is_float()) {
                return Err(format!("does not apply to {} elements", t.dtype));
            }
            t.clone()
        }
        OpKind::Clip { min, max } => {
            let t = x()?;
            if t.dtype == DType::I1 {
                return Err("does not apply to i1 elements".into());
            }
            clip_bounds(*min, *max, t.dtype)?;
            t.clone()
        }
        OpKind::Binary(_) => {
            let dtype = same_dtype(operands)?;
            if dtype == DType::I1 {
                return Err("does not apply to i1 elements".into());
            }
            TensorType { dims: broadcast(operands)?, dtype }
        }
        OpKind::Cast => TensorType { dtype: declared.dtype, ..x()?.clone() },
        OpKind::Compare(_) => {
            same_dtype(operands)?;
            TensorType { dims: broadcast(operands)?, dtype: DType::I1 }
        }
        OpKind::Where => {
            if operands[0].dtype != DType::I1 {
                return Err(format!("the condition must be i1, not {}", operands[0].dtype));
            }
            TensorType { dims: broadcast(operands)?, dtype: same_dtype(&operands[1..])? }
        }
        OpKind::Reduce { dims, monoid, default } => {
            let t = x()?;
            if let Some(mask) = operands.get(1) {
                masks(mask, t)?;
            }
            if operands.len() > 2 {
                return Err(format!("takes the tensor and at most a mask, not {} operands", operands.len()));
            }
            if let Some(d) = default {
                holds_value(*d, t.dtype, "default")?;
            }
            reduce(t, dims, *monoid)?
        }
        OpKind::Permute { dims } => permute(x()?, dims)?,
        OpKind::Reverse { dims } => {
            let t = x()?;
            distinct_dims(t, dims)?;
            t.clone()
        }
        OpKind::Slice { dim, start, stop, step } => {
            let (t, k) = dim_of(x()?, dim)?;
            let n = t.dims[k].1 as i64;
            with_extent(t, k, Some(slice_extent(*start, *stop, *step, n, dim)?))?
        }
        OpKind::Squeeze { dim } => {
            let (t, k) = dim_of(x()?, dim)?;
            if t.dims[k].1 != 1 {
                return Err(format!("dimension {dim} has extent {}, not 1", t.dims[k].1));
            }
            let mut out = t.clone();
            out.dims.remove(k);
            out
        }
        OpKind::Select { dim, index } => {
            let (t, k) = dim_of(x()?, dim)?;
            select_index(*index, t.dims[k].1, dim)?;
            let mut out = t.clone();
            out.dims.remove(k);
            out
        }
        OpKind::Unsqueeze { dim, index } => {
            let t = x()?;
            if t.position(dim).is_some() || *index < 0 || *index as usize > t.dims.len() {
                return Err(format!("cannot insert dimension {dim} at {index} into {t}"));
            }
            let mut out = t.clone();
            out.dims.insert(*index as usize, (dim.clone(), 1));
            out
        }
        OpKind::BroadcastTo => {
            if broadcast(&[x()?, declared]).ok().as_ref() != Some(&declared.dims) || x()?.dtype != declared.dtype {
                return Err(format!("{} does not broadcast to {declared}", x()?));
            }
            declared.clone()
        }
        OpKind::Broadcast { dim, extent } => {
            let (t, k) = dim_of(x()?, dim)?;
            if t.dims[k].1 != 1 || *extent < 0 {
                return Err(format!("only an extent-1 dimension broadcasts, {dim} has {}", t.dims[k].1));
            }
            with_extent(t, k, Some(*extent as u64))?
        }
        OpKind::Concat { dim } => concat(operands, dim)?,
        OpKind::Interleave { dim } => {
            for o in operands {
                same(operands[0], o, "interleaved operands")?;
            }
            let (t, k) = dim_of(x()?, dim)?;
            with_extent(t, k, t.dims[k].1.checked_mul(operands.len() as u64))?
        }
        OpKind::Repeat { dim, times } => {
            let (t, k) = dim_of(x()?, dim)?;
            if *times < 0 {
                return Err(format!("repeats {times} times"));
            }
            with_extent(t, k, t.dims[k].1.checked_mul(*times as u64))?
        }
        OpKind::Pad { dim, low, high, mode, .. } => pad(x()?, dim, *low, *high, *mode)?,
        OpKind::Zeros | OpKind::Ones | OpKind::Full(_) => declared.clone(),
        OpKind::Iota { dim } => {
            let (t, k) = dim_of(declared, dim)?;
            holds_coordinates(t, t.dims[k].1)?;
            t.clone()
        }
        OpKind::Random { .. } => {
            if !declared.dtype.is_float() {
                return Err(format!("random values are floats, not {}", declared.dtype));
            }
            declared.clone()
        }
        OpKind::Index => index(declared)?,
        OpKind::Matmul | OpKind::Linear | OpKind::Prod => contraction(kind, operands)?,
        OpKind::Contract => contract(operands[0], operands[1], declared)?,
        OpKind::Conv2d { strides, dilations, padding } => conv2d(operands, *strides, *dilations, *padding)?,
        // A user block's result type is checked against its signature (signature correspondence).
        OpKind::Source { .. } | OpKind::Block { .. } => declared.clone(),
        OpKind::Sink { .. } | OpKind::SequencePoint | OpKind::Yield => return Err("has no tensor result".into()),
    })
}

/// The element type all `operands` share.
fn same_dtype(operands: &[&TensorType]) -> Result<DType, String> {
    let dtype = operands[0].dtype;
    match operands.iter().find(|t| t.dtype != dtype) {
        Some(t) => Err(format!("the operands' element types differ: {dtype} and {}", t.dtype)),
        None => Ok(dtype),
    }
}

/// Broadcasting by dimension name, NumPy's rule with names for positions: the result has the dimensions of the
/// operand with the most (the first such), in its order; every operand's dimensions must appear among them in the
/// same order, each with the result's extent or with extent 1, which stretches.
pub fn broadcast(operands: &[&TensorType]) -> Result<Vec<(String, u64)>, String> {
    let widest = operands.iter().fold(operands[0], |w, t| if t.dims.len() > w.dims.len() { t } else { w });
    let mut dims = widest.dims.clone();
    for t in operands {
        let mut from = 0;
        for (name, extent) in &t.dims {
            let Some(k) = dims[from..].iter().position(|d| d.0 == *name).map(|k| k + from) else {
                return Err(format!(
                    "{t} does not broadcast against {widest}: its dimensions must appear among the other's, in the same order"
                ));
            };
            from = k + 1;
            let out = &mut dims[k].1;
            match (*out, *extent) {
                (o, e) if o == e || e == 1 => {}
                (1, e) => *out = e,
                (o, e) => {
                    return Err(format!("dimension {name} is {o} in one operand and {e} in another (only 1 stretches)"))
                }
            }
        }
    }
    Ok(dims)
}

fn same(a: &TensorType, b: &TensorType, what: &str) -> Result<(), String> {
    match a == b {
        true => Ok(()),
        false => Err(format!("{what} differ: {a} and {b}")),
    }
}

fn dim_of<'t>(t: &'t TensorType, dim: &str) -> Result<(&'t TensorType, usize), String> {
    t.position(dim).map(|k| (t, k)).ok_or_else(|| format!("{t} has no dimension {dim}"))
}

/// `t` with dimension `k` of extent `extent` (`None` when computing it overflowed): at most `i64::MAX`, so that
/// every coordinate is an `i64`.
fn with_extent(t: &TensorType, k: usize, extent: Option<u64>) -> Result<TensorType, String> {
    match extent {
        Some(e) if e <= i64::MAX as u64 => {
            let mut out = t.clone();
            out.dims[k].1 = e;
            Ok(out)
        }
        _ => Err(format!("the result's dimension {} would have more than {} cells", t.dims[k].0, i64::MAX)),
    }
}

fn distinct_dims(t: &TensorType, dims: &[String]) -> Result<(), String> {
    for (i, d) in dims.iter().enumerate() {
        dim_of(t, d)?;
        if dims[..i].contains(d) {
            return Err(format!("dimension {d} is listed twice"));
        }
    }
    Ok(())
}

fn reduce(t: &TensorType, dims: &[String], monoid: super::kind::Monoid) -> Result<TensorType, String> {
    distinct_dims(t, dims)?;
    if t.dtype == DType::I1 || (monoid == super::kind::Monoid::Mean && !t.dtype.is_float()) {
        return Err(format!("{} does not reduce {} elements", monoid.name(), t.dtype));
    }
    let kept = t.dims.iter().filter(|d| !dims.contains(&d.0)).cloned().collect();
    Ok(TensorType { dims: kept, dtype: t.dtype })
}

/// A reduction's mask: `i1`, broadcasting by name to the reduced tensor.
fn masks(mask: &TensorType, t: &TensorType) -> Result<(), String> {
    if mask.dtype != DType::I1 || broadcast(&[t, mask]).ok().as_ref() != Some(&t.dims) {
        return Err(format!("the mask must be i1 and broadcast to the reduced tensor {t}, not {mask}"));
    }
    Ok(())
}

/// `value` must be a value of `dtype`: for an integer type, a whole number in its range.
fn holds_value(value: f64, dtype: DType, what: &str) -> Result<(), String> {
    match dtype.int_range() {
        Some((lo, hi)) if value.fract() != 0.0 || value < lo as f64 || value > hi as f64 => {
            Err(format!("{what} {value} is not a value of {dtype}"))
        }
        _ => Ok(()),
    }
}

fn permute(t: &TensorType, dims: &[String]) -> Result<TensorType, String> {
    distinct_dims(t, dims)?;
    if dims.len() != t.dims.len() {
        return Err(format!("{} names for the {} dimensions of {t}", dims.len(), t.dims.len()));
    }
    let out = dims.iter().map(|d| t.dims[t.position(d).unwrap()].clone()).collect();
    Ok(TensorType { dims: out, dtype: t.dtype })
}

fn concat(operands: &[&TensorType], dim: &str) -> Result<TensorType, String> {
    let (first, k) = dim_of(operands[0], dim)?;
    let mut total = Some(0u64);
    for (i, o) in operands.iter().enumerate() {
        let rest = |t: &TensorType| -> Vec<(String, u64)> {
            t.dims.iter().enumerate().map(|(j, d)| if j == k { (d.0.clone(), 0) } else { d.clone() }).collect()
        };
        if o.dtype != first.dtype || o.dims.len() != first.dims.len() || rest(o) != rest(first) {
            return Err(format!("operand {i} ({o}) does not match {first} outside dimension {dim}"));
        }
        total = total.and_then(|t| t.checked_add(o.dims[k].1));
    }
    with_extent(first, k, total)
}

fn pad(t: &TensorType, dim: &str, low: i64, high: i64, mode: PadMode) -> Result<TensorType, String> {
    let (t, k) = dim_of(t, dim)?;
    let n = t.dims[k].1 as i64;
    if low < 0 || high < 0 {
        return Err(format!("padding {low} and {high} must not be negative"));
    }
    // Reflect and wrap pads of any width bounce or cycle through the cells (NumPy's `np.pad`), but need one.
    if mode != PadMode::Constant && n == 0 && low + high > 0 {
        let mode = format!("{mode:?}").to_lowercase();
        return Err(format!("a {mode} pad of dimension {dim} needs a cell to copy, and its extent is 0"));
    }
    with_extent(t, k, (n as u64).checked_add(low as u64).and_then(|e| e.checked_add(high as u64)))
}

fn index(t: &TensorType) -> Result<TensorType, String> {
    let rank = t.dims.len();
    match t.dims.last() {
        Some((_, n)) if *n == rank as u64 - 1 && t.dtype.is_int() => {
            holds_coordinates(t, t.dims[..rank - 1].iter().map(|d| d.1).max().unwrap_or(0))?;
            Ok(t.clone())
        }
        _ => Err(format!(
            "an index tensor has an integer type and a last dimension whose extent is the number of the others, not {t}"
        )),
    }
}

/// An integer type must hold every coordinate below `extent`, so that an index or iota cell is exact.
fn holds_coordinates(t: &TensorType, extent: u64) -> Result<(), String> {
    match t.dtype.int_range() {
        Some((_, max)) if extent > 0 && extent - 1 > max as u64 => {
            Err(format!("{} holds coordinates up to {max}, but {t} has coordinates up to {}", t.dtype, extent - 1))
        }
        _ => Ok(()),
    }
}

/// `matmul`, `linear` and `prod`: `x[..., k]` against `w[k, n]` (and `b[n]`).
fn contraction(kind: &OpKind, operands: &[&TensorType]) -> Result<TensorType, String> {
    let (x, w) = (operands[0], operands[1]);
    let (Some(k), 2) = (x.dims.last(), w.dims.len()) else {
        return Err(format!("needs x with at least one dimension and w with two, not {x} and {w}"));
    };
    if *k != w.dims[0] {
        return Err(format!("contracts {}={} of x with {}={} of w", k.0, k.1, w.dims[0].0, w.dims[0].1));
    }
    if x.dtype != w.dtype {
        return Err(format!("x is {} but w is {}", x.dtype, w.dtype));
    }
    if x.dtype == DType::I1 {
        return Err("does not apply to i1 elements".into());
    }
    let n = w.dims[1].clone();
    let mut dims = x.dims.clone();
    match kind {
        OpKind::Prod => dims.push(n),
        _ => *dims.last_mut().unwrap() = n,
    }
    if let OpKind::Linear = kind {
        let b = operands[2];
        if b.dims != [w.dims[1].clone()] || b.dtype != x.dtype {
            return Err(format!("the bias must be [{}={}] x {}, not {b}", w.dims[1].0, w.dims[1].1, x.dtype));
        }
    }
    unique_names(&dims)?;
    Ok(TensorType { dims, dtype: x.dtype })
}

/// `teg.contract`: every result dimension is a dimension of `x` or `w`; a dimension of both has one extent and is
/// summed unless the result has it; a dimension of one operand only must be in the result (reduce it first).
fn contract(x: &TensorType, w: &TensorType, declared: &TensorType) -> Result<TensorType, String> {
    if x.dtype != w.dtype || x.dtype == DType::I1 {
        return Err(format!("contracts x and w of one element type other than i1, not {} and {}", x.dtype, w.dtype));
    }
    for (name, extent) in &declared.dims {
        let from = x.position(name).map(|k| &x.dims[k]).or_else(|| w.position(name).map(|k| &w.dims[k]));
        match from {
            None => return Err(format!("result dimension {name} is in neither x nor w")),
            Some((_, e)) if e != extent => {
                return Err(format!("result dimension {name} is {extent}, the operands' {e}"))
            }
            Some(_) => {}
        }
    }
    for (name, extent) in &x.dims {
        match w.position(name).map(|k| w.dims[k].1) {
            Some(e) if e != *extent => return Err(format!("dimension {name} is {extent} in x but {e} in w")),
            None if declared.position(name).is_none() => {
                return Err(format!("dimension {name} of x is in neither w nor the result (reduce it first)"))
            }
            _ => {}
        }
    }
    if let Some((name, _)) = w.dims.iter().find(|d| x.position(&d.0).is_none() && declared.position(&d.0).is_none()) {
        return Err(format!("dimension {name} of w is in neither x nor the result (reduce it first)"));
    }
    Ok(TensorType { dims: declared.dims.clone(), dtype: x.dtype })
}

fn unique_names(dims: &[(String, u64)]) -> Result<(), String> {
    for (i, d) in dims.iter().enumerate() {
        if dims[..i].iter().any(|e| e.0 == d.0) {
            return Err(format!("the result would have dimension {} twice", d.0));
        }
    }
    Ok(())
}

/// The output extent of a convolution along one spatial dimension (`None` when the kernel is empty or does not
/// fit, or the padded input would not have `i64` coordinates).
pub fn conv_extent(input: u64, kernel: u64, stride: i64, dilation: i64, pad: i64) -> Option<u64> {
    let (input, kernel, stride, dilation, pad) =
        (input as i128, kernel as i128, stride as i128, dilation as i128, pad as i128);
    let span = (kernel - 1) * dilation + 1;
    let padded = input + 2 * pad;
    let room = padded - span;
    (kernel >= 1 && room >= 0 && stride >= 1 && padded <= i64::MAX as i128).then(|| (room / stride + 1) as u64)
}

fn conv2d(operands: &[&TensorType], s: [i64; 2], d: [i64; 2], p: [i64; 2]) -> Result<TensorType, String> {
    let (x, k) = (operands[0], operands[1]);
    if x.dims.len() != 4 || k.dims.len() != 4 {
        return Err(format!("needs x [n, c, h, w] and kernels [o, c, kh, kw], not {x} and {k}"));
    }
    if x.dims[1] != k.dims[1] || x.dtype != k.dtype {
        return Err(format!(
            "x has channels {}={} of {}, the kernels {}={} of {}",
            x.dims[1].0, x.dims[1].1, x.dtype, k.dims[1].0, k.dims[1].1, k.dtype
        ));
    }
    if x.dtype == DType::I1 {
        return Err("does not apply to i1 elements".into());
    }
    if s.iter().chain(&d).any(|&v| v < 1) || p.iter().any(|&v| v < 0) {
        return Err(format!("strides {s:?} and dilations {d:?} must be positive, padding {p:?} not negative"));
    }
    if let Some(empty) = k.dims[2..].iter().find(|d| d.1 == 0) {
        return Err(format!("a kernel window needs at least one cell, but {}={}", empty.0, empty.1));
    }
    let mut dims = vec![x.dims[0].clone(), k.dims[0].clone()];
    for i in 0..2 {
        let (h, kh) = (x.dims[2 + i].1, k.dims[2 + i].1);
        if h as i128 + 2 * p[i] as i128 > i64::MAX as i128 {
            return Err(format!("{} padded by {} on each side would have more than {} cells", h, p[i], i64::MAX));
        }
        let oh = conv_extent(h, kh, s[i], d[i], p[i])
            .ok_or_else(|| format!("a kernel of {kh} dilated by {} does not fit {h} padded by {}", d[i], p[i]))?;
        dims.push((x.dims[2 + i].0.clone(), oh));
    }
    unique_names(&dims)?;
    Ok(TensorType { dims, dtype: x.dtype })
}

/// The index `index` picks along a dimension of extent `n`: `0 <= index < n`, or `-n <= index < 0` counting from
/// the end (NumPy's rule).
pub fn select_index(index: i64, n: u64, dim: &str) -> Result<u64, String> {
    let at = if index < 0 { (n as i128) + index as i128 } else { index as i128 };
    if (0..n as i128).contains(&at) {
        Ok(at as u64)
    } else {
        Err(format!("index {index} is outside dimension {dim} of extent {n}"))
    }
}

/// How many cells `start`, `start + step`, ... before `stop` picks from a dimension of extent `n`, as NumPy's
/// `x[start:stop:step]` with explicit bounds: a positive step needs `0 <= start <= stop <= n`, a negative one
/// `-1 <= stop <= start <= n - 1` (`stop = -1` runs down to index 0).
fn slice_extent(start: i64, stop: i64, step: i64, n: i64, dim: &str) -> Result<u64, String> {
    let fits = match step {
        0 => return Err("slice step must not be 0".into()),
        1.. => 0 <= start && start <= stop && stop <= n,
        _ => -1 <= stop && stop <= start && start < n,
    };
    if !fits {
        return Err(format!("slice {start} to {stop} step {step} does not fit dimension {dim} of extent {n}"));
    }
    Ok(start.abs_diff(stop).div_ceil(step.unsigned_abs()))
}

/// Clip bounds must be numbers in order and, for an integer type, hold one of its values between them.
fn clip_bounds(min: f64, max: f64, dtype: DType) -> Result<(), String> {
    if min.is_nan() || max.is_nan() {
        return Err(format!("clip bounds must be numbers, not min {min} and max {max}"));
    }
    if min > max {
        return Err(format!("min {min} is above max {max}"));
    }
    if let Some((lo, hi)) = dtype.int_range() {
        let (low, high) = (min.ceil().max(lo as f64), max.floor().min(hi as f64));
        if low > high {
            return Err(format!("no {dtype} value lies between min {min} and max {max}"));
        }
    }
    Ok(())
}
