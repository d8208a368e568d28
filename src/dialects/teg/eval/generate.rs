//! Generators: tensors computed from their coordinates alone (so any shard can make its part anywhere).

use super::EvalError;
use crate::array::alloc::collect;
use crate::array::{strides, Array, DType, Data};

/// The tensor whose cell `i` (in row-major order) is `f(i)`, in a fallibly allocated buffer.
fn from_fn(dtype: DType, shape: &[u64], f: impl Fn(usize) -> f64) -> Result<Array, EvalError> {
    Ok(Array::try_from_fn(dtype, shape.to_vec(), f)?)
}

/// Every cell `value`.
pub fn full(dtype: DType, shape: &[u64], value: f64) -> Result<Array, EvalError> {
    from_fn(dtype, shape, |_| value)
}

/// Each cell's coordinate along dimension `k`.
pub fn iota(dtype: DType, shape: &[u64], k: usize) -> Result<Array, EvalError> {
    let (stride, n) = (strides(shape)[k], shape[k] as usize);
    from_fn(dtype, shape, |i| ((i / stride) % n) as f64)
}

/// The index tensor of the leading dimensions: cell `(c0, ..., c_{r-1}, a)` holds `c_a`.
pub fn index(dtype: DType, shape: &[u64]) -> Result<Array, EvalError> {
    let lead = &shape[..shape.len() - 1];
    let s = strides(lead);
    let r = lead.len();
    let total = shape.iter().product::<u64>() as usize;
    let values: Vec<i64> = collect((0..total).map(|i| {
        let (cell, a) = (i / r, i % r);
        ((cell / s[a]) as u64 % lead[a]) as i64
    }))?;
    Ok(Array::new(shape.to_vec(), Data::try_from_i64(dtype, &values)?).expect("shape and count agree"))
}

/// SplitMix64's finalizer: a well-mixed 64-bit function of a 64-bit input.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The random bits of the cell at `coords`: the seed and each coordinate mixed in turn (independent of the
/// tensor's shape, so a shard reproduces its part of a larger tensor).
pub fn cell_bits(seed: i64, coords: &[u64]) -> u64 {
    coords.iter().fold(mix(seed as u64), |h, &c| mix(h ^ c))
}

/// Uniform values in `[0, 1)`: the top bits of each cell's random bits, as many as the type's precision holds.
pub fn random(dtype: DType, shape: &[u64], seed: i64) -> Result<Array, EvalError> {
    let s = strides(shape);
    let bits = |i: usize| {
        let coords: Vec<u64> = s.iter().zip(shape).map(|(&st, &n)| ((i / st) as u64) % n).collect();
        cell_bits(seed, &coords)
    };
    let precision = match dtype {
        DType::F64 => 53,
        DType::F32 => 24,
        DType::F16 => 11,
        _ => 8,
    };
    from_fn(dtype, shape, |i| (bits(i) >> (64 - precision)) as f64 / (1u64 << precision) as f64)
}
