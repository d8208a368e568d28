//! Host arrays: a shape and typed element data, what the TEG reference evaluator computes on and what `tap-run`
//! reads from and writes to NumPy `.npy` files, and the GEMM they both compute with. A library of its own (std,
//! `half`, `npyz`, `libc` and `gemm` only).

pub mod alloc;
pub mod dtype;
pub mod gemm;
pub mod npy;
pub mod round;

use alloc::{collect, AllocError};
pub use dtype::DType;
use half::{bf16, f16};
use std::fmt;

/// Typed element storage, row-major.
#[derive(Clone, Debug, PartialEq)]
pub enum Data {
    /// `f32` elements.
    F32(Vec<f32>),
    /// `f64` elements.
    F64(Vec<f64>),
    /// `bf16` elements.
    BF16(Vec<bf16>),
    /// `f16` elements.
    F16(Vec<f16>),
    /// `i8` elements.
    I8(Vec<i8>),
    /// `i32` elements.
    I32(Vec<i32>),
    /// `i64` elements.
    I64(Vec<i64>),
    /// `i1` elements.
    I1(Vec<bool>),
}

/// Applies `$body` to the typed vector inside a [`Data`], whatever its element type.
#[macro_export]
macro_rules! with_data {
    ($data:expr, $v:ident => $body:expr) => {
        match $data {
            $crate::array::Data::F32($v) => $body,
            $crate::array::Data::F64($v) => $body,
            $crate::array::Data::BF16($v) => $body,
            $crate::array::Data::F16($v) => $body,
            $crate::array::Data::I8($v) => $body,
            $crate::array::Data::I32($v) => $body,
            $crate::array::Data::I64($v) => $body,
            $crate::array::Data::I1($v) => $body,
        }
    };
}

/// `$body` over the elements of whichever variant `$data` is, giving the same variant of its result.
#[macro_export]
macro_rules! map_data {
    ($data:expr, $v:ident => $body:expr) => {
        match $data {
            $crate::array::Data::F32($v) => $crate::array::Data::F32($body),
            $crate::array::Data::F64($v) => $crate::array::Data::F64($body),
            $crate::array::Data::BF16($v) => $crate::array::Data::BF16($body),
            $crate::array::Data::F16($v) => $crate::array::Data::F16($body),
            $crate::array::Data::I8($v) => $crate::array::Data::I8($body),
            $crate::array::Data::I32($v) => $crate::array::Data::I32($body),
            $crate::array::Data::I64($v) => $crate::array::Data::I64($body),
            $crate::array::Data::I1($v) => $crate::array::Data::I1($body),
        }
    };
}

impl Data {
    /// The element type.
    pub fn dtype(&self) -> DType {
        match self {
            Data::F32(_) => DType::F32,
            Data::F64(_) => DType::F64,
            Data::BF16(_) => DType::BF16,
            Data::F16(_) => DType::F16,
            Data::I8(_) => DType::I8,
            Data::I32(_) => DType::I32,
            Data::I64(_) => DType::I64,
            Data::I1(_) => DType::I1,
        }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        with_data!(self, v => v.len())
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `values` converted to `dtype` (floats rounded to nearest, integers truncated toward zero and saturated,
    /// booleans from non-zero), as NumPy's `astype` does for in-range values.
    pub fn from_f64(dtype: DType, values: impl Iterator<Item = f64>) -> Data {
        Data::try_from_f64(dtype, values).unwrap_or_else(|e| panic!("{e}"))
    }

    /// [`Data::from_f64`], its buffer allocated fallibly (for buffers as large as a tensor).
    pub fn try_from_f64(dtype: DType, values: impl Iterator<Item = f64>) -> Result<Data, AllocError> {
        Ok(match dtype {
            DType::F32 => Data::F32(collect(values.map(|x| x as f32))?),
            DType::F64 => Data::F64(collect(values)?),
            DType::BF16 => Data::BF16(collect(values.map(round::bf16_from_f64))?),
            DType::F16 => Data::F16(collect(values.map(round::f16_from_f64))?),
            DType::I8 => Data::I8(collect(values.map(|x| x as i8))?),
            DType::I32 => Data::I32(collect(values.map(|x| x as i32))?),
            DType::I64 => Data::I64(collect(values.map(|x| x as i64))?),
            DType::I1 => Data::I1(collect(values.map(|x| x != 0.0))?),
        })
    }

    /// `values` converted to `dtype`: integers wrap to their width, `i1` is `x != 0`, floats round to nearest.
    pub fn from_i64(dtype: DType, values: &[i64]) -> Data {
        Data::try_from_i64(dtype, values).unwrap_or_else(|e| panic!("{e}"))
    }

    /// [`Data::from_i64`], its buffer allocated fallibly.
    pub fn try_from_i64(dtype: DType, values: &[i64]) -> Result<Data, AllocError> {
        Ok(match dtype {
            DType::I8 => Data::I8(collect(values.iter().map(|&x| x as i8))?),
            DType::I32 => Data::I32(collect(values.iter().map(|&x| x as i32))?),
            DType::I64 => Data::I64(collect(values.iter().copied())?),
            DType::I1 => Data::I1(collect(values.iter().map(|&x| x != 0))?),
            float => Data::try_from_f64(float, values.iter().map(|&x| x as f64))?,
        })
    }

    /// Element `i` as an `f64` (exact for every type but `i64` beyond 2^53).
    pub fn get_f64(&self, i: usize) -> f64 {
        match self {
            Data::F32(v) => v[i] as f64,
            Data::F64(v) => v[i],
            Data::BF16(v) => v[i].to_f64(),
            Data::F16(v) => v[i].to_f64(),
            Data::I8(v) => v[i] as f64,
            Data::I32(v) => v[i] as f64,
            Data::I64(v) => v[i] as f64,
            Data::I1(v) => v[i] as u8 as f64,
        }
    }

    /// Element `i` as an `i64` (floats truncated toward zero).
    pub fn get_i64(&self, i: usize) -> i64 {
        match self {
            Data::I8(v) => v[i] as i64,
            Data::I32(v) => v[i] as i64,
            Data::I64(v) => v[i],
            Data::I1(v) => v[i] as i64,
            other => other.get_f64(i) as i64,
        }
    }

    /// The elements at `indices`, in that order (a gather).
    pub fn gather(&self, indices: &[usize]) -> Data {
        self.try_gather(indices.iter().copied()).unwrap_or_else(|e| panic!("{e}"))
    }

    /// The elements at `indices`, in that order, in a buffer allocated fallibly.
    pub fn try_gather(&self, indices: impl Iterator<Item = usize>) -> Result<Data, AllocError> {
        Ok(map_data!(self, v => collect(indices.map(|i| v[i]))?))
    }
}

/// A row-major array: shape and elements.
#[derive(Clone, Debug, PartialEq)]
pub struct Array {
    shape: Vec<u64>,
    data: Data,
}

/// Why an array cannot be built or read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArrayError(pub String);

impl fmt::Display for ArrayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ArrayError {}

impl Array {
    /// An array of `shape` holding `data` (as many elements as the shape has).
    pub fn new(shape: Vec<u64>, data: Data) -> Result<Array, ArrayError> {
        let n = shape.iter().try_fold(1u64, |a, &b| a.checked_mul(b));
        if n != Some(data.len() as u64) {
            return Err(ArrayError(format!("shape {shape:?} needs {n:?} elements, the data has {}", data.len())));
        }
        Ok(Array { shape, data })
    }

    /// An array of `shape` whose elements are `f(i)` for the row-major element numbers `i`, in `dtype`.
    pub fn from_fn(dtype: DType, shape: Vec<u64>, f: impl Fn(usize) -> f64) -> Array {
        Array::try_from_fn(dtype, shape, f).unwrap_or_else(|e| panic!("{e}"))
    }

    /// [`Array::from_fn`], its buffer allocated fallibly.
    pub fn try_from_fn(dtype: DType, shape: Vec<u64>, f: impl Fn(usize) -> f64) -> Result<Array, AllocError> {
        let n: u64 = shape.iter().product();
        Ok(Array { data: Data::try_from_f64(dtype, (0..n as usize).map(f))?, shape })
    }

    /// The shape.
    pub fn shape(&self) -> &[u64] {
        &self.shape
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        self.data.dtype()
    }

    /// The elements.
    pub fn data(&self) -> &Data {
        &self.data
    }

    /// The elements, to change in place.
    pub fn data_mut(&mut self) -> &mut Data {
        &mut self.data
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// Whether the array has no elements.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// The elements converted to `f64`, row-major.
    pub fn to_f64(&self) -> Vec<f64> {
        (0..self.len()).map(|i| self.data.get_f64(i)).collect()
    }

    /// The row-major strides of the shape, in elements.
    pub fn strides(&self) -> Vec<usize> {
        strides(&self.shape)
    }
}

impl Array {
    /// The elements as nested brackets, one level per dimension (`[[1, 2], [3, 4]]`; a scalar alone), each
    /// number in the shortest form that reads back to the same value of its type. An empty array of rank above 1
    /// is `[]` with its shape, as NumPy prints it (its other extents may be huge).
    pub fn to_text(&self) -> String {
        if self.is_empty() && self.shape.len() > 1 {
            return format!("[] (shape {:?})", self.shape);
        }
        let cell = |i: usize| -> String {
            match &self.data {
                Data::F32(v) => v[i].to_string(),
                Data::F64(v) => v[i].to_string(),
                Data::BF16(v) => v[i].to_string(),
                Data::F16(v) => v[i].to_string(),
                Data::I8(v) => v[i].to_string(),
                Data::I32(v) => v[i].to_string(),
                Data::I64(v) => v[i].to_string(),
                Data::I1(v) => v[i].to_string(),
            }
        };
        fn nest(shape: &[u64], at: &mut usize, cell: &dyn Fn(usize) -> String) -> String {
            match shape.split_first() {
                None => {
                    *at += 1;
                    cell(*at - 1)
                }
                Some((&n, rest)) => {
                    let parts: Vec<String> = (0..n).map(|_| nest(rest, at, cell)).collect();
                    format!("[{}]", parts.join(", "))
                }
            }
        }
        nest(&self.shape, &mut 0, &cell)
    }
}

/// Whether an array of `shape` with `item_bytes`-byte elements is one NumPy could hold: its non-zero extents (an
/// empty array's loops and strides still multiply its other extents) take less than 2^63 bytes.
pub fn fits(shape: &[u64], item_bytes: usize) -> bool {
    let bytes = shape.iter().filter(|&&e| e > 0).try_fold(item_bytes as u64, |a, &e| a.checked_mul(e));
    bytes.is_some_and(|b| b <= i64::MAX as u64)
}

/// The row-major strides of `shape`, in elements.
pub fn strides(shape: &[u64]) -> Vec<usize> {
    let mut out = vec![1usize; shape.len()];
    for k in (0..shape.len().saturating_sub(1)).rev() {
        out[k] = out[k + 1] * shape[k + 1] as usize;
    }
    out
}
