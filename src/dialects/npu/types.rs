//! The types of the `npu` dialect: `!npu.buf<hbm, 32768 x bf16>`, a region of a chip's HBM (a kernel argument,
//! bound to an array by the harness), and `!npu.sem`, a timeline semaphore. On-chip operands are not values:
//! instructions name them by access patterns into the chip's memory spaces.

use crate::ir::dialect_data::{DialectData, DialectValue};
use crate::ir::registry::ItemError;
use crate::ir::{Context, Interners, TypeId, TypeKind};
use crate::machine::ElemType;
use std::fmt;
use std::sync::Arc;

/// A region of a chip's HBM: a number of elements of one type. `hbm` is chip 0's, `hbm@1` chip 1's.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BufType {
    /// The chip whose HBM holds it.
    pub chip: u64,
    /// Elements.
    pub len: u64,
    /// Their type.
    pub elem: ElemType,
}

impl BufType {
    /// Its size in bytes (the parser guarantees it fits `u64`).
    pub fn bytes(&self) -> u64 {
        self.len * self.elem.bytes()
    }

    /// Parses the body `hbm, 32768 x bf16` (or `hbm@1, ...` on chip 1).
    pub fn parse(body: &str) -> Result<BufType, ItemError> {
        let err = |m: String| ItemError::new(m);
        let (space, rest) = body.split_once(',').ok_or_else(|| err("expected '<hbm, N x type>'".into()))?;
        let (space, chip) = match space.trim().split_once('@') {
            Some((s, c)) => (s, c.trim().parse::<u64>().map_err(|_| err(format!("'{c}' is not a chip number")))?),
            None => (space.trim(), 0),
        };
        if space.trim() != "hbm" {
            return Err(err(format!(
                "'{}' is not a memory space a buffer can live in: buffers are HBM regions (on-chip operands are \
                 access patterns)",
                space.trim()
            )));
        }
        let (len, elem) = rest.split_once('x').ok_or_else(|| err("expected 'N x type' after 'hbm,'".into()))?;
        let len: u64 = len.trim().parse().map_err(|_| err(format!("'{}' is not an element count", len.trim())))?;
        let elem = elem_type(elem.trim())?;
        if len.checked_mul(elem.bytes()).is_none() {
            return Err(err(format!("{len} elements of {} do not fit in 2^64 bytes", elem_name(elem))));
        }
        Ok(BufType { chip, len, elem })
    }
}

/// The element type spelled `name`: `bf16`, `f16`, `f32`, `f8e4m3`, `i8`, `i32`.
pub fn elem_type(name: &str) -> Result<ElemType, ItemError> {
    Ok(match name {
        "bf16" => ElemType::Bf16,
        "f16" => ElemType::F16,
        "f32" => ElemType::F32,
        "f8e4m3" => ElemType::F8,
        "i8" => ElemType::I8,
        "i32" => ElemType::I32,
        other => {
            return Err(ItemError::new(format!("unknown element type '{other}' (bf16, f16, f32, f8e4m3, i8, i32)")))
        }
    })
}

/// The spelling of an element type.
pub fn elem_name(elem: ElemType) -> &'static str {
    match elem {
        ElemType::Bf16 => "bf16",
        ElemType::F16 => "f16",
        ElemType::F32 => "f32",
        ElemType::F8 => "f8e4m3",
        ElemType::I8 => "i8",
        ElemType::I32 => "i32",
    }
}

impl fmt::Display for BufType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.chip {
            0 => write!(f, "hbm, {} x {}", self.len, elem_name(self.elem)),
            chip => write!(f, "hbm@{chip}, {} x {}", self.len, elem_name(self.elem)),
        }
    }
}

impl DialectValue for BufType {
    fn name(&self) -> &str {
        "npu.buf"
    }

    fn print_body(&self) -> Option<String> {
        Some(self.to_string())
    }
}

/// The payload of `!npu.sem`.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct SemType;

impl DialectValue for SemType {
    fn name(&self) -> &str {
        "npu.sem"
    }

    fn print_body(&self) -> Option<String> {
        None
    }
}

/// The interned buffer type.
pub fn buf_type(ctx: &mut Interners, t: BufType) -> TypeId {
    ctx.ty(TypeKind::Dialect(DialectData(Arc::new(t))))
}

/// The interned `!npu.sem`.
pub fn sem_type(ctx: &mut Interners) -> TypeId {
    ctx.ty(TypeKind::Dialect(DialectData(Arc::new(SemType))))
}

/// The buffer type `ty` is, if it is one.
pub fn as_buf(ctx: &Context, ty: TypeId) -> Option<&BufType> {
    match ctx.type_kind(ty) {
        TypeKind::Dialect(d) => d.downcast::<BufType>(),
        _ => None,
    }
}
