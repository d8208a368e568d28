//! Element types of host arrays and TEG tensors, with their spellings (`f32`) and NumPy codes (`<f4`).

use std::fmt;

/// An element type.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum DType {
    /// IEEE binary32.
    F32,
    /// IEEE binary64.
    F64,
    /// bfloat16 (the top half of a binary32).
    BF16,
    /// IEEE binary16.
    F16,
    /// 8-bit signed integer.
    I8,
    /// 32-bit signed integer.
    I32,
    /// 64-bit signed integer.
    I64,
    /// Boolean.
    I1,
}

impl DType {
    /// Every element type, in a fixed order.
    pub const ALL: [DType; 8] =
        [DType::F32, DType::F64, DType::BF16, DType::F16, DType::I8, DType::I32, DType::I64, DType::I1];

    /// The IR spelling (`f32`, `bf16`, `i1`, ...).
    pub fn name(self) -> &'static str {
        match self {
            DType::F32 => "f32",
            DType::F64 => "f64",
            DType::BF16 => "bf16",
            DType::F16 => "f16",
            DType::I8 => "i8",
            DType::I32 => "i32",
            DType::I64 => "i64",
            DType::I1 => "i1",
        }
    }

    /// The element type spelled `name`.
    pub fn from_name(name: &str) -> Option<DType> {
        DType::ALL.into_iter().find(|d| d.name() == name)
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            DType::F64 | DType::I64 => 8,
            DType::F32 | DType::I32 => 4,
            DType::BF16 | DType::F16 => 2,
            DType::I8 | DType::I1 => 1,
        }
    }

    /// Whether it is a floating-point type.
    pub fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::F64 | DType::BF16 | DType::F16)
    }

    /// Whether it is a (signed) integer type, booleans excluded.
    pub fn is_int(self) -> bool {
        matches!(self, DType::I8 | DType::I32 | DType::I64)
    }

    /// The least and greatest value of an integer or boolean type (`None` for floats): what a verifier checks
    /// integer constants and index extents against.
    pub fn int_range(self) -> Option<(i64, i64)> {
        match self {
            DType::I8 => Some((i8::MIN.into(), i8::MAX.into())),
            DType::I32 => Some((i32::MIN.into(), i32::MAX.into())),
            DType::I64 => Some((i64::MIN, i64::MAX)),
            DType::I1 => Some((0, 1)),
            _ => None,
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
