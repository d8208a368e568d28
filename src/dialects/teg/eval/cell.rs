//! Cell (elementwise) operators: each output cell from the cells at the same coordinate of the operands.

use super::broadcast::{self, Read, CHUNK};
use super::{fail, EvalError};
use crate::array::alloc::{collect, room, Zeroable};
use crate::array::{round, Array, DType, Data};
use crate::dialects::teg::ops::{Binary, Predicate, Unary};
use half::{bf16, f16};
use rayon::prelude::*;

/// Floating-point element types computed natively (`f32`, `f64`).
trait Real:
    Copy
    + PartialOrd
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
    + std::ops::Neg<Output = Self>
{
    const ZERO: Self;
    fn abs(self) -> Self;
    fn exp(self) -> Self;
    fn ln(self) -> Self;
    fn sqrt(self) -> Self;
    fn tanh(self) -> Self;
    fn gelu(self) -> Self;
    fn gelu_tanh(self) -> Self;
    fn is_nan(self) -> bool;
}

macro_rules! real {
    ($t:ty, $erf:path) => {
        impl Real for $t {
            const ZERO: Self = 0.0;
            fn abs(self) -> Self {
                <$t>::abs(self)
            }
            fn exp(self) -> Self {
                <$t>::exp(self)
            }
            fn ln(self) -> Self {
                <$t>::ln(self)
            }
            fn sqrt(self) -> Self {
                <$t>::sqrt(self)
            }
            fn tanh(self) -> Self {
                <$t>::tanh(self)
            }
            fn gelu(self) -> Self {
                0.5 * self * (1.0 + $erf(self * std::f64::consts::FRAC_1_SQRT_2 as $t))
            }
            /// In f64, rounded once: `1 + tanh(..)` cancels for negative inputs, which f32 would not survive.
            fn gelu_tanh(self) -> Self {
                let x = self as f64;
                let c = (2.0 / std::f64::consts::PI).sqrt();
                (0.5 * x * (1.0 + (c * (x + 0.044715 * x * x * x)).tanh())) as $t
            }
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
        }
    };
}
real!(f32, libm::erff);
real!(f64, libm::erf);

/// Where a cell op writes: a fresh buffer (its first operand's cells read from `Fresh`), or over its first
/// operand's cells when that value dies with the op (`Over`: no buffer allocated).
pub enum Out<'a, T> {
    /// Read these, write a new buffer.
    Fresh(&'a [T]),
    /// Read and overwrite these.
    Over(&'a mut [T]),
}

fn real_unary<T: Real + Send + Sync + Zeroable>(op: Unary, x: Out<T>) -> Result<Option<Vec<T>>, EvalError> {
    // A macro, not a closure taking `fn`, so that each op's function inlines into its own vectorized loop.
    macro_rules! each {
        ($f:expr) => {
            each!($f, map_in_place)
        };
        ($f:expr, $over:ident) => {
            match x {
                Out::Fresh(v) => map_with(v, $f).map(Some),
                Out::Over(v) => {
                    $over(v, $f);
                    Ok(None)
                }
            }
        };
    }
    match op {
        Unary::Abs => each!(|x| x.abs()),
        Unary::Neg => each!(|x| -x),
        Unary::Exp => each!(|x| x.exp()),
        Unary::Log => each!(|x| x.ln()),
        Unary::Sqrt => each!(|x| x.sqrt()),
        Unary::Tanh => each!(|x| x.tanh()),
        // NaN stays NaN and -0 stays -0 (NumPy's maximum(x, 0)); one comparison with no short circuit vectorizes.
        Unary::Relu => each!(|x| if x < T::ZERO { T::ZERO } else { x }, map_in_place_copied),
        Unary::Gelu => each!(|x| x.gelu()),
        Unary::GeluTanh => each!(|x| x.gelu_tanh()),
    }
}

/// The fresh result of a kernel run with [`Out::Fresh`].
fn fresh<T>(r: Result<Option<Vec<T>>, EvalError>) -> Result<Vec<T>, EvalError> {
    r.map(|v| v.expect("a fresh buffer"))
}

fn int_unary(op: Unary, x: i64) -> i64 {
    match op {
        Unary::Abs => x.wrapping_abs(),
        Unary::Neg => x.wrapping_neg(),
        Unary::Relu => x.max(0),
        _ => unreachable!("verified: float-only ops take floats"),
    }
}

/// Applies `f` to `f16`/`bf16` cells through `f32`.
fn via_f32<H: Copy>(
    v: &[H],
    to: impl Fn(H) -> f32,
    from: impl Fn(f32) -> H,
    f: impl Fn(&[f32]) -> Result<Vec<f32>, EvalError>,
) -> Result<Vec<H>, EvalError> {
    let wide: Vec<f32> = collect(v.iter().map(|&x| to(x)))?;
    Ok(collect(f(&wide)?.into_iter().map(from))?)
}

macro_rules! ints {
    ($data:expr, $v:ident, $t:ident => $body:expr, $other:expr) => {
        match $data {
            Data::I8($v) => {
                type $t = i8;
                Data::I8($body)
            }
            Data::I32($v) => {
                type $t = i32;
                Data::I32($body)
            }
            Data::I64($v) => {
                type $t = i64;
                Data::I64($body)
            }
            _ => $other,
        }
    };
}

/// An elementwise function of one operand.
#[allow(clippy::useless_conversion)] // `i64::from` is the identity in the macro's `i64` arm.
pub fn unary(op: Unary, x: &Array) -> Result<Array, EvalError> {
    let data = match x.data() {
        Data::F32(v) => Data::F32(fresh(real_unary(op, Out::Fresh(v)))?),
        Data::F64(v) => Data::F64(fresh(real_unary(op, Out::Fresh(v)))?),
        Data::BF16(v) => {
            Data::BF16(via_f32(v, bf16::to_f32, bf16::from_f32, |w| fresh(real_unary(op, Out::Fresh(w))))?)
        }
        Data::F16(v) => Data::F16(via_f32(v, f16::to_f32, f16::from_f32, |w| fresh(real_unary(op, Out::Fresh(w))))?),
        other => {
            ints!(other, v, T => collect(v.iter().map(|&a| int_unary(op, i64::from(a)) as T))?, return fail("no elementwise math on i1"))
        }
    };
    Ok(Array::new(x.shape().to_vec(), data).expect("same shape"))
}

/// [`unary`] over `x`'s own cells, a value that dies with the op.
pub fn unary_in_place(op: Unary, x: &mut Array) -> Result<(), EvalError> {
    match x.data_mut() {
        Data::F32(v) => real_unary(op, Out::Over(v)).map(drop),
        Data::F64(v) => real_unary(op, Out::Over(v)).map(drop),
        _ => {
            *x = unary(op, x)?;
            Ok(())
        }
    }
}

/// `f` of each cell in place, on all threads when there is more than one chunk.
fn map_in_place<T: Copy + Send + Sync>(a: &mut [T], f: impl Fn(T) -> T + Sync) {
    a.par_chunks_mut(CHUNK).for_each(|o| {
        super::simd::vectorized(
            #[inline(always)]
            || o.iter_mut().for_each(|x| *x = f(*x)),
        )
    });
}

/// [`map_in_place`] for a function that gives some cells back unchanged (relu): computed from a copy of each
/// block of cells, since over the cells themselves the compiler turns the store into a masked store of the changed
/// ones, which is microcoded on AMD's cores and ten times slower.
fn map_in_place_copied<T: Copy + Send + Sync>(a: &mut [T], f: impl Fn(T) -> T + Sync) {
    const BLOCK: usize = 256;
    a.par_chunks_mut(CHUNK).for_each(|o| {
        super::simd::vectorized(
            #[inline(always)]
            || {
                let Some(&first) = o.first() else { return };
                let mut copy = [first; BLOCK];
                for block in o.chunks_mut(BLOCK) {
                    let copy = &mut copy[..block.len()];
                    copy.copy_from_slice(block);
                    block.iter_mut().zip(copy.iter()).for_each(|(x, &c)| *x = f(c));
                }
            },
        )
    });
}

/// `f` of each cell, on all threads when there is more than one chunk (see [`broadcast::zip`]).
fn map_with<T: Copy + Send + Sync + Zeroable>(a: &[T], f: impl Fn(T) -> T + Sync) -> Result<Vec<T>, EvalError> {
    let mut out = super::cells(a.len())?;
    out.par_chunks_mut(CHUNK).zip(a.par_chunks(CHUNK)).for_each(|(o, x)| {
        super::simd::vectorized(
            #[inline(always)]
            || o.iter_mut().zip(x).for_each(|(o, &x)| *o = f(x)),
        )
    });
    Ok(out)
}

/// The result shape and how each operand is read at its coordinates (a broadcast or a strided view: see
/// [`broadcast::Read`]).
pub struct Broadcast<'a> {
    /// The result's extents.
    pub shape: &'a [u64],
    /// Per operand, how it is read at the result's coordinates.
    pub reads: Vec<Read>,
}

fn real_binary<T: Real + Send + Sync + Zeroable>(
    op: Binary,
    a: Out<T>,
    b: &[T],
    at: &Broadcast,
) -> Result<Option<Vec<T>>, EvalError> {
    // A macro, not a closure taking `fn`, so that each op's function inlines into its own vectorized loop.
    macro_rules! zip_with {
        ($a:expr, $b:expr, $f:expr) => {
            match $a {
                Out::Fresh(a) => broadcast::zip(at.shape, (a, &at.reads[0]), ($b, &at.reads[1]), $f).map(Some),
                Out::Over(a) => {
                    broadcast::zip_into(at.shape, a, ($b, &at.reads[1]), $f);
                    Ok(None)
                }
            }
        };
    }
    match op {
        Binary::Add => zip_with!(a, b, |x, y| x + y),
        Binary::Sub => zip_with!(a, b, |x, y| x - y),
        Binary::Mul => zip_with!(a, b, |x, y| x * y),
        Binary::Div => zip_with!(a, b, |x, y| x / y),
        // NaN wins (`x + y` is NaN when either is), as NumPy's maximum and minimum; selects without short
        // circuits, so that the loop vectorizes.
        Binary::Max => zip_with!(a, b, |x, y| {
            let m = if x >= y { x } else { y };
            if x.is_nan() | y.is_nan() {
                x + y
            } else {
                m
            }
        }),
        Binary::Min => zip_with!(a, b, |x, y| {
            let m = if x <= y { x } else { y };
            if x.is_nan() | y.is_nan() {
                x + y
            } else {
                m
            }
        }),
    }
}

fn int_binary(op: Binary, x: i64, y: i64) -> Result<i64, EvalError> {
    Ok(match op {
        Binary::Add => x.wrapping_add(y),
        Binary::Sub => x.wrapping_sub(y),
        Binary::Mul => x.wrapping_mul(y),
        Binary::Div if y == 0 => return fail("integer division by zero"),
        Binary::Div => x.wrapping_div(y),
        Binary::Max => x.max(y),
        Binary::Min => x.min(y),
    })
}

/// An elementwise function of two operands of one element type, broadcast as `at` says.
pub fn binary(op: Binary, a: &Array, b: &Array, at: &Broadcast) -> Result<Array, EvalError> {
    let data = match (a.data(), b.data()) {
        (Data::F32(x), Data::F32(y)) => Data::F32(fresh(real_binary(op, Out::Fresh(x), y, at))?),
        (Data::F64(x), Data::F64(y)) => Data::F64(fresh(real_binary(op, Out::Fresh(x), y, at))?),
        (Data::BF16(x), Data::BF16(y)) => {
            let wide: Vec<f32> = collect(y.iter().map(|v| v.to_f32()))?;
            Data::BF16(via_f32(x, bf16::to_f32, bf16::from_f32, |w| fresh(real_binary(op, Out::Fresh(w), &wide, at)))?)
        }
        (Data::F16(x), Data::F16(y)) => {
            let wide: Vec<f32> = collect(y.iter().map(|v| v.to_f32()))?;
            Data::F16(via_f32(x, f16::to_f32, f16::from_f32, |w| fresh(real_binary(op, Out::Fresh(w), &wide, at)))?)
        }
        (x, y) if x.dtype() == y.dtype() && x.dtype().is_int() => {
            let mut values = room(at.len())?;
            let mut failed = None;
            broadcast::for_each_offset(at.shape, at.operands::<2>(), |[i, j]| {
                match int_binary(op, x.get_i64(i), y.get_i64(j)) {
                    Ok(v) => values.push(v),
                    Err(e) => failed = Some(e),
                }
            });
            if let Some(e) = failed {
                return Err(e);
            }
            Data::try_from_i64(x.dtype(), &values)?
        }
        _ => return fail(format!("no elementwise {op:?} on {} and {}", a.dtype(), b.dtype())),
    };
    Ok(Array::new(at.shape.to_vec(), data).expect("the result's shape"))
}

/// [`binary`] over `a`'s own cells (a value of the result's shape that dies with the op).
pub fn binary_in_place(op: Binary, a: &mut Array, b: &Array, at: &Broadcast) -> Result<(), EvalError> {
    match (a.data_mut(), b.data()) {
        (Data::F32(x), Data::F32(y)) => real_binary(op, Out::Over(x), y, at).map(drop),
        (Data::F64(x), Data::F64(y)) => real_binary(op, Out::Over(x), y, at).map(drop),
        _ => {
            *a = binary(op, a, b, at)?;
            Ok(())
        }
    }
}

impl Broadcast<'_> {
    /// The number of result cells.
    fn len(&self) -> usize {
        self.shape.iter().product::<u64>() as usize
    }

    /// How the first `N` operands are read.
    fn operands<const N: usize>(&self) -> [&Read; N] {
        std::array::from_fn(|i| &self.reads[i])
    }
}

/// Clamps to `[min, max]` (NaN stays NaN; integers clamp to `[ceil(min), floor(max)]` within their type).
pub fn clip(x: &Array, min: f64, max: f64) -> Result<Array, EvalError> {
    let data = match x.data() {
        Data::F32(v) => {
            Data::F32(collect(v.iter().map(|&a| if a.is_nan() { a } else { a.clamp(min as f32, max as f32) }))?)
        }
        Data::F64(v) => Data::F64(collect(v.iter().map(|&a| if a.is_nan() { a } else { a.clamp(min, max) }))?),
        other if other.dtype().is_int() => {
            // Verified: some value of the type lies between the bounds, so `lo <= hi` after limiting to the type.
            let (tmin, tmax) = other.dtype().int_range().expect("an integer type");
            let (lo, hi) = ((min.ceil() as i64).max(tmin), (max.floor() as i64).min(tmax));
            let values: Vec<i64> = collect((0..other.len()).map(|i| other.get_i64(i).clamp(lo, hi)))?;
            Data::try_from_i64(other.dtype(), &values)?
        }
        other => Data::try_from_f64(
            other.dtype(),
            (0..other.len()).map(|i| {
                let a = other.get_f64(i);
                if a.is_nan() {
                    a
                } else {
                    a.clamp(min, max)
                }
            }),
        )?,
    };
    Ok(Array::new(x.shape().to_vec(), data).expect("same shape"))
}

/// Converts every cell to `dtype`: floats round to nearest, floats to integers truncate toward zero and saturate
/// (NaN gives 0), integers wrap, anything to `i1` is `x != 0`.
pub fn cast(x: &Array, dtype: DType) -> Result<Array, EvalError> {
    let d = x.data();
    let data = if dtype.is_int() && (d.dtype().is_int() || d.dtype() == DType::I1) {
        Data::try_from_i64(dtype, &collect((0..d.len()).map(|i| d.get_i64(i)))?)?
    } else if let (Data::I64(v), true) = (d, dtype.is_float()) {
        // Each rounded once from the integer (through `f64` a large one would round twice).
        match dtype {
            DType::F32 => Data::F32(collect(v.iter().map(|&a| a as f32))?),
            DType::BF16 => Data::BF16(collect(v.iter().map(|&a| round::bf16_from_i64(a)))?),
            DType::F16 => Data::F16(collect(v.iter().map(|&a| round::f16_from_i64(a)))?),
            _ => Data::F64(collect(v.iter().map(|&a| a as f64))?),
        }
    } else if let (Data::F32(v), DType::BF16) = (d, dtype) {
        Data::BF16(collect(v.iter().map(|&a| bf16::from_f32(a)))?)
    } else if let (Data::F32(v), DType::F16) = (d, dtype) {
        Data::F16(collect(v.iter().map(|&a| f16::from_f32(a)))?)
    } else {
        Data::try_from_f64(dtype, (0..d.len()).map(|i| d.get_f64(i)))?
    };
    Ok(Array::new(x.shape().to_vec(), data).expect("same shape"))
}

/// Compares cell by cell, broadcast as `at` says (any comparison with NaN is false but `ne`).
pub fn compare(p: Predicate, a: &Array, b: &Array, at: &Broadcast) -> Result<Array, EvalError> {
    let (x, y) = (a.data(), b.data());
    let test = |o: std::cmp::Ordering| match p {
        Predicate::Eq => o.is_eq(),
        Predicate::Ne => o.is_ne(),
        Predicate::Lt => o.is_lt(),
        Predicate::Le => o.is_le(),
        Predicate::Gt => o.is_gt(),
        Predicate::Ge => o.is_ge(),
    };
    let mut cells = room(at.len())?;
    if x.dtype().is_float() {
        broadcast::for_each_offset(at.shape, at.operands::<2>(), |[i, j]| {
            cells.push(x.get_f64(i).partial_cmp(&y.get_f64(j)).map_or(p == Predicate::Ne, test))
        });
    } else {
        broadcast::for_each_offset(at.shape, at.operands::<2>(), |[i, j]| {
            cells.push(test(x.get_i64(i).cmp(&y.get_i64(j))))
        });
    }
    Ok(Array::new(at.shape.to_vec(), Data::I1(cells)).expect("the result's shape"))
}

/// `cond ? a : b` cell by cell, broadcast as `at` says.
pub fn select(cond: &Array, a: &Array, b: &Array, at: &Broadcast) -> Result<Array, EvalError> {
    let Data::I1(c) = cond.data() else { unreachable!("verified: the condition is i1") };
    macro_rules! pick {
        ($($t:ident),*) => {
            match (a.data(), b.data()) {
                $((Data::$t(x), Data::$t(y)) => {
                    let mut out = room(at.len())?;
                    broadcast::for_each_offset(at.shape, at.operands::<3>(), |[k, i, j]| {
                        out.push(if c[k] { x[i] } else { y[j] })
                    });
                    Data::$t(out)
                })*
                _ => return fail("the operands' element types differ"),
            }
        };
    }
    let data = pick!(F32, F64, BF16, F16, I8, I32, I64, I1);
    Ok(Array::new(at.shape.to_vec(), data).expect("the result's shape"))
}
