//! Built-in block operators: `contract`, `matmul`, `linear`, `prod` and `conv2d`. Contractions run on a real GEMM
//! (the `gemm` crate, threaded, with AVX-512 kernels where the CPU has them) for `f32` and `f64` (`f16` and `bf16`
//! through `f32`); integers contract in wrapping `i64`.

use super::{fail, EvalError, Operands};
use crate::array::{Array, DType, Data};
use crate::dialects::teg::kind::OpKind;
use std::borrow::Cow;

/// Evaluates a built-in block operator whose result has `shape` (dimension `names`).
pub fn apply(kind: &OpKind, ops: &Operands, shape: &[u64], names: &[String]) -> Result<Array, EvalError> {
    let (x, w) = (ops.array(0), ops.array(1));
    let dtype = x.dtype();
    if shape.contains(&0) {
        // Nothing to compute (and the loops over the other extents could be long).
        return Ok(super::generate::full(dtype, shape, 0.0));
    }
    let data = match kind {
        OpKind::Contract | OpKind::Matmul | OpKind::Linear => {
            return Ok(super::contract::apply(ops, ops.arrays.get(2).copied(), shape, names))
        }
        OpKind::Prod => {
            let k = *x.shape().last().unwrap_or(&1) as usize;
            let n = w.shape()[1] as usize;
            let m = x.shape()[..x.shape().len() - 1].iter().product::<u64>() as usize;
            prod(x.data(), w.data(), m, k, n)
        }
        OpKind::Conv2d { strides, dilations, padding } => conv2d(x, w, shape, *strides, *dilations, *padding)?,
        other => return fail(format!("{other:?} is not a built-in block operator")),
    };
    Ok(Array::new(shape.to_vec(), data).expect("shape and count agree"))
}

/// `[nb, m, k] · [nb, k, n]`, one GEMM per batch (+ `bias[n]` on every row), row-major.
pub fn contract(dtype: DType, a: &Data, b: &Data, bias: Option<&Data>, [nb, m, k, n]: [usize; 4]) -> Data {
    match dtype {
        DType::F64 => {
            let (a, b) = (as_f64(a), as_f64(b));
            let mut c = bias.map_or_else(|| vec![0.0; nb * m * n], |bias| rows(&as_f64(bias), nb * m));
            batched(&a, &b, &mut c, [m, k, n], |a, b, c| f64::gemm(m, k, n, a, b, c, bias.is_some()));
            Data::F64(c)
        }
        t if t.is_float() => {
            let (a, b) = (as_f32(a), as_f32(b));
            let mut c = bias.map_or_else(|| vec![0.0; nb * m * n], |bias| rows(&as_f32(bias), nb * m));
            batched(&a, &b, &mut c, [m, k, n], |a, b, c| f32::gemm(m, k, n, a, b, c, bias.is_some()));
            from_f32(t, c)
        }
        t => {
            let mut c = bias.map_or_else(|| vec![0i64; nb * m * n], |bias| rows(&as_i64(bias), nb * m));
            let (a, b) = (as_i64(a), as_i64(b));
            batched(&a, &b, &mut c, [m, k, n], |a, b, c| {
                for i in 0..m {
                    for p in 0..k {
                        let x = a[i * k + p];
                        for j in 0..n {
                            c[i * n + j] = c[i * n + j].wrapping_add(x.wrapping_mul(b[p * n + j]));
                        }
                    }
                }
            });
            Data::from_i64(t, &c)
        }
    }
}

/// `gemm` on each batch's matrices: `a` holds `[m, k]` ones, `b` `[k, n]` ones, `c` `[m, n]` ones.
fn batched<T>(a: &[T], b: &[T], c: &mut [T], [m, k, n]: [usize; 3], gemm: impl Fn(&[T], &[T], &mut [T])) {
    if m * n == 0 {
        return;
    }
    for (i, c) in c.chunks_mut(m * n).enumerate() {
        gemm(&a[i * m * k..(i + 1) * m * k], &b[i * k * n..(i + 1) * k * n], c);
    }
}

/// `p[i, q, j] = a[i, q] · b[q, j]`, in the element type.
fn prod(a: &Data, b: &Data, m: usize, k: usize, n: usize) -> Data {
    let picks_a: Vec<usize> = (0..m * k * n).map(|e| e / n).collect();
    let picks_b: Vec<usize> = (0..m * k * n).map(|e| e % (k * n)).collect();
    let (x, y) = (a.gather(&picks_a), b.gather(&picks_b));
    let shape = vec![(m * k * n) as u64];
    let (x, y) = (Array::new(shape.clone(), x).expect("count"), Array::new(shape, y).expect("count"));
    let at = super::cell::Broadcast { shape: x.shape(), strides: vec![vec![1]; 2] };
    super::cell::binary(crate::dialects::teg::kind::Binary::Mul, &x, &y, &at).expect("same types").data().clone()
}

/// The row `bias` repeated `m` times.
fn rows<T: Copy>(bias: &[T], m: usize) -> Vec<T> {
    bias.iter().copied().cycle().take(bias.len() * m).collect()
}

/// The cells as `f32`, borrowed when they already are.
fn as_f32(d: &Data) -> Cow<'_, [f32]> {
    match d {
        Data::F32(v) => Cow::Borrowed(v),
        other => Cow::Owned((0..other.len()).map(|i| other.get_f64(i) as f32).collect()),
    }
}

fn as_f64(d: &Data) -> Vec<f64> {
    (0..d.len()).map(|i| d.get_f64(i)).collect()
}

fn as_i64(d: &Data) -> Vec<i64> {
    (0..d.len()).map(|i| d.get_i64(i)).collect()
}

fn from_f32(dtype: DType, v: Vec<f32>) -> Data {
    match dtype {
        DType::F32 => Data::F32(v),
        DType::BF16 => Data::BF16(v.into_iter().map(half::bf16::from_f32).collect()),
        DType::F16 => Data::F16(v.into_iter().map(half::f16::from_f32).collect()),
        other => Data::from_f64(other, v.into_iter().map(|x| x as f64)),
    }
}

/// Element types with a GEMM.
pub trait Gemm: Copy {
    /// `c = a[m, k] · b[k, n]` (`c +=` when `accumulate`), row-major; the slices hold `m·k`, `k·n` and `m·n`
    /// elements. Without `accumulate`, `c` is only written: its fresh pages are never read first (reading them
    /// would map the shared zero page, and the GEMM threads' first writes would then each flush every core's TLB).
    fn gemm(m: usize, k: usize, n: usize, a: &[Self], b: &[Self], c: &mut [Self], accumulate: bool);
}

/// `Gemm` on the `gemm` crate, on all of rayon's threads (it runs small products on one).
macro_rules! gemm_impl {
    ($t:ty) => {
        impl Gemm for $t {
            fn gemm(m: usize, k: usize, n: usize, a: &[$t], b: &[$t], c: &mut [$t], accumulate: bool) {
                assert!(a.len() >= m * k && b.len() >= k * n && c.len() >= m * n, "GEMM operands too short");
                if m == 0 || n == 0 {
                    return;
                }
                let (rk, rn) = (k as isize, n as isize);
                let threads = gemm::Parallelism::Rayon(0);
                // SAFETY: the lengths are checked above; the strides are those of row-major matrices, and `c`
                // does not overlap `a` or `b` (it is borrowed mutably).
                unsafe {
                    gemm::gemm(
                        m,
                        n,
                        k,
                        c.as_mut_ptr(),
                        1,
                        rn,
                        accumulate,
                        a.as_ptr(),
                        1,
                        rk,
                        b.as_ptr(),
                        1,
                        rn,
                        1.0,
                        1.0,
                        false,
                        false,
                        false,
                        threads,
                    )
                }
            }
        }
    };
}
gemm_impl!(f32);
gemm_impl!(f64);

/// The most cells the im2col matrix of one convolution may have (the windows of the input, one row per output
/// position): it is the evaluator's largest temporary.
pub const MAX_IM2COL: u64 = 1 << 28;

/// Convolution through im2col: the windows of the padded input as rows, times the kernels as columns.
fn conv2d(x: &Array, k: &Array, shape: &[u64], s: [i64; 2], d: [i64; 2], p: [i64; 2]) -> Result<Data, EvalError> {
    let [nb, c, h, w] = [x.shape()[0], x.shape()[1], x.shape()[2], x.shape()[3]].map(|v| v as i64);
    let [o, _, kh, kw] = [k.shape()[0], k.shape()[1], k.shape()[2], k.shape()[3]].map(|v| v as i64);
    let [oh, ow] = [shape[2] as i64, shape[3] as i64];
    let (windows, patch) = (nb as u128 * oh as u128 * ow as u128, c as u128 * kh as u128 * kw as u128);
    if windows.saturating_mul(patch) > MAX_IM2COL as u128 {
        return fail(format!(
            "the convolution reads {windows} windows of {patch} cells, more than the evaluator's im2col limit of {MAX_IM2COL} cells"
        ));
    }
    let patch = (c * kh * kw) as usize;
    let rows_n = (nb * oh * ow) as usize;
    // Index of each patch cell in x, or None for padding.
    let mut cols: Vec<Option<usize>> = Vec::with_capacity(rows_n * patch);
    for n in 0..nb {
        for y in 0..oh {
            for z in 0..ow {
                for ci in 0..c {
                    for i in 0..kh {
                        for j in 0..kw {
                            let (r, q) = (y * s[0] - p[0] + i * d[0], z * s[1] - p[1] + j * d[1]);
                            let inside = (0..h).contains(&r) && (0..w).contains(&q);
                            cols.push(inside.then(|| (((n * c + ci) * h + r) * w + q) as usize));
                        }
                    }
                }
            }
        }
    }
    // Kernels as [patch, o] (transposed from [o, patch]).
    let kt: Vec<usize> = (0..patch * o as usize).map(|e| (e % o as usize) * patch + e / o as usize).collect();
    let zero_at = x.len();
    let picks: Vec<usize> = cols.iter().map(|c| c.unwrap_or(zero_at)).collect();
    let padded = x.data().concat(&Data::from_f64(x.dtype(), std::iter::once(0.0)));
    let a = padded.gather(&picks);
    let b = k.data().gather(&kt);
    let rows_out = contract(x.dtype(), &a, &b, None, [1, rows_n, patch, o as usize]);
    // [n, oh, ow, o] → [n, o, oh, ow].
    let (hw, o) = ((oh * ow) as usize, o as usize);
    let order: Vec<usize> = (0..rows_n * o)
        .map(|e| {
            let (n, rest) = (e / (o * hw), e % (o * hw));
            let (oc, pos) = (rest / hw, rest % hw);
            (n * hw + pos) * o + oc
        })
        .collect();
    Ok(rows_out.gather(&order))
}
