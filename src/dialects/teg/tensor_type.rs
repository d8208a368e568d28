//! `!teg.tensor<[batch=10, in=2] x f32>`: a TEG tensor type, with named dimensions (Tapestry's dimension name
//! maps) and an element type; and `!teg.token`, the type of what sinks and sequence points produce (ordering, no
//! data).

use crate::array::{fits, DType};
use crate::ir::dialect_data::{DialectData, DialectValue};
use crate::ir::registry::ItemError;
use crate::ir::{Context, Interners, TypeId, TypeKind};
use std::fmt;
use std::hash::Hash;
use std::sync::Arc;

/// A tensor type: named dimensions (unique names) and an element type. Rank 0 is `[]`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TensorType {
    /// `(name, extent)` per dimension, in order.
    pub dims: Vec<(String, u64)>,
    /// The element type.
    pub dtype: DType,
}

impl TensorType {
    /// The extents.
    pub fn shape(&self) -> Vec<u64> {
        self.dims.iter().map(|d| d.1).collect()
    }

    /// The dimension names.
    pub fn names(&self) -> Vec<&str> {
        self.dims.iter().map(|d| d.0.as_str()).collect()
    }

    /// The position of dimension `name`.
    pub fn position(&self, name: &str) -> Option<usize> {
        self.dims.iter().position(|d| d.0 == name)
    }

    /// Number of elements.
    pub fn size(&self) -> u64 {
        self.dims.iter().map(|d| d.1).product()
    }

    /// Parses the body `[batch=10, in=2] x f32`.
    pub fn parse(body: &str) -> Result<TensorType, ItemError> {
        let err = |msg: String, at: usize| ItemError { message: msg, offset: Some(at) };
        let open = body.find('[').ok_or_else(|| err("expected '[' opening the dimensions".into(), 0))?;
        if !body[..open].trim().is_empty() {
            return Err(err("expected '[' opening the dimensions".into(), 0));
        }
        let close = body.find(']').ok_or_else(|| err("expected ']' closing the dimensions".into(), open))?;
        let mut dims: Vec<(String, u64)> = Vec::new();
        let inner = &body[open + 1..close];
        let mut at = open + 1;
        for part in inner.split(',') {
            let here = at + (part.len() - part.trim_start().len());
            at += part.len() + 1;
            if part.trim().is_empty() && inner.trim().is_empty() {
                break;
            }
            let (name, extent) = part
                .split_once('=')
                .ok_or_else(|| err(format!("expected 'name=extent', found '{}'", part.trim()), here))?;
            let name = name.trim();
            if !is_identifier(name) {
                return Err(err(format!("'{name}' is not a dimension name"), here));
            }
            let extent: u64 = extent.trim().parse().map_err(|_| {
                err(format!("dimension {name} needs a non-negative extent, found '{}'", extent.trim()), here)
            })?;
            if dims.iter().any(|d| d.0 == name) {
                return Err(err(format!("dimension name '{name}' appears twice"), here));
            }
            if extent > i64::MAX as u64 {
                return Err(err(format!("dimension {name} has extent {extent}, more than 2^63-1"), here));
            }
            dims.push((name.to_string(), extent));
        }
        let rest = body[close + 1..].trim_start();
        let rest_at = body.len() - rest.len();
        let elem = rest
            .strip_prefix('x')
            .map(str::trim)
            .ok_or_else(|| err("expected 'x' and an element type".into(), rest_at))?;
        let dtype = DType::from_name(elem).ok_or_else(|| {
            err(format!("unknown element type '{elem}' (f32, f64, bf16, f16, i8, i32, i64, i1)"), rest_at)
        })?;
        if !fits(&dims.iter().map(|d| d.1).collect::<Vec<_>>(), dtype.size()) {
            return Err(err("the tensor's non-zero extents take more than 2^63-1 bytes".into(), open));
        }
        Ok(TensorType { dims, dtype })
    }
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl fmt::Display for TensorType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dims: Vec<String> = self.dims.iter().map(|(n, e)| format!("{n}={e}")).collect();
        write!(f, "[{}] x {}", dims.join(", "), self.dtype)
    }
}

impl DialectValue for TensorType {
    fn name(&self) -> &str {
        "teg.tensor"
    }

    fn print_body(&self) -> Option<String> {
        Some(self.to_string())
    }
}

/// The payload of `!teg.token`.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct TokenType;

impl DialectValue for TokenType {
    fn name(&self) -> &str {
        "teg.token"
    }

    fn print_body(&self) -> Option<String> {
        None
    }
}

/// The interned tensor type.
pub fn tensor_type(ctx: &mut Interners, t: TensorType) -> TypeId {
    ctx.ty(TypeKind::Dialect(DialectData(Arc::new(t))))
}

/// The interned `!teg.token`.
pub fn token_type(ctx: &mut Context) -> TypeId {
    ctx.ty(TypeKind::Dialect(DialectData(Arc::new(TokenType))))
}

/// The tensor type `ty` is, if it is one.
pub fn as_tensor(ctx: &Context, ty: TypeId) -> Option<&TensorType> {
    match ctx.type_kind(ty) {
        TypeKind::Dialect(d) => d.downcast::<TensorType>(),
        _ => None,
    }
}

/// Whether `ty` is `!teg.token`.
pub fn is_token(ctx: &Context, ty: TypeId) -> bool {
    matches!(ctx.type_kind(ty), TypeKind::Dialect(d) if d.downcast::<TokenType>().is_some())
}
