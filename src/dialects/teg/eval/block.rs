//! Built-in block operators: `contract`, `matmul`, `linear`, `prod` and `conv2d`. Contractions run on a real GEMM
//! (the `gemm` crate, threaded, with AVX-512 kernels where the CPU has them) for `f32` and `f64` (`f16` and `bf16`
//! through `f32`); integers contract in wrapping `i64`.

use super::{fail, EvalError};
use crate::array::alloc::{collect, Zeroable};
use crate::array::gemm::Gemm;
use crate::array::{Array, DType, Data};
use std::borrow::Cow;

/// `prod`: `p[.., q, j] = x[.., q] · w[q, j]` with the result's extents `shape`.
pub fn prod(x: &Array, w: &Array, shape: &[u64]) -> Result<Array, EvalError> {
    let k = *x.shape().last().unwrap_or(&1) as usize;
    let n = w.shape()[1] as usize;
    let m = x.shape()[..x.shape().len() - 1].iter().product::<u64>() as usize;
    Ok(Array::new(shape.to_vec(), prod_cells(x.data(), w.data(), m, k, n)?).expect("shape and count agree"))
}

/// `conv2d` of `x` by kernels `k` with the result's extents `shape` (not empty).
pub fn conv2d(x: &Array, k: &Array, shape: &[u64], s: [i64; 2], d: [i64; 2], p: [i64; 2]) -> Result<Array, EvalError> {
    Ok(Array::new(shape.to_vec(), conv2d_cells(x, k, shape, s, d, p)?).expect("shape and count agree"))
}

/// The left operand of a batched contraction: one `[m, k]` matrix per batch, or one for every batch.
#[derive(Copy, Clone, PartialEq, Eq)]
pub enum Lhs {
    /// `[nb, m, k]`.
    PerBatch,
    /// `[m, k]`, shared.
    Shared,
}

/// `[nb, m, k] · [nb, k, n]`, one GEMM per batch (+ `bias[n]` on every row), row-major.
pub fn contract(
    dtype: DType,
    (a, lhs): (&Data, Lhs),
    b: &Data,
    bias: Option<&Data>,
    [nb, m, k, n]: [usize; 4],
) -> Result<Data, EvalError> {
    let dims = [m, k, n];
    Ok(match dtype {
        DType::F64 => {
            let (a, b) = (as_f64(a)?, as_f64(b)?);
            let mut c: Vec<f64> = super::cells(nb * m * n)?;
            if let Some(bias) = bias {
                let bias = as_f64(bias)?;
                c.chunks_mut(n).for_each(|row| row.copy_from_slice(&bias));
            }
            batched(&a, lhs, &b, &mut c, dims, |a, b, c| f64::gemm(m, k, n, a, b, c, bias.is_some()));
            Data::F64(c)
        }
        t if t.is_float() => {
            let (a, b) = (as_f32(a)?, as_f32(b)?);
            let mut c: Vec<f32> = super::cells(nb * m * n)?;
            if let Some(bias) = bias {
                let bias = as_f32(bias)?;
                c.chunks_mut(n).for_each(|row| row.copy_from_slice(&bias));
            }
            batched(&a, lhs, &b, &mut c, dims, |a, b, c| f32::gemm(m, k, n, a, b, c, bias.is_some()));
            from_f32(t, c)?
        }
        t => {
            let mut c = match bias {
                Some(bias) => rows(&as_i64(bias)?, nb * m)?,
                None => super::cells(nb * m * n)?,
            };
            let (a, b) = (as_i64(a)?, as_i64(b)?);
            batched(&a, lhs, &b, &mut c, dims, |a, b, c| {
                for i in 0..m {
                    for p in 0..k {
                        let x = a[i * k + p];
                        for j in 0..n {
                            c[i * n + j] = c[i * n + j].wrapping_add(x.wrapping_mul(b[p * n + j]));
                        }
                    }
                }
            });
            Data::try_from_i64(t, &c)?
        }
    })
}

/// `gemm` on each batch's matrices: `a` holds `[m, k]` ones (or one, shared), `b` `[k, n]` ones, `c` `[m, n]`
/// ones.
fn batched<T>(a: &[T], lhs: Lhs, b: &[T], c: &mut [T], [m, k, n]: [usize; 3], gemm: impl Fn(&[T], &[T], &mut [T])) {
    if m * n == 0 {
        return;
    }
    for (i, c) in c.chunks_mut(m * n).enumerate() {
        let at = if lhs == Lhs::Shared { 0 } else { i * m * k };
        gemm(&a[at..at + m * k], &b[i * k * n..(i + 1) * k * n], c);
    }
}

/// `p[i, q, j] = a[i, q] · b[q, j]`, in the element type.
fn prod_cells(a: &Data, b: &Data, m: usize, k: usize, n: usize) -> Result<Data, EvalError> {
    let x = a.try_gather((0..m * k * n).map(|e| e / n))?;
    let y = b.try_gather((0..m * k * n).map(|e| e % (k * n)))?;
    let shape = vec![(m * k * n) as u64];
    let (x, y) = (Array::new(shape.clone(), x).expect("count"), Array::new(shape, y).expect("count"));
    let dense = super::broadcast::Read::dense(x.shape());
    let at = super::cell::Broadcast { shape: x.shape(), reads: vec![dense.clone(), dense] };
    Ok(super::cell::binary(crate::dialects::teg::ops::Binary::Mul, &x, &y, &at)?.data().clone())
}

/// The row `bias` repeated `m` times.
fn rows<T: Copy>(bias: &[T], m: usize) -> Result<Vec<T>, EvalError> {
    Ok(collect(bias.iter().copied().cycle().take(bias.len() * m))?)
}

/// The cells as `f32`, borrowed when they already are.
fn as_f32(d: &Data) -> Result<Cow<'_, [f32]>, EvalError> {
    Ok(match d {
        Data::F32(v) => Cow::Borrowed(v),
        other => Cow::Owned(collect((0..other.len()).map(|i| other.get_f64(i) as f32))?),
    })
}

/// The cells as `f64`, borrowed when they already are.
fn as_f64(d: &Data) -> Result<Cow<'_, [f64]>, EvalError> {
    Ok(match d {
        Data::F64(v) => Cow::Borrowed(v),
        other => Cow::Owned(collect((0..other.len()).map(|i| other.get_f64(i)))?),
    })
}

fn as_i64(d: &Data) -> Result<Vec<i64>, EvalError> {
    Ok(collect((0..d.len()).map(|i| d.get_i64(i)))?)
}

fn from_f32(dtype: DType, v: Vec<f32>) -> Result<Data, EvalError> {
    Ok(match dtype {
        DType::F32 => Data::F32(v),
        DType::BF16 => Data::BF16(collect(v.into_iter().map(half::bf16::from_f32))?),
        DType::F16 => Data::F16(collect(v.into_iter().map(half::f16::from_f32))?),
        other => Data::try_from_f64(other, v.into_iter().map(|x| x as f64))?,
    })
}

/// The most cells the im2col matrix of one convolution may have (the windows of the input, one row per output
/// position): it is the evaluator's largest temporary.
pub const MAX_IM2COL: u64 = 1 << 28;

/// Convolution through im2col: per image, the kernels `[o, c·kh·kw]` times the windows of the input laid out as
/// columns `[c·kh·kw, oh·ow]`, which gives the output `[o, oh, ow]` in place (NCHW, no transposition).
fn conv2d_cells(x: &Array, k: &Array, shape: &[u64], s: [i64; 2], d: [i64; 2], p: [i64; 2]) -> Result<Data, EvalError> {
    let g = Window {
        c: x.shape()[1] as usize,
        h: x.shape()[2] as i64,
        w: x.shape()[3] as i64,
        kh: k.shape()[2] as i64,
        kw: k.shape()[3] as i64,
        oh: shape[2] as usize,
        ow: shape[3] as usize,
        s,
        d,
        p,
    };
    let (nb, o) = (x.shape()[0] as usize, k.shape()[0] as usize);
    let (windows, patch) = ((nb * g.oh * g.ow) as u128, (g.c as u128) * (g.kh * g.kw) as u128);
    if windows.saturating_mul(patch) > MAX_IM2COL as u128 {
        return fail(format!(
            "the convolution reads {windows} windows of {patch} cells, more than the evaluator's im2col limit of {MAX_IM2COL} cells"
        ));
    }
    let columns = match x.data() {
        Data::F32(v) => Data::F32(g.im2col(v, nb)?),
        Data::F64(v) => Data::F64(g.im2col(v, nb)?),
        Data::BF16(v) => Data::BF16(g.im2col(v, nb)?),
        Data::F16(v) => Data::F16(g.im2col(v, nb)?),
        Data::I8(v) => Data::I8(g.im2col(v, nb)?),
        Data::I32(v) => Data::I32(g.im2col(v, nb)?),
        Data::I64(v) => Data::I64(g.im2col(v, nb)?),
        Data::I1(_) => return fail("no convolution of i1"),
    };
    let patch = patch as usize;
    contract(x.dtype(), (k.data(), Lhs::Shared), &columns, None, [nb, o, patch, g.oh * g.ow])
}

/// A convolution's geometry: input channels and extents, kernel extents, output extents, strides, dilations
/// and padding.
struct Window {
    c: usize,
    h: i64,
    w: i64,
    kh: i64,
    kw: i64,
    oh: usize,
    ow: usize,
    s: [i64; 2],
    d: [i64; 2],
    p: [i64; 2],
}

impl Window {
    /// The columns `[nb, c·kh·kw, oh·ow]`: row `(ci, i, j)` of image `n` holds, for each output position, the
    /// input cell under kernel tap `(i, j)` of channel `ci`, or zero in the padding.
    fn im2col<T: Zeroable>(&self, x: &[T], nb: usize) -> Result<Vec<T>, EvalError> {
        let (taps, hw) = ((self.kh * self.kw) as usize, self.oh * self.ow);
        let mut cols = super::cells::<T>(nb * self.c * taps * hw)?;
        let (h, w) = (self.h as usize, self.w as usize);
        for (plane, rows) in cols.chunks_mut(taps * hw).enumerate() {
            let image = &x[plane * h * w..(plane + 1) * h * w];
            for (tap, row) in rows.chunks_mut(hw).enumerate() {
                let (i, j) = (tap as i64 / self.kw, tap as i64 % self.kw);
                self.tap(image, i, j, row);
            }
        }
        Ok(cols)
    }

    /// One row of the columns: the cells of one channel's image under kernel tap `(i, j)`, for every output
    /// position (the zeroed buffer keeps the padding).
    fn tap<T: Copy>(&self, image: &[T], i: i64, j: i64, row: &mut [T]) {
        let w = self.w as usize;
        // Output columns z whose input column z·s − p + j·d lies inside [0, w).
        let first = |lo: i64, s: i64| if lo >= 0 { 0 } else { (lo as i128).unsigned_abs().div_ceil(s as u128) as i64 };
        let (lo, s) = (j * self.d[1] - self.p[1], self.s[1]);
        let z0 = first(lo, s).min(self.ow as i64);
        let z1 = if lo >= self.w { 0 } else { ((self.w - 1 - lo) / s + 1).min(self.ow as i64) }.max(z0);
        for (y, out) in row.chunks_mut(self.ow).enumerate() {
            let r = y as i64 * self.s[0] - self.p[0] + i * self.d[0];
            if !(0..self.h).contains(&r) || z1 == z0 {
                continue;
            }
            let line = &image[r as usize * w..(r as usize + 1) * w];
            if s == 1 {
                let q = (z0 + lo) as usize;
                out[z0 as usize..z1 as usize].copy_from_slice(&line[q..q + (z1 - z0) as usize]);
            } else {
                for z in z0..z1 {
                    out[z as usize] = line[(z * s + lo) as usize];
                }
            }
        }
    }
}
