//! Type-rule helpers the families share: element types that must agree, broadcasting by dimension name,
//! dimensions looked up by name, extents that must stay below `i64::MAX`, values an element type must hold.

use crate::array::DType;
use crate::dialects::teg::tensor_type::TensorType;

/// The element type all `operands` share.
pub fn same_dtype(operands: &[&TensorType]) -> Result<DType, String> {
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

/// `a` and `b` must be one type (`what` names them in the error).
pub fn same(a: &TensorType, b: &TensorType, what: &str) -> Result<(), String> {
    match a == b {
        true => Ok(()),
        false => Err(format!("{what} differ: {a} and {b}")),
    }
}

/// `t` and the position of its dimension `dim`, which it must have.
pub fn dim_of<'t>(t: &'t TensorType, dim: &str) -> Result<(&'t TensorType, usize), String> {
    t.position(dim).map(|k| (t, k)).ok_or_else(|| format!("{t} has no dimension {dim}"))
}

/// `t` with dimension `k` of extent `extent` (`None` when computing it overflowed): at most `i64::MAX`, so that
/// every coordinate is an `i64`.
pub fn with_extent(t: &TensorType, k: usize, extent: Option<u64>) -> Result<TensorType, String> {
    match extent {
        Some(e) if e <= i64::MAX as u64 => {
            let mut out = t.clone();
            out.dims[k].1 = e;
            Ok(out)
        }
        _ => Err(format!("the result's dimension {} would have more than {} cells", t.dims[k].0, i64::MAX)),
    }
}

/// Each of `dims` is a dimension of `t`, none listed twice.
pub fn distinct_dims(t: &TensorType, dims: &[String]) -> Result<(), String> {
    for (i, d) in dims.iter().enumerate() {
        dim_of(t, d)?;
        if dims[..i].contains(d) {
            return Err(format!("dimension {d} is listed twice"));
        }
    }
    Ok(())
}

/// `value` must be a value of `dtype`: for an integer type, a whole number in its range.
pub fn holds_value(value: f64, dtype: DType, what: &str) -> Result<(), String> {
    match dtype.int_range() {
        Some((lo, hi)) if value.fract() != 0.0 || value < lo as f64 || value > hi as f64 => {
            Err(format!("{what} {value} is not a value of {dtype}"))
        }
        _ => Ok(()),
    }
}

/// An integer type must hold every coordinate below `extent`, so that an index or iota cell is exact.
pub fn holds_coordinates(t: &TensorType, extent: u64) -> Result<(), String> {
    match t.dtype.int_range() {
        Some((_, max)) if extent > 0 && extent - 1 > max as u64 => {
            Err(format!("{} holds coordinates up to {max}, but {t} has coordinates up to {}", t.dtype, extent - 1))
        }
        _ => Ok(()),
    }
}

/// No dimension name twice in a result.
pub fn unique_names(dims: &[(String, u64)]) -> Result<(), String> {
    for (i, d) in dims.iter().enumerate() {
        if dims[..i].iter().any(|e| e.0 == d.0) {
            return Err(format!("the result would have dimension {} twice", d.0));
        }
    }
    Ok(())
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

/// The ops of arithmetic take no `i1` elements.
pub fn not_i1(dtype: DType) -> Result<(), String> {
    match dtype {
        DType::I1 => Err("does not apply to i1 elements".into()),
        _ => Ok(()),
    }
}
