//! Builtin attributes: integers, floats, strings, bools, unit, arrays, dictionaries, types, symbol references,
//! dense elements, affine maps, and dialect attributes.
//!
//! Attributes are interned in the [`Context`](super::Context). An op's attribute dictionary is itself one
//! interned [`Attr::Dict`] whose entries are sorted by key, so equal dictionaries share an id.

use super::affine::AffineMap;
use super::dialect_data::DialectData;
use super::types::TypeId;
use super::Symbol;

crate::define_id!(
    /// An interned attribute.
    AttrId,
    "attr"
);

/// One scalar of a dense elements attribute.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum DenseElem {
    /// An integer (or index) value.
    Int(i128),
    /// A float, stored as the bits of an `f64` so that the attribute can be hashed.
    Float(u64),
    /// An `i1` written `true`/`false`.
    Bool(bool),
}

/// The values of a dense elements attribute.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum DenseData {
    /// One value for every element (`dense<1.0>`).
    Splat(DenseElem),
    /// Every element in row-major order.
    Elements(Box<[DenseElem]>),
}

/// Whether `value` is a valid integer attribute of type `ty`: in the signed or unsigned range of an integer
/// type's width (`i1` also takes -1), within 64 bits for `index`.
pub fn int_fits(ty: &super::types::TypeKind, value: i128) -> bool {
    let width = match ty {
        super::types::TypeKind::Int(w) => *w,
        super::types::TypeKind::Index => 64,
        _ => return false,
    };
    if width >= 127 {
        return true;
    }
    let min = -(1i128 << (width - 1));
    let max = (1i128 << width) - 1;
    (min..=max).contains(&value) || (width == 1 && value == -1)
}

/// The structure of an attribute.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Attr {
    /// `42 : i64`; the value is kept sign-extended to 128 bits.
    Int {
        /// The value.
        value: i128,
        /// An integer or `index` type.
        ty: TypeId,
    },
    /// `1.5 : f32`; stored as `f64` bits (exact for every narrower format).
    Float {
        /// `f64::to_bits` of the value.
        bits: u64,
        /// A float type.
        ty: TypeId,
    },
    /// `"text"`.
    String(Box<str>),
    /// `unit`: presence is the information.
    Unit,
    /// `[a, b, ...]`.
    Array(Box<[AttrId]>),
    /// `{k = v, ...}`, sorted by key text.
    Dict(Box<[(Symbol, AttrId)]>),
    /// A type used as an attribute.
    Type(TypeId),
    /// `@root::@nested...`.
    SymbolRef {
        /// The outermost symbol.
        root: Symbol,
        /// Nested references, outermost first.
        nested: Box<[Symbol]>,
    },
    /// `dense<...> : tensor<...>`.
    Dense {
        /// The shaped type (a tensor).
        ty: TypeId,
        /// The values.
        data: DenseData,
    },
    /// `affine_map<(d0)[s0] -> (...)>`.
    AffineMap(AffineMap),
    /// An attribute of a dialect that is not registered: `#dialect.name<body>`, kept verbatim.
    Opaque {
        /// Full name, `dialect.name`.
        name: Symbol,
        /// The text between the angle brackets, if any.
        body: Option<Box<str>>,
    },
    /// An attribute a registered dialect parsed into its own structure.
    Dialect(DialectData),
}

impl Attr {
    /// The entries if this is a dictionary.
    pub fn as_dict(&self) -> Option<&[(Symbol, AttrId)]> {
        match self {
            Attr::Dict(entries) => Some(entries),
            _ => None,
        }
    }

    /// The value of an integer attribute.
    pub fn as_int(&self) -> Option<i128> {
        match self {
            Attr::Int { value, .. } => Some(*value),
            _ => None,
        }
    }

    /// The text of a string attribute.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Attr::String(s) => Some(s),
            _ => None,
        }
    }

    /// The type of a type attribute.
    pub fn as_type(&self) -> Option<TypeId> {
        match self {
            Attr::Type(t) => Some(*t),
            _ => None,
        }
    }
}
