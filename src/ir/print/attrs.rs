//! Printing of types, attributes and locations in MLIR's textual syntax.

use crate::ir::affine::AffineMap;
use crate::ir::attrs::{Attr, AttrId, DenseData, DenseElem};
use crate::ir::location::{Loc, LocData};
use crate::ir::types::{FloatKind, TypeId, TypeKind};
use crate::ir::Context;
use std::fmt::{self, Write};

use super::aliases::Aliases;

/// How types, attributes and locations are spelled: by the context alone, or with the aliases a whole-module
/// print defined (an aliased value is written as its alias name, except in its own definition).
#[derive(Copy, Clone)]
pub struct Spelling<'c> {
    ctx: &'c Context,
    aliases: Option<&'c Aliases>,
}

/// Writes `ty` as it is spelled in the IR.
pub fn write_type(ctx: &Context, out: &mut dyn Write, ty: TypeId) -> fmt::Result {
    Spelling::plain(ctx).ty(out, ty)
}

/// Writes `t1, t2, ...`.
pub fn write_type_list(ctx: &Context, out: &mut dyn Write, types: &[TypeId]) -> fmt::Result {
    Spelling::plain(ctx).type_list(out, types)
}

/// Writes `(inputs) -> results`, parenthesizing the results unless there is exactly one non-function type.
pub fn write_function_type(ctx: &Context, out: &mut dyn Write, inputs: &[TypeId], results: &[TypeId]) -> fmt::Result {
    Spelling::plain(ctx).function_type(out, inputs, results)
}

/// Writes a result type list as it follows `->`.
pub fn write_result_types(ctx: &Context, out: &mut dyn Write, results: &[TypeId]) -> fmt::Result {
    Spelling::plain(ctx).result_types(out, results)
}

/// Writes `attr` as it is spelled in the IR (with its `: type` where the syntax needs one).
pub fn write_attr(ctx: &Context, out: &mut dyn Write, attr: AttrId) -> fmt::Result {
    Spelling::plain(ctx).attr(out, attr)
}

/// Writes a dictionary `{a = 1 : i64, b}`, leaving out the keys in `elide`. Unit values print as the bare key.
pub fn write_dict(ctx: &Context, out: &mut dyn Write, dict: AttrId, elide: &[&str]) -> fmt::Result {
    Spelling::plain(ctx).dict(out, dict, elide)
}

/// Writes the inside of `loc(...)`.
pub fn write_loc(ctx: &Context, out: &mut dyn Write, loc: Loc) -> fmt::Result {
    Spelling::plain(ctx).loc(out, loc)
}

fn write_dialect_item(out: &mut dyn Write, sigil: char, name: &str, body: Option<&str>) -> fmt::Result {
    out.write_char(sigil)?;
    out.write_str(name)?;
    if let Some(body) = body {
        write!(out, "<{body}>")?;
    }
    Ok(())
}

fn write_affine_map(out: &mut dyn Write, map: &AffineMap) -> fmt::Result {
    write!(out, "affine_map<{map}>")
}

fn float_kind(ctx: &Context, ty: TypeId) -> FloatKind {
    match ctx.type_kind(ty) {
        TypeKind::Float(k) => *k,
        _ => FloatKind::F64,
    }
}

/// True if `s` can be written without quotes as a dictionary key or symbol name.
pub fn is_bare_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '.'))
}

fn write_key(out: &mut dyn Write, key: &str) -> fmt::Result {
    if is_bare_identifier(key) {
        out.write_str(key)
    } else {
        write_string(out, key)
    }
}

/// Writes `@name`, quoting the name when it is not a bare identifier.
pub fn write_symbol_name(out: &mut dyn Write, name: &str) -> fmt::Result {
    out.write_char('@')?;
    write_key(out, name)
}

/// Writes a string literal with MLIR's escapes (`\"`, `\\`, and `\XX` for other non-printable bytes).
pub fn write_string(out: &mut dyn Write, s: &str) -> fmt::Result {
    out.write_char('"')?;
    for b in s.bytes() {
        match b {
            b'"' => out.write_str("\\\"")?,
            b'\\' => out.write_str("\\\\")?,
            0x20..=0x7e => out.write_char(b as char)?,
            _ => write!(out, "\\{b:02X}")?,
        }
    }
    out.write_char('"')
}

fn write_dense_nested(out: &mut dyn Write, elems: &[DenseElem], shape: &[u64], fk: FloatKind) -> fmt::Result {
    let Some((&outer, inner)) = shape.split_first() else {
        return elems.first().map_or(Ok(()), |e| write_dense_elem(out, *e, fk));
    };
    let stride = inner.iter().product::<u64>() as usize;
    out.write_str("[")?;
    for i in 0..outer as usize {
        if i > 0 {
            out.write_str(", ")?;
        }
        let chunk = elems.get(i * stride..(i + 1) * stride).unwrap_or(&[]);
        write_dense_nested(out, chunk, inner, fk)?;
    }
    out.write_str("]")
}

fn write_dense_elem(out: &mut dyn Write, e: DenseElem, fk: FloatKind) -> fmt::Result {
    match e {
        DenseElem::Int(v) => write!(out, "{v}"),
        DenseElem::Bool(b) => out.write_str(if b { "true" } else { "false" }),
        DenseElem::Float(bits) => out.write_str(&format_float(f64::from_bits(bits), fk)),
    }
}

/// Formats a float the way MLIR does: `1.500000e+00` when six digits are exact for the type, otherwise the
/// shortest decimal that reads back to the same value, and non-finite values as the type's bit pattern in hex.
pub fn format_float(v: f64, kind: FloatKind) -> String {
    if !v.is_finite() {
        return format!("0x{:X}", nonfinite_bits(v, kind));
    }
    let short = format!("{v:.6e}");
    if round_trips(&short, v, kind) {
        return mlir_exponent(&short);
    }
    let shortest = match kind {
        FloatKind::F64 => format!("{v:e}"),
        _ => format!("{:e}", v as f32),
    };
    let (mantissa, exp) = shortest.split_once('e').unwrap_or((&shortest, "0"));
    let mantissa = if mantissa.contains('.') { mantissa.to_string() } else { format!("{mantissa}.0") };
    mlir_exponent(&format!("{mantissa}e{exp}"))
}

fn round_trips(text: &str, v: f64, kind: FloatKind) -> bool {
    let Ok(back) = text.parse::<f64>() else { return false };
    match kind {
        FloatKind::F64 => back == v,
        FloatKind::F32 => back as f32 == v as f32,
        FloatKind::F16 | FloatKind::BF16 => {
            crate::ir::float_bits::round_to(kind, back) == crate::ir::float_bits::round_to(kind, v)
        }
    }
}

fn mlir_exponent(text: &str) -> String {
    let (mantissa, exp) = text.split_once('e').unwrap_or((text, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let sign = if exp < 0 { '-' } else { '+' };
    format!("{mantissa}e{sign}{:02}", exp.abs())
}

fn nonfinite_bits(v: f64, kind: FloatKind) -> u64 {
    match kind {
        FloatKind::F64 => v.to_bits(),
        FloatKind::F32 => (v as f32).to_bits() as u64,
        FloatKind::F16 | FloatKind::BF16 => crate::ir::float_bits::to_bits(kind, v),
    }
}

impl<'c> Spelling<'c> {
    /// Spelling without aliases.
    pub fn plain(ctx: &'c Context) -> Self {
        Spelling { ctx, aliases: None }
    }

    /// Spelling that writes the values `aliases` names by their alias.
    pub fn with_aliases(ctx: &'c Context, aliases: &'c Aliases) -> Self {
        Spelling { ctx, aliases: Some(aliases) }
    }

    /// Writes `ty`, or its alias.
    pub fn ty(self, out: &mut dyn Write, ty: TypeId) -> fmt::Result {
        match self.aliases.and_then(|a| a.type_name(ty)) {
            Some(name) => out.write_str(name),
            None => self.type_body(out, ty),
        }
    }

    /// Writes `attr`, or its alias.
    pub fn attr(self, out: &mut dyn Write, attr: AttrId) -> fmt::Result {
        match self.aliases.and_then(|a| a.attr_name(attr)) {
            Some(name) => out.write_str(name),
            None => self.attr_body(out, attr),
        }
    }

    /// Writes the inside of `loc(...)`, or the location's alias.
    pub fn loc(self, out: &mut dyn Write, loc: Loc) -> fmt::Result {
        match self.aliases.and_then(|a| a.loc_name(loc)) {
            Some(name) => out.write_str(name),
            None => self.loc_body(out, loc),
        }
    }

    /// Writes the structure of `ty` (its children by alias).
    pub fn type_body(self, out: &mut dyn Write, ty: TypeId) -> fmt::Result {
        let ctx = self.ctx;
        match ctx.type_kind(ty) {
            TypeKind::Int(w) => write!(out, "i{w}"),
            TypeKind::Index => out.write_str("index"),
            TypeKind::Float(k) => out.write_str(k.keyword()),
            TypeKind::None => out.write_str("none"),
            TypeKind::Tensor { shape, elem, encoding } => {
                out.write_str("tensor<")?;
                for d in shape.iter() {
                    write!(out, "{d}x")?;
                }
                self.ty(out, *elem)?;
                if let Some(enc) = encoding {
                    out.write_str(", ")?;
                    self.attr(out, *enc)?;
                }
                out.write_str(">")
            }
            TypeKind::Function { inputs, results } => self.function_type(out, inputs, results),
            TypeKind::Tuple(elems) => {
                out.write_str("tuple<")?;
                self.type_list(out, elems)?;
                out.write_str(">")
            }
            TypeKind::Opaque { name, body } => write_dialect_item(out, '!', ctx.str(*name), body.as_deref()),
            TypeKind::Dialect(data) => write_dialect_item(out, '!', data.0.name(), data.0.print_body().as_deref()),
        }
    }

    /// Writes `t1, t2, ...`.
    pub fn type_list(self, out: &mut dyn Write, types: &[TypeId]) -> fmt::Result {
        for (i, &t) in types.iter().enumerate() {
            if i > 0 {
                out.write_str(", ")?;
            }
            self.ty(out, t)?;
        }
        Ok(())
    }

    /// Writes `(inputs) -> results`, parenthesizing the results unless there is exactly one non-function type.
    pub fn function_type(self, out: &mut dyn Write, inputs: &[TypeId], results: &[TypeId]) -> fmt::Result {
        out.write_str("(")?;
        self.type_list(out, inputs)?;
        out.write_str(") -> ")?;
        self.result_types(out, results)
    }

    /// Writes a result type list as it follows `->`.
    pub fn result_types(self, out: &mut dyn Write, results: &[TypeId]) -> fmt::Result {
        let ctx = self.ctx;
        let bare = results.len() == 1 && !matches!(ctx.type_kind(results[0]), TypeKind::Function { .. });
        if bare {
            return self.ty(out, results[0]);
        }
        out.write_str("(")?;
        self.type_list(out, results)?;
        out.write_str(")")
    }

    /// Writes the structure of `attr` (its children by alias), with its `: type` where the syntax needs one.
    pub fn attr_body(self, out: &mut dyn Write, attr: AttrId) -> fmt::Result {
        let ctx = self.ctx;
        match ctx.attr_data(attr) {
            Attr::Int { value, ty } => {
                if matches!(ctx.type_kind(*ty), TypeKind::Int(1)) {
                    return out.write_str(if *value != 0 { "true" } else { "false" });
                }
                write!(out, "{value} : ")?;
                self.ty(out, *ty)
            }
            Attr::Float { bits, ty } => {
                out.write_str(&format_float(f64::from_bits(*bits), float_kind(ctx, *ty)))?;
                out.write_str(" : ")?;
                self.ty(out, *ty)
            }
            Attr::String(s) => write_string(out, s),
            Attr::Unit => out.write_str("unit"),
            Attr::Array(items) => {
                out.write_str("[")?;
                for (i, &a) in items.iter().enumerate() {
                    if i > 0 {
                        out.write_str(", ")?;
                    }
                    self.attr(out, a)?;
                }
                out.write_str("]")
            }
            Attr::Dict(_) => self.dict(out, attr, &[]),
            Attr::Type(t) => self.ty(out, *t),
            Attr::SymbolRef { root, nested } => {
                write_symbol_name(out, ctx.str(*root))?;
                for n in nested.iter() {
                    out.write_str("::")?;
                    write_symbol_name(out, ctx.str(*n))?;
                }
                Ok(())
            }
            Attr::Dense { ty, data } => self.dense(out, *ty, data),
            Attr::AffineMap(map) => write_affine_map(out, map),
            Attr::Opaque { name, body } => write_dialect_item(out, '#', ctx.str(*name), body.as_deref()),
            Attr::Dialect(data) => write_dialect_item(out, '#', data.0.name(), data.0.print_body().as_deref()),
        }
    }

    /// Writes a dictionary `{a = 1 : i64, b}`, leaving out the keys in `elide`. Unit values print as the bare key.
    pub fn dict(self, out: &mut dyn Write, dict: AttrId, elide: &[&str]) -> fmt::Result {
        let ctx = self.ctx;
        out.write_str("{")?;
        let mut first = true;
        for &(key, value) in ctx.dict_entries(dict) {
            let key = ctx.str(key);
            if elide.contains(&key) {
                continue;
            }
            if !first {
                out.write_str(", ")?;
            }
            first = false;
            write_key(out, key)?;
            if *ctx.attr_data(value) != Attr::Unit {
                out.write_str(" = ")?;
                self.attr(out, value)?;
            }
        }
        out.write_str("}")
    }

    /// Writes `dense<...> : type`.
    fn dense(self, out: &mut dyn Write, ty: TypeId, data: &DenseData) -> fmt::Result {
        let ctx = self.ctx;
        let (shape, kind) = match ctx.type_kind(ty) {
            TypeKind::Tensor { shape, elem, .. } => (shape.clone(), ctx.type_kind(*elem).clone()),
            _ => (Box::from([]), TypeKind::None),
        };
        let fk = match kind {
            TypeKind::Float(k) => k,
            _ => FloatKind::F64,
        };
        out.write_str("dense<")?;
        match data {
            DenseData::Splat(e) => write_dense_elem(out, *e, fk)?,
            DenseData::Elements(elems) => write_dense_nested(out, elems, &shape, fk)?,
        }
        out.write_str("> : ")?;
        self.ty(out, ty)
    }

    /// Writes the structure of `loc` (its children by alias).
    pub fn loc_body(self, out: &mut dyn Write, loc: Loc) -> fmt::Result {
        let ctx = self.ctx;
        match loc {
            Loc::Unknown => out.write_str("unknown"),
            Loc::Source { file, offset } => {
                let f = ctx.sources.file(file);
                let lc = f.line_col(offset);
                write_string(out, &f.name)?;
                write!(out, ":{}:{}", lc.line, lc.col)
            }
            Loc::Id(id) => match &ctx.locs[id] {
                LocData::FileLineCol { file, line, col } => {
                    write_string(out, ctx.str(*file))?;
                    write!(out, ":{line}:{col}")
                }
                LocData::Name { name, child } => {
                    write_string(out, ctx.str(*name))?;
                    match child {
                        Some(c) => {
                            out.write_str("(")?;
                            self.loc(out, *c)?;
                            out.write_str(")")
                        }
                        None => Ok(()),
                    }
                }
                LocData::Fused { locs, metadata } => {
                    out.write_str("fused")?;
                    if let Some(m) = metadata {
                        out.write_str("<")?;
                        self.attr(out, *m)?;
                        out.write_str(">")?;
                    }
                    out.write_str("[")?;
                    for (i, l) in locs.iter().enumerate() {
                        if i > 0 {
                            out.write_str(", ")?;
                        }
                        self.loc(out, *l)?;
                    }
                    out.write_str("]")
                }
                LocData::CallSite { callee, caller } => {
                    out.write_str("callsite(")?;
                    self.loc(out, *callee)?;
                    out.write_str(" at ")?;
                    self.loc(out, *caller)?;
                    out.write_str(")")
                }
            },
        }
    }
}

/// A type as a string (for diagnostics).
pub fn type_to_string(ctx: &Context, ty: TypeId) -> String {
    let mut s = String::new();
    let _ = write_type(ctx, &mut s, ty);
    s
}

/// An attribute as a string (for diagnostics).
pub fn attr_to_string(ctx: &Context, attr: AttrId) -> String {
    let mut s = String::new();
    let _ = write_attr(ctx, &mut s, attr);
    s
}
