//! Builtin types: integers, `index`, floats, static tensors, functions, tuples, `none`, and dialect types.
//!
//! Types are interned in the [`Context`](super::Context); a [`TypeId`] compares equal exactly when the types
//! are equal.

use super::attrs::AttrId;
use super::dialect_data::DialectData;
use super::Symbol;

crate::define_id!(
    /// An interned type.
    TypeId,
    "ty"
);

/// The floating-point formats the core knows.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FloatKind {
    /// bfloat16.
    BF16,
    /// IEEE half precision.
    F16,
    /// IEEE single precision.
    F32,
    /// IEEE double precision.
    F64,
}

impl FloatKind {
    /// The keyword that spells this type.
    pub fn keyword(self) -> &'static str {
        match self {
            FloatKind::BF16 => "bf16",
            FloatKind::F16 => "f16",
            FloatKind::F32 => "f32",
            FloatKind::F64 => "f64",
        }
    }

    /// The kind a keyword spells, if any.
    pub fn from_keyword(word: &str) -> Option<FloatKind> {
        Some(match word {
            "bf16" => FloatKind::BF16,
            "f16" => FloatKind::F16,
            "f32" => FloatKind::F32,
            "f64" => FloatKind::F64,
            _ => return None,
        })
    }

    /// Storage width in bits.
    pub fn width(self) -> u32 {
        match self {
            FloatKind::BF16 | FloatKind::F16 => 16,
            FloatKind::F32 => 32,
            FloatKind::F64 => 64,
        }
    }
}

/// The structure of a type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum TypeKind {
    /// Signless integer `iN`.
    Int(u32),
    /// The target-sized `index` type.
    Index,
    /// A floating-point type.
    Float(FloatKind),
    /// A statically shaped tensor, optionally with an encoding attribute (`tensor<4x8xf32, #enc>`).
    Tensor {
        /// Extent of each dimension; empty for rank 0.
        shape: Box<[u64]>,
        /// Element type.
        elem: TypeId,
        /// Encoding attribute, e.g. a layout.
        encoding: Option<AttrId>,
    },
    /// A function type `(inputs) -> results`.
    Function {
        /// Argument types.
        inputs: Box<[TypeId]>,
        /// Result types.
        results: Box<[TypeId]>,
    },
    /// `tuple<...>`.
    Tuple(Box<[TypeId]>),
    /// `none`.
    None,
    /// A type of a dialect that is not registered (or has no parser): `!dialect.name<body>`, kept verbatim.
    Opaque {
        /// Full name, `dialect.name`.
        name: Symbol,
        /// The text between the angle brackets, if any.
        body: Option<Box<str>>,
    },
    /// A type a registered dialect parsed into its own structure.
    Dialect(DialectData),
}

impl TypeKind {
    /// The integer width if this is an integer type.
    pub fn int_width(&self) -> Option<u32> {
        match self {
            TypeKind::Int(w) => Some(*w),
            _ => None,
        }
    }

    /// True for `iN` and `index`.
    pub fn is_integer_like(&self) -> bool {
        matches!(self, TypeKind::Int(_) | TypeKind::Index)
    }
}
