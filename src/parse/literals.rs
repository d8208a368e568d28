//! Grammar actions for literals: types, attributes (numbers, strings, dictionaries, dense elements, symbol
//! references, dialect attributes) and affine maps, with the range and shape checks MLIR performs.

use super::state::ParseState;
use crate::ir::entity::EntityId;
use crate::ir::float_bits;
use crate::ir::{
    AffineExpr, AffineMap, AffineOp, Attr, AttrId, Context, DenseData, DenseElem, DialectInfo, FloatKind, Symbol,
    TypeId, TypeKind,
};

/// A dictionary key as written.
pub enum KeyText<'s> {
    /// A bare identifier.
    Bare(&'s str),
    /// A quoted string (with its offset, for escape errors).
    Quoted(&'s str, usize),
}

/// The body of `dense<...>` before its type is known.
pub enum DenseTree<'s> {
    /// `[...]`.
    List(Vec<DenseTree<'s>>),
    /// An integer, negated if the flag is set.
    Int(&'s str, bool, usize),
    /// A float, negated if the flag is set.
    Float(&'s str, bool, usize),
    /// `true` / `false`.
    Bool(bool),
    /// `"0x..."`: packed little-endian element bytes.
    Hex(&'s str, usize),
}

/// An affine expression before its names are bound to dimensions and symbols.
pub enum AffineAst<'s> {
    /// An integer literal.
    Int(&'s str, usize),
    /// A dimension or symbol name.
    Name(&'s str, usize),
    /// `-e`, and the depth of the tree.
    Neg(Box<AffineAst<'s>>, u32),
    /// `a - b`, and the depth of the tree.
    Sub(Box<AffineAst<'s>>, Box<AffineAst<'s>>, u32),
    /// A binary operation, and the depth of the tree.
    Bin(AffineOp, Box<AffineAst<'s>>, Box<AffineAst<'s>>, u32),
    /// An expression whose operators nest deeper than [`MAX_AFFINE_DEPTH`], cut off there (at the offset of its
    /// first token): it is an error, and the tree never grows past the limit, so that no walk of it, and no drop,
    /// recurses deeper.
    TooDeep(usize),
}

/// The deepest affine expression read: operators nest (`d0 + d0 + ...` nests one level per `+`, as MLIR's tree
/// does) at most this deep, so that every recursive walk of the expression is bounded.
pub const MAX_AFFINE_DEPTH: u32 = 1000;

impl<'s> AffineAst<'s> {
    /// `a + b`.
    pub fn plus(a: Self, b: Self) -> Self {
        Self::bin(AffineOp::Add, a, b)
    }
    /// `a - b`.
    pub fn minus(a: Self, b: Self) -> Self {
        match Self::nest(&[&a, &b]) {
            Ok(depth) => AffineAst::Sub(Box::new(a), Box::new(b), depth),
            Err(at) => AffineAst::TooDeep(at),
        }
    }
    /// `a op b`.
    pub fn bin(op: AffineOp, a: Self, b: Self) -> Self {
        match Self::nest(&[&a, &b]) {
            Ok(depth) => AffineAst::Bin(op, Box::new(a), Box::new(b), depth),
            Err(at) => AffineAst::TooDeep(at),
        }
    }
    /// `-a`.
    pub fn negated(a: Self) -> Self {
        match Self::nest(&[&a]) {
            Ok(depth) => AffineAst::Neg(Box::new(a), depth),
            Err(at) => AffineAst::TooDeep(at),
        }
    }

    /// The depth of a node over `children`, or the offset to report when it would pass the limit.
    fn nest(children: &[&Self]) -> Result<u32, usize> {
        let depth = 1 + children.iter().map(|c| c.depth()).max().unwrap_or(0);
        match children.iter().find_map(|c| c.too_deep()) {
            Some(at) => Err(at),
            None if depth > MAX_AFFINE_DEPTH => Err(affine_offset(children[0])),
            None => Ok(depth),
        }
    }

    fn depth(&self) -> u32 {
        match self {
            AffineAst::Neg(_, d) | AffineAst::Sub(_, _, d) | AffineAst::Bin(_, _, _, d) => *d,
            _ => 1,
        }
    }

    fn too_deep(&self) -> Option<usize> {
        match self {
            AffineAst::TooDeep(at) => Some(*at),
            _ => None,
        }
    }
}

/// `(dims)[syms] -> (results)` before binding.
pub struct AffineMapAst<'s> {
    /// Dimension names.
    pub dims: Vec<&'s str>,
    /// Symbol names.
    pub syms: Vec<&'s str>,
    /// Result expressions.
    pub results: Vec<AffineAst<'s>>,
}

/// Decodes a quoted string literal (with quotes) and its escapes: `\"`, `\\`, `\n`, `\t`, and `\XX` hex bytes.
pub fn unescape(quoted: &str) -> Result<String, String> {
    let inner = &quoted.as_bytes()[1..quoted.len() - 1];
    let mut bytes = Vec::with_capacity(inner.len());
    let mut i = 0;
    while i < inner.len() {
        if inner[i] != b'\\' {
            bytes.push(inner[i]);
            i += 1;
            continue;
        }
        let next = *inner.get(i + 1).ok_or("unterminated escape in string")?;
        match next {
            b'"' | b'\\' => bytes.push(next),
            b'n' => bytes.push(b'\n'),
            b't' => bytes.push(b'\t'),
            h if h.is_ascii_hexdigit() => {
                let lo =
                    *inner.get(i + 2).filter(|c| c.is_ascii_hexdigit()).ok_or("invalid escape sequence in string")?;
                let text = [h, lo];
                bytes.push(u8::from_str_radix(std::str::from_utf8(&text).unwrap(), 16).unwrap());
                i += 1;
            }
            _ => return Err("unknown escape in string literal".into()),
        }
        i += 2;
    }
    String::from_utf8(bytes).map_err(|_| "string literal is not valid UTF-8".to_string())
}

fn parse_u128(text: &str) -> Option<u128> {
    match text.strip_prefix("0x") {
        Some(hex) => u128::from_str_radix(hex, 16).ok(),
        None => text.parse().ok(),
    }
}

impl<'s> ParseState<'s, '_> {
    // ----- types -----

    /// `iN`.
    pub fn int_type(&mut self, text: &str, offset: usize) -> TypeId {
        match text[1..].parse::<u32>() {
            Ok(w) if (1..=1024).contains(&w) => self.ctx.int_type(w),
            _ => {
                self.error(offset, format!("invalid integer width in '{text}' (expected 1 to 1024)"));
                self.ctx.int_type(32)
            }
        }
    }

    /// `f32` etc.
    pub fn float_type(&mut self, text: &str) -> TypeId {
        let kind = FloatKind::from_keyword(text).expect("lexer only produces known float keywords");
        self.ctx.float_type(kind)
    }

    /// `index`.
    pub fn index_type(&mut self) -> TypeId {
        self.ctx.index_type()
    }

    /// `none`.
    pub fn none_type(&mut self) -> TypeId {
        self.ctx.none_type()
    }

    /// A function type from a parsed signature.
    pub fn function_type(&mut self, sig: (Vec<TypeId>, Vec<TypeId>)) -> TypeId {
        self.ctx.function_type(&sig.0, &sig.1)
    }

    /// `tuple<...>`.
    pub fn tuple_type(&mut self, elems: Vec<TypeId>) -> TypeId {
        self.ctx.ty(TypeKind::Tuple(elems.into()))
    }

    /// `tensor<dims x elem, encoding>`.
    pub fn tensor_type(
        &mut self,
        dims: Option<&'s str>,
        elem: TypeId,
        encoding: Option<AttrId>,
        offset: usize,
    ) -> TypeId {
        let key = (dims.unwrap_or(""), elem, encoding);
        if let Some(&t) = self.tensor_cache().get(&key) {
            return t;
        }
        let mut shape = Vec::new();
        for d in dims.unwrap_or("").split('x').filter(|d| !d.is_empty()) {
            match d.parse::<u64>() {
                Ok(n) => shape.push(n),
                Err(_) => self.error(offset, format!("invalid dimension '{d}'")),
            }
        }
        if matches!(self.ctx.type_kind(elem), TypeKind::Function { .. } | TypeKind::Tensor { .. }) {
            self.error(offset, "invalid tensor element type");
        }
        let ty = self.ctx.ty(TypeKind::Tensor { shape: shape.into(), elem, encoding });
        self.tensor_cache().insert(key, ty);
        ty
    }

    /// `!alias`, `!dialect.name` or `!dialect.name<body>`.
    pub fn bang_type(&mut self, token: &'s str, offset: usize) -> TypeId {
        let (name, body) = split_dialect_token(&token[1..]);
        if !name.contains('.') && body.is_none() {
            return match self.type_aliases.get(name) {
                Some(&t) => t,
                None => {
                    self.error(offset, format!("undefined symbol alias id '{name}'"));
                    self.ctx.none_type()
                }
            };
        }
        self.dialect_item(&TYPE_ITEMS, name, body, offset)
    }

    /// `!name = type`.
    pub fn define_type_alias(&mut self, token: &'s str, ty: TypeId, offset: usize) {
        if let Err(message) = self.ctx.type_footprint(ty).check_alias() {
            self.error(offset, message);
        } else if self.type_aliases.insert(&token[1..], ty).is_some() {
            self.error(offset, format!("redefinition of type alias id '{}'", &token[1..]));
        }
    }

    // ----- attributes -----

    /// An integer literal, with an optional type (default `i64`).
    pub fn int_attr(&mut self, text: &str, negative: bool, ty: Option<TypeId>, offset: usize) -> AttrId {
        let ty = ty.unwrap_or_else(|| self.ctx.int_type(64));
        if let TypeKind::Float(_) = self.ctx.type_kind(ty) {
            self.error(offset, "unexpected decimal integer literal for a floating point value");
            return self.ctx.empty_dict();
        }
        let Some(magnitude) = parse_u128(text) else {
            self.error(offset, "integer constant out of range");
            return self.ctx.empty_dict();
        };
        let value = if negative { -(magnitude as i128) } else { magnitude as i128 };
        if !self.int_fits(value, ty) {
            self.error(offset, "integer constant out of range for attribute");
        }
        self.ctx.int_attr(value, ty)
    }

    fn int_fits(&self, value: i128, ty: TypeId) -> bool {
        crate::ir::attrs::int_fits(self.ctx.type_kind(ty), value)
    }

    /// `0x...`: an integer, or the bit pattern of a float when the type is a float type.
    pub fn hex_attr(&mut self, text: &str, ty: Option<TypeId>, offset: usize) -> AttrId {
        let ty = ty.unwrap_or_else(|| self.ctx.int_type(64));
        match *self.ctx.type_kind(ty) {
            TypeKind::Float(kind) => {
                let Some(bits) = parse_u128(text).and_then(|b| u64::try_from(b).ok()) else {
                    self.error(offset, "hexadecimal float constant out of range");
                    return self.ctx.empty_dict();
                };
                if kind.width() < 64 && bits >> kind.width() != 0 {
                    self.error(offset, "hexadecimal float constant out of range for type");
                }
                let value = float_bits::from_bits(kind, bits);
                self.ctx.attr(Attr::Float { bits: value.to_bits(), ty })
            }
            _ => self.int_attr(text, false, Some(ty), offset),
        }
    }

    /// A float literal, with an optional type (default `f64`).
    pub fn float_attr(&mut self, text: &str, negative: bool, ty: Option<TypeId>, offset: usize) -> AttrId {
        let ty = ty.unwrap_or_else(|| self.ctx.float_type(FloatKind::F64));
        let TypeKind::Float(kind) = *self.ctx.type_kind(ty) else {
            self.error(offset, "floating point value not valid for specified type");
            return self.ctx.empty_dict();
        };
        let v: f64 = text.parse().unwrap_or(0.0);
        let v = float_bits::round_to(kind, if negative { -v } else { v });
        self.ctx.attr(Attr::Float { bits: v.to_bits(), ty })
    }

    /// A string literal.
    pub fn string_attr(&mut self, quoted: &str, offset: usize) -> AttrId {
        match unescape(quoted) {
            Ok(s) => self.ctx.string_attr(&s),
            Err(e) => {
                self.error(offset, e);
                self.ctx.string_attr("")
            }
        }
    }

    /// `true` / `false`: an `i1` integer, as in MLIR.
    pub fn bool_attr(&mut self, value: bool) -> AttrId {
        let i1 = self.ctx.int_type(1);
        self.ctx.int_attr(value as i128, i1)
    }

    /// `unit`.
    pub fn unit_attr(&mut self) -> AttrId {
        self.ctx.attr(Attr::Unit)
    }

    /// `[...]`.
    pub fn array_attr(&mut self, items: Vec<AttrId>) -> AttrId {
        self.ctx.attr(Attr::Array(items.into()))
    }

    /// A type used as an attribute.
    pub fn type_attr(&mut self, ty: TypeId) -> AttrId {
        self.ctx.type_attr(ty)
    }

    fn symbol_text(&mut self, token: &str, offset: usize) -> String {
        let text = &token[1..];
        if text.starts_with('"') {
            unescape(text).unwrap_or_else(|e| {
                self.error(offset, e);
                String::new()
            })
        } else {
            text.to_string()
        }
    }

    /// `@root::@nested`.
    pub fn symbol_ref(&mut self, root: &str, nested: Vec<&str>, offset: usize) -> AttrId {
        let root = self.symbol_text(root, offset);
        let root = self.ctx.sym(&root);
        let nested: Vec<_> = nested
            .into_iter()
            .map(|n| {
                let t = self.symbol_text(n, offset);
                self.ctx.sym(&t)
            })
            .collect();
        self.ctx.attr(Attr::SymbolRef { root, nested: nested.into() })
    }

    /// `{k = v, ...}`.
    pub fn dict(&mut self, entries: Vec<(KeyText<'s>, Option<AttrId>)>, offset: usize) -> AttrId {
        let mut out = Vec::with_capacity(entries.len());
        let mut seen = std::collections::HashSet::with_capacity(entries.len());
        for (key, value) in entries {
            let key = match key {
                KeyText::Bare(k) => k.to_string(),
                KeyText::Quoted(q, off) => unescape(q).unwrap_or_else(|e| {
                    self.error(off, e);
                    String::new()
                }),
            };
            let sym = self.ctx.sym(&key);
            if !seen.insert(sym) {
                self.error(offset, format!("duplicate key '{key}' in dictionary attribute"));
                continue;
            }
            let value = value.unwrap_or_else(|| self.unit_attr());
            out.push((sym, value));
        }
        self.ctx.dict_attr(out)
    }

    /// `#alias`, `#dialect.name` or `#dialect.name<body>`.
    pub fn hash_attr(&mut self, token: &'s str, offset: usize) -> AttrId {
        let (name, body) = split_dialect_token(&token[1..]);
        if !name.contains('.') && body.is_none() {
            return match self.attr_aliases.get(name) {
                Some(&a) => a,
                None => {
                    self.error(offset, format!("undefined symbol alias id '{name}'"));
                    self.ctx.empty_dict()
                }
            };
        }
        self.dialect_item(&ATTR_ITEMS, name, body, offset)
    }

    /// A dialect type or attribute: parsed by its dialect, kept opaque for an unregistered dialect (with the flag).
    /// Each distinct spelling is parsed once; a repeat takes the first one's value or error.
    fn dialect_item<T: EntityId>(
        &mut self,
        kind: &DialectItems<T>,
        name: &'s str,
        body: Option<&'s str>,
        offset: usize,
    ) -> T {
        let dialect = crate::ir::registry::dialect_of(name);
        let parser = self.ctx.registry.dialect(dialect).map(kind.parser);
        match parser {
            Some(Some(parse)) => {
                let key = (kind.sigil, name, body);
                let parsed = match self.dialect_item_cache().get(&key) {
                    Some(parsed) => parsed.clone(),
                    None => {
                        let parsed = parse(self.ctx, name, body).map(|item| item.index());
                        self.dialect_item_cache().insert(key, parsed.clone());
                        parsed
                    }
                };
                parsed.map(T::from_index).unwrap_or_else(|e| {
                    // The body starts after the sigil, the name and `<`.
                    let at = e.offset.map_or(offset, |o| offset + name.len() + 2 + o);
                    self.error(at, e.message);
                    (kind.fallback)(self.ctx)
                })
            }
            Some(None) => {
                self.error(offset, format!("dialect '{dialect}' defines no {} '{name}'", kind.noun));
                (kind.fallback)(self.ctx)
            }
            None => {
                if !self.ctx.allow_unregistered {
                    let msg = format!(
                        "{} '{}{name}' is in an unregistered dialect; use --allow-unregistered-dialect to accept it",
                        kind.noun, kind.sigil
                    );
                    self.error(offset, msg);
                }
                let name = self.ctx.sym(name);
                (kind.opaque)(self.ctx, name, body.map(Into::into))
            }
        }
    }

    /// `#name = attr`.
    pub fn define_attr_alias(&mut self, token: &'s str, attr: AttrId, offset: usize) {
        let name = &token[1..];
        if name.contains('.') {
            self.error(offset, format!("alias name '#{name}' may not contain a '.'"));
        } else if let Err(message) = self.ctx.attr_footprint(attr).check_alias() {
            self.error(offset, message);
        } else if self.attr_aliases.insert(name, attr).is_some() {
            self.error(offset, format!("redefinition of attribute alias id '{name}'"));
        }
    }

    // ----- dense elements -----

    /// `dense<body> : tensor<...>`.
    pub fn dense_attr(&mut self, body: Option<DenseTree<'s>>, ty: TypeId, offset: usize) -> AttrId {
        let TypeKind::Tensor { shape, elem, .. } = self.ctx.type_kind(ty).clone() else {
            self.error(offset, "dense elements attribute requires a tensor type");
            return self.ctx.empty_dict();
        };
        let elem = self.ctx.type_kind(elem).clone();
        let count: u64 = shape.iter().product();
        let data = match body {
            None if count == 0 => DenseData::Elements(Box::new([])),
            None => {
                self.error(offset, "expected elements in dense attribute");
                return self.ctx.empty_dict();
            }
            Some(DenseTree::Hex(text, off)) => self.dense_hex(text, &elem, count, off),
            Some(tree) => {
                let mut elems = Vec::new();
                let flat = match &tree {
                    DenseTree::List(_) => self.flatten_dense(&tree, &shape, &elem, &mut elems),
                    scalar => dense_elem(scalar, &elem).map(|e| elems.push(e)).map_err(|(_, m)| m),
                };
                if let Err(msg) = flat {
                    self.error(offset, msg);
                    return self.ctx.empty_dict();
                }
                match tree {
                    DenseTree::List(_) => canonical_dense(elems),
                    _ => DenseData::Splat(elems[0]),
                }
            }
        };
        self.ctx.attr(Attr::Dense { ty, data })
    }

    fn flatten_dense(
        &self,
        tree: &DenseTree<'s>,
        shape: &[u64],
        elem: &TypeKind,
        out: &mut Vec<DenseElem>,
    ) -> Result<(), String> {
        match (tree, shape.split_first()) {
            (DenseTree::List(items), Some((&n, rest))) => {
                if items.len() as u64 != n {
                    return Err(format!(
                        "expected {n} elements in a dimension of the dense attribute, but got {}",
                        items.len()
                    ));
                }
                items.iter().try_for_each(|t| self.flatten_dense(t, rest, elem, out))
            }
            (DenseTree::List(_), None) => Err("dense attribute nesting is deeper than the tensor rank".into()),
            (_, Some(_)) => Err("dense attribute nesting does not match the tensor shape".into()),
            (scalar, None) => {
                out.push(dense_elem(scalar, elem).map_err(|(_, m)| m)?);
                Ok(())
            }
        }
    }

    fn dense_hex(&mut self, quoted: &str, elem: &TypeKind, count: u64, offset: usize) -> DenseData {
        let hex = quoted.trim_matches('"');
        let Some(digits) =
            hex.strip_prefix("0x").filter(|d| d.len() % 2 == 0 && d.bytes().all(|c| c.is_ascii_hexdigit()))
        else {
            self.error(offset, "expected a hexadecimal string in dense attribute");
            return DenseData::Splat(DenseElem::Int(0));
        };
        let bytes: Vec<u8> =
            (0..digits.len()).step_by(2).map(|i| u8::from_str_radix(&digits[i..i + 2], 16).unwrap()).collect();
        let width = match elem {
            TypeKind::Int(w) => (*w as usize).div_ceil(8),
            TypeKind::Index => 8,
            TypeKind::Float(k) => k.width() as usize / 8,
            _ => 0,
        };
        if width == 0 || (bytes.len() != width && bytes.len() as u64 != count * width as u64) {
            self.error(offset, "hexadecimal dense data does not match the element type and shape");
            return DenseData::Splat(DenseElem::Int(0));
        }
        let elems: Vec<DenseElem> = bytes.chunks(width).map(|c| hex_elem(c, elem)).collect();
        if elems.len() == 1 {
            return DenseData::Splat(elems[0]);
        }
        canonical_dense(elems)
    }

    // ----- affine maps -----

    /// `affine_map<...>`.
    pub fn affine_map_attr(&mut self, ast: AffineMapAst<'s>, offset: usize) -> AttrId {
        let mut results = Vec::with_capacity(ast.results.len());
        for r in &ast.results {
            match bind_affine(r, &ast.dims, &ast.syms) {
                Ok(e) => results.push(e),
                Err((msg, off)) => {
                    self.error(off, msg);
                    return self.ctx.empty_dict();
                }
            }
        }
        let _ = offset;
        let map = AffineMap { num_dims: ast.dims.len() as u32, num_symbols: ast.syms.len() as u32, results };
        self.ctx.affine_map_attr(map)
    }
}

/// Converts one scalar of a dense literal to the element type; errors carry the scalar's offset.
fn dense_elem(tree: &DenseTree<'_>, elem: &TypeKind) -> Result<DenseElem, (usize, String)> {
    Ok(match (tree, elem) {
        (DenseTree::Bool(b), TypeKind::Int(1)) => DenseElem::Bool(*b),
        (DenseTree::Int(t, neg, off), TypeKind::Int(1)) => match (parse_u128(t), neg) {
            (Some(v @ (0 | 1)), false) => DenseElem::Bool(v == 1),
            _ => return Err((*off, "integer constant out of range for i1 element".into())),
        },
        (DenseTree::Int(t, neg, off), TypeKind::Int(_) | TypeKind::Index) => {
            let v = parse_u128(t).ok_or((*off, "integer constant out of range".to_string()))? as i128;
            DenseElem::Int(if *neg { -v } else { v })
        }
        (DenseTree::Float(t, neg, _), TypeKind::Float(k)) => {
            let v: f64 = t.parse().unwrap_or(0.0);
            DenseElem::Float(float_bits::round_to(*k, if *neg { -v } else { v }).to_bits())
        }
        (DenseTree::Int(_, _, off), TypeKind::Float(_)) => {
            return Err((*off, "expected floating-point elements, but parsed integer".into()))
        }
        (DenseTree::Float(_, _, off), _) => {
            return Err((*off, "expected integer elements, but parsed floating-point".into()))
        }
        (DenseTree::Bool(_), _) => return Err((0, "boolean elements require an i1 element type".into())),
        _ => return Err((0, "unsupported dense element type".into())),
    })
}

/// A dialect's parser for the body of one of its types or attributes.
type ItemParser<T> = fn(&mut Context, &str, Option<&str>) -> Result<T, crate::ir::registry::ItemError>;

/// What differs between dialect types (`!d.name<..>`) and dialect attributes (`#d.name<..>`).
struct DialectItems<T> {
    sigil: char,
    noun: &'static str,
    parser: fn(&DialectInfo) -> Option<ItemParser<T>>,
    opaque: fn(&mut Context, Symbol, Option<Box<str>>) -> T,
    fallback: fn(&mut Context) -> T,
}

const TYPE_ITEMS: DialectItems<TypeId> = DialectItems {
    sigil: '!',
    noun: "type",
    parser: |d| d.parse_type,
    opaque: |ctx, name, body| ctx.ty(TypeKind::Opaque { name, body }),
    fallback: |ctx| ctx.none_type(),
};

const ATTR_ITEMS: DialectItems<AttrId> = DialectItems {
    sigil: '#',
    noun: "attribute",
    parser: |d| d.parse_attr,
    opaque: |ctx, name, body| ctx.attr(Attr::Opaque { name, body }),
    fallback: |ctx| ctx.empty_dict(),
};

fn hex_elem(bytes: &[u8], elem: &TypeKind) -> DenseElem {
    let mut raw = [0u8; 16];
    raw[..bytes.len()].copy_from_slice(bytes);
    let bits = u128::from_le_bytes(raw);
    match elem {
        TypeKind::Int(1) => DenseElem::Bool(bits & 1 == 1),
        TypeKind::Int(w) => {
            let shift = 128 - (*w).min(128);
            DenseElem::Int(((bits << shift) as i128) >> shift)
        }
        TypeKind::Float(k) => DenseElem::Float(float_bits::from_bits(*k, bits as u64).to_bits()),
        _ => DenseElem::Int(bits as i128),
    }
}

/// All-equal element lists become splats, as in MLIR.
fn canonical_dense(elems: Vec<DenseElem>) -> DenseData {
    if elems.len() > 1 && elems.iter().all(|e| *e == elems[0]) {
        DenseData::Splat(elems[0])
    } else {
        DenseData::Elements(elems.into())
    }
}

fn bind_affine(ast: &AffineAst<'_>, dims: &[&str], syms: &[&str]) -> Result<AffineExpr, (String, usize)> {
    Ok(match ast {
        AffineAst::Int(t, off) => {
            AffineExpr::Const(t.parse().map_err(|_| ("integer constant out of range".to_string(), *off))?)
        }
        AffineAst::Name(n, off) => {
            if let Some(i) = dims.iter().position(|d| d == n) {
                AffineExpr::Dim(i as u32)
            } else if let Some(i) = syms.iter().position(|s| s == n) {
                AffineExpr::Symbol(i as u32)
            } else {
                return Err((format!("use of undeclared identifier '{n}' in affine map"), *off));
            }
        }
        AffineAst::Neg(a, _) => AffineExpr::binary(AffineOp::Mul, bind_affine(a, dims, syms)?, AffineExpr::Const(-1)),
        AffineAst::Sub(a, b, _) => AffineExpr::difference(bind_affine(a, dims, syms)?, bind_affine(b, dims, syms)?),
        AffineAst::TooDeep(at) => {
            return Err((format!("affine expression nests deeper than {MAX_AFFINE_DEPTH} operators"), *at))
        }
        AffineAst::Bin(op, a, b, _) => {
            let (lhs, rhs) = (bind_affine(a, dims, syms)?, bind_affine(b, dims, syms)?);
            check_affine(*op, &lhs, &rhs).map_err(|m| (m, affine_offset(a)))?;
            AffineExpr::binary(*op, lhs, rhs)
        }
    })
}

/// MLIR's affinity rules: a product needs a constant or symbolic side; a divisor or modulus must be one.
fn check_affine(op: AffineOp, lhs: &AffineExpr, rhs: &AffineExpr) -> Result<(), String> {
    let symbolic = |e: &AffineExpr| e.extent().0 == 0;
    match op {
        AffineOp::Mul if !symbolic(lhs) && !symbolic(rhs) => {
            Err("non-affine expression: at least one of the multiply operands has to be either a constant or symbolic"
                .into())
        }
        AffineOp::FloorDiv | AffineOp::CeilDiv | AffineOp::Mod if !symbolic(rhs) => {
            let name = match op {
                AffineOp::FloorDiv => "floordiv",
                AffineOp::CeilDiv => "ceildiv",
                _ => "mod",
            };
            Err(format!("non-affine expression: right operand of {name} has to be either a constant or symbolic"))
        }
        _ => Ok(()),
    }
}

fn affine_offset(ast: &AffineAst<'_>) -> usize {
    match ast {
        AffineAst::Int(_, o) | AffineAst::Name(_, o) | AffineAst::TooDeep(o) => *o,
        AffineAst::Neg(a, _) | AffineAst::Sub(a, _, _) | AffineAst::Bin(_, a, _, _) => affine_offset(a),
    }
}

/// Splits `dialect.name<body>` into the name and the body between the outer angle brackets.
fn split_dialect_token(text: &str) -> (&str, Option<&str>) {
    match text.find('<') {
        Some(i) if text.ends_with('>') => (&text[..i], Some(&text[i + 1..text.len() - 1])),
        _ => (text, None),
    }
}
