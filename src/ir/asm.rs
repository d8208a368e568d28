//! The custom-assembly interface: how an op's pretty form is handed to the op's own parser.
//!
//! The core grammar reads a pretty op as its name followed by a flat list of [`AsmItem`]s (values, types,
//! attributes, keywords, punctuation, bracketed groups, regions, successors). Every op's parser, declarative
//! ([`super::format`]) or hand-written, works on that list through a [`CustomParser`] and returns a
//! [`ParsedOp`] that still names its operands by SSA name; the parser resolves them. So a new op never grows the
//! grammar.

use super::attrs::AttrId;
use super::body::RegionId;
use super::diag::Diagnostic;
use super::location::Loc;
use super::types::TypeId;
use super::{Context, Symbol};

/// Bracket kind of an [`AsmItem::Group`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Delim {
    /// `( ... )`.
    Paren,
    /// `[ ... ]`.
    Square,
}

/// A region parsed inside a pretty op, with the parser's bookkeeping for names it could not resolve yet.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ParsedRegion {
    /// The region.
    pub region: RegionId,
    /// Parser bookkeeping: which pending forward references belong to this region.
    pub pending: u32,
}

/// One syntactic element of a pretty op.
#[derive(Clone, Debug)]
pub enum AsmItem<'s> {
    /// `%name` or `%name#3`.
    Value(&'s str, Loc),
    /// `@sym` / `@a::@b` as a symbol reference attribute.
    Symbol(AttrId, Loc),
    /// A type.
    Type(TypeId, Loc),
    /// A literal attribute (number, string, `true`, `dense<..>`, `#alias`, `#d.a<..>`, ...).
    Attr(AttrId, Loc),
    /// A bare identifier.
    Keyword(&'s str, Loc),
    /// Punctuation: `,` `:` `->` `=` `+` `-` `*` `?` `...`.
    Punct(&'static str, Loc),
    /// A bracketed list of items.
    Group(Delim, Vec<AsmItem<'s>>, Loc),
    /// `attributes {...}` or `attributes <{props}> {...}`.
    AttrDict {
        /// The attribute dictionary.
        attrs: AttrId,
        /// The property dictionary (empty when not written).
        props: AttrId,
        /// Where the keyword is.
        loc: Loc,
    },
    /// A region `{ ... }`.
    Region(ParsedRegion, Loc),
    /// A successor `^bb`.
    Block(&'s str, Loc),
    /// `loc(...)`.
    Location(Loc),
}

impl AsmItem<'_> {
    /// Where the item is.
    pub fn loc(&self) -> Loc {
        match self {
            AsmItem::Value(_, l)
            | AsmItem::Symbol(_, l)
            | AsmItem::Type(_, l)
            | AsmItem::Attr(_, l)
            | AsmItem::Keyword(_, l)
            | AsmItem::Punct(_, l)
            | AsmItem::Group(_, _, l)
            | AsmItem::AttrDict { loc: l, .. }
            | AsmItem::Region(_, l)
            | AsmItem::Block(_, l)
            | AsmItem::Location(l) => *l,
        }
    }

    /// A short description for "expected X, found Y" diagnostics.
    pub fn describe(&self) -> String {
        match self {
            AsmItem::Value(n, _) => format!("'{n}'"),
            AsmItem::Symbol(..) => "symbol reference".into(),
            AsmItem::Type(..) => "type".into(),
            AsmItem::Attr(..) => "attribute".into(),
            AsmItem::Keyword(k, _) => format!("'{k}'"),
            AsmItem::Punct(p, _) => format!("'{p}'"),
            AsmItem::Group(Delim::Paren, ..) => "'('".into(),
            AsmItem::Group(Delim::Square, ..) => "'['".into(),
            AsmItem::AttrDict { .. } => "'attributes'".into(),
            AsmItem::Region(..) => "region".into(),
            AsmItem::Block(n, _) => format!("'{n}'"),
            AsmItem::Location(_) => "location".into(),
        }
    }
}

/// An entry-block argument declared in a pretty op's syntax (as `func.func @f(%arg0: i32)` does).
#[derive(Clone, Debug)]
pub struct EntryArg<'s> {
    /// SSA name.
    pub name: &'s str,
    /// Type.
    pub ty: TypeId,
    /// Location of the name (or an explicit `loc(...)`).
    pub loc: Loc,
}

/// What an op's custom parser produces: an op whose operands are still SSA names.
#[derive(Clone, Debug, Default)]
pub struct ParsedOp<'s> {
    /// Operands: name, location, and the type if the syntax states it.
    pub operands: Vec<(&'s str, Loc, Option<TypeId>)>,
    /// Result types.
    pub result_types: Vec<TypeId>,
    /// Discardable attributes.
    pub attrs: Vec<(Symbol, AttrId)>,
    /// Properties.
    pub props: Vec<(Symbol, AttrId)>,
    /// Regions with the entry-block arguments the syntax declared for them.
    pub regions: Vec<(ParsedRegion, Vec<EntryArg<'s>>)>,
    /// Successor block names.
    pub successors: Vec<(&'s str, Loc)>,
}

/// What a custom parser may ask of the surrounding parser.
pub trait AsmEnv {
    /// The context, to intern types and attributes.
    fn context(&mut self) -> &mut Context;
    /// The type of an SSA value already in scope (for formats that infer types).
    fn value_type(&self, name: &str) -> Option<TypeId>;
}

/// A cursor over the items of one pretty op, handed to the op's parser.
pub struct CustomParser<'p, 's> {
    /// The surrounding parser.
    pub env: &'p mut dyn AsmEnv,
    items: std::iter::Peekable<std::vec::IntoIter<AsmItem<'s>>>,
    /// Location of the op name (for diagnostics about the op as a whole).
    pub op_loc: Loc,
    /// The op name.
    pub op_name: &'s str,
    end_loc: Loc,
}

impl<'p, 's> CustomParser<'p, 's> {
    /// A cursor over `items`.
    pub fn new(env: &'p mut dyn AsmEnv, op_name: &'s str, op_loc: Loc, items: Vec<AsmItem<'s>>, end_loc: Loc) -> Self {
        CustomParser { env, items: items.into_iter().peekable(), op_loc, op_name, end_loc }
    }

    /// A cursor over a nested group, sharing the environment.
    pub fn nested<'q>(&'q mut self, items: Vec<AsmItem<'s>>, end_loc: Loc) -> CustomParser<'q, 's> {
        CustomParser {
            env: &mut *self.env,
            items: items.into_iter().peekable(),
            op_loc: self.op_loc,
            op_name: self.op_name,
            end_loc,
        }
    }

    /// The context.
    pub fn ctx(&mut self) -> &mut Context {
        self.env.context()
    }

    /// The next item, without consuming it.
    pub fn peek(&mut self) -> Option<&AsmItem<'s>> {
        self.items.peek()
    }

    /// Consumes the next item.
    pub fn next_item(&mut self) -> Option<AsmItem<'s>> {
        self.items.next()
    }

    /// True when every item was consumed.
    pub fn at_end(&mut self) -> bool {
        self.items.peek().is_none()
    }

    /// Where the next item is (or the end of the op).
    pub fn loc(&mut self) -> Loc {
        let end = self.end_loc;
        self.peek().map_or(end, |i| i.loc())
    }

    /// An error at the next item: `expected {what}`.
    pub fn expected(&mut self, what: &str) -> Diagnostic {
        let loc = self.loc();
        match self.peek() {
            Some(item) => {
                let found = item.describe();
                Diagnostic::error(loc, format!("expected {what}, found {found}"))
            }
            None => Diagnostic::error(loc, format!("expected {what}")),
        }
    }

    /// Consumes punctuation `p` if it is next.
    pub fn eat_punct(&mut self, p: &str) -> bool {
        matches!(self.peek(), Some(AsmItem::Punct(q, _)) if *q == p) && self.next_item().is_some()
    }

    /// Consumes punctuation `p` or fails.
    pub fn expect_punct(&mut self, p: &str) -> Result<(), Diagnostic> {
        if self.eat_punct(p) {
            Ok(())
        } else {
            Err(self.expected(&format!("'{p}'")))
        }
    }

    /// Consumes keyword `k` if it is next.
    pub fn eat_keyword(&mut self, k: &str) -> bool {
        matches!(self.peek(), Some(AsmItem::Keyword(q, _)) if *q == k) && self.next_item().is_some()
    }

    /// Consumes a keyword or fails.
    pub fn expect_keyword(&mut self, k: &str) -> Result<(), Diagnostic> {
        if self.eat_keyword(k) {
            Ok(())
        } else {
            Err(self.expected(&format!("'{k}'")))
        }
    }

    /// Consumes an SSA value name.
    pub fn value(&mut self) -> Result<(&'s str, Loc), Diagnostic> {
        match self.peek() {
            Some(AsmItem::Value(..)) => match self.next_item() {
                Some(AsmItem::Value(n, l)) => Ok((n, l)),
                _ => unreachable!(),
            },
            _ => Err(self.expected("SSA value")),
        }
    }

    /// Consumes a type.
    pub fn ty(&mut self) -> Result<TypeId, Diagnostic> {
        match self.peek() {
            Some(AsmItem::Type(t, _)) => {
                let t = *t;
                self.next_item();
                Ok(t)
            }
            _ => Err(self.expected("type")),
        }
    }

    /// Consumes a comma-separated list of at least one type.
    pub fn type_list(&mut self) -> Result<Vec<TypeId>, Diagnostic> {
        let mut types = vec![self.ty()?];
        while self.eat_punct(",") {
            types.push(self.ty()?);
        }
        Ok(types)
    }

    /// Consumes a bracketed group of kind `delim` and returns a cursor-ready item list.
    pub fn group(&mut self, delim: Delim) -> Result<(Vec<AsmItem<'s>>, Loc), Diagnostic> {
        match self.peek() {
            Some(AsmItem::Group(d, ..)) if *d == delim => match self.next_item() {
                Some(AsmItem::Group(_, items, l)) => Ok((items, l)),
                _ => unreachable!(),
            },
            _ => Err(self.expected(if delim == Delim::Paren { "'('" } else { "'['" })),
        }
    }

    /// Consumes a symbol reference and returns the attribute.
    pub fn symbol(&mut self) -> Result<AttrId, Diagnostic> {
        match self.peek() {
            Some(AsmItem::Symbol(a, _)) => {
                let a = *a;
                self.next_item();
                Ok(a)
            }
            _ => Err(self.expected("symbol name")),
        }
    }

    /// Consumes a flat symbol reference `@name` and returns the name.
    pub fn symbol_name(&mut self) -> Result<String, Diagnostic> {
        let loc = self.loc();
        let sym = self.symbol()?;
        let ctx = self.ctx();
        match ctx.attr_data(sym) {
            super::Attr::SymbolRef { root, nested } if nested.is_empty() => Ok(ctx.str(*root).to_string()),
            _ => Err(Diagnostic::error(loc, "expected a flat symbol name")),
        }
    }

    /// Consumes a literal attribute (or a symbol reference, a type as a type attribute, or `[a, b, ...]` as an
    /// array attribute).
    pub fn attr(&mut self) -> Result<AttrId, Diagnostic> {
        match self.next_item() {
            Some(AsmItem::Attr(a, _) | AsmItem::Symbol(a, _)) => Ok(a),
            Some(AsmItem::Type(t, _)) => Ok(self.ctx().type_attr(t)),
            Some(AsmItem::Group(Delim::Square, items, loc)) => {
                let mut nested = self.nested(items, loc);
                let mut elems = Vec::new();
                while !nested.at_end() {
                    if !elems.is_empty() {
                        nested.expect_punct(",")?;
                    }
                    elems.push(nested.typed_attr()?);
                }
                Ok(self.ctx().attr(super::Attr::Array(elems.into())))
            }
            Some(other) => {
                let d = Diagnostic::error(other.loc(), format!("expected attribute, found {}", other.describe()));
                Err(d)
            }
            None => Err(self.expected("attribute")),
        }
    }

    /// Consumes a number or other literal with an optional leading `-` and trailing `: type` (`-3 : i32`,
    /// `1.5 : f32`, `0x7FC00000 : f32`), giving numbers the stated type.
    pub fn typed_attr(&mut self) -> Result<AttrId, Diagnostic> {
        self.number_attr(true)
    }

    /// Consumes a literal attribute with an optional leading `-` but no trailing type (where a `:` follows that
    /// belongs to the op, as in `teg.full -1.5 : !teg.tensor<...>`).
    pub fn signed_attr(&mut self) -> Result<AttrId, Diagnostic> {
        self.number_attr(false)
    }

    /// Consumes a float with an optional leading `-` and no trailing type, as `f64`: a decimal (`-1.5`) or the
    /// bits of one in hex (`0xFFF0000000000000`, minus infinity), as a declared `f64` attribute prints.
    pub fn f64_attr(&mut self) -> Result<AttrId, Diagnostic> {
        let f64_type = self.ctx().float_type(super::FloatKind::F64);
        self.number_attr_as(false, Some(f64_type))
    }

    fn number_attr(&mut self, typed: bool) -> Result<AttrId, Diagnostic> {
        self.number_attr_as(typed, None)
    }

    /// A number, typed by its trailing `: type` when `typed`, else by `implied`.
    fn number_attr_as(&mut self, typed: bool, implied: Option<TypeId>) -> Result<AttrId, Diagnostic> {
        let loc = self.loc();
        let negate = self.eat_punct("-");
        let attr = self.attr()?;
        let ty = if typed && self.eat_punct(":") { Some(self.ty()?) } else { implied };
        let hex = match loc {
            super::Loc::Source { file, offset } => {
                let text = &self.ctx().sources.file(file).text;
                text.get(offset as usize + usize::from(negate)..)
                    .is_some_and(|t| t.trim_start_matches('-').starts_with("0x"))
            }
            _ => false,
        };
        retype(self.ctx(), attr, negate, ty, hex).map_err(|m| Diagnostic::error(loc, m))
    }

    /// Consumes `attributes ...` if present and moves its entries into `op`.
    pub fn attr_dict(&mut self, op: &mut ParsedOp<'s>) {
        if let Some(AsmItem::AttrDict { .. }) = self.peek() {
            if let Some(AsmItem::AttrDict { attrs, props, .. }) = self.next_item() {
                let ctx = self.ctx();
                op.attrs.extend_from_slice(ctx.dict_entries(attrs));
                op.props.extend_from_slice(ctx.dict_entries(props));
            }
        }
    }

    /// Consumes a region.
    pub fn region(&mut self) -> Result<ParsedRegion, Diagnostic> {
        match self.peek() {
            Some(AsmItem::Region(r, _)) => {
                let r = *r;
                self.next_item();
                Ok(r)
            }
            _ => Err(self.expected("region")),
        }
    }

    /// Consumes a trailing `loc(...)` if present.
    pub fn location(&mut self) -> Option<Loc> {
        match self.peek() {
            Some(AsmItem::Location(l)) => {
                let l = *l;
                self.next_item();
                Some(l)
            }
            _ => None,
        }
    }

    /// Parses the inside of `(%a: i32, %b: f32)` (named arguments, entry-block arguments of a region) or of
    /// `(i32, f32)` (bare types, a declaration): the types, and the named arguments (none when bare).
    pub fn arguments(&mut self) -> Result<(Vec<TypeId>, Vec<EntryArg<'s>>), Diagnostic> {
        let mut types = Vec::new();
        let mut args = Vec::new();
        while !self.at_end() {
            if !types.is_empty() {
                self.expect_punct(",")?;
            }
            if let Some(AsmItem::Value(..)) = self.peek() {
                let (name, loc) = self.value()?;
                self.expect_punct(":")?;
                let ty = self.ty()?;
                let loc = self.location().unwrap_or(loc);
                args.push(EntryArg { name, ty, loc });
                types.push(ty);
            } else {
                types.push(self.ty()?);
            }
        }
        if !args.is_empty() && args.len() != types.len() {
            return Err(Diagnostic::error(self.op_loc, "expected all arguments to be named or none"));
        }
        Ok((types, args))
    }

    /// Fails unless every item was consumed.
    pub fn expect_end(&mut self) -> Result<(), Diagnostic> {
        match self.peek() {
            None => Ok(()),
            Some(item) => {
                let (loc, what) = (item.loc(), item.describe());
                Err(Diagnostic::error(loc, format!("unexpected {what} in custom assembly of '{}'", self.op_name)))
            }
        }
    }
}

/// Applies a leading minus and a `: type` suffix to a literal attribute.
fn retype(ctx: &mut Context, attr: AttrId, negate: bool, ty: Option<TypeId>, hex: bool) -> Result<AttrId, String> {
    use super::{Attr, TypeKind};
    let data = ctx.attr_data(attr).clone();
    match (data, ty.map(|t| ctx.type_kind(t).clone())) {
        (Attr::Int { value, .. }, Some(TypeKind::Float(kind))) if hex && !negate => {
            let v = super::float_bits::from_bits(kind, value as u64);
            Ok(ctx.attr(Attr::Float { bits: v.to_bits(), ty: ty.unwrap() }))
        }
        (Attr::Int { .. }, Some(TypeKind::Float(_))) if hex => {
            Err("a hexadecimal float literal cannot be negated: write the bits with the sign bit set".into())
        }
        (Attr::Int { .. }, Some(TypeKind::Float(_))) => {
            Err("unexpected decimal integer literal for a floating point value".into())
        }
        (Attr::Int { value, ty: t0 }, target) => {
            let value = if negate { -value } else { value };
            let ty = match target {
                None => t0,
                Some(TypeKind::Int(_) | TypeKind::Index) => ty.unwrap(),
                Some(_) => return Err("integer literal not valid for specified type".into()),
            };
            if !super::attrs::int_fits(ctx.type_kind(ty), value) {
                return Err("integer constant out of range for attribute".into());
            }
            Ok(ctx.int_attr(value, ty))
        }
        (Attr::Float { bits, ty: t0 }, target) => {
            let v = f64::from_bits(bits);
            let v = if negate { -v } else { v };
            let (ty, v) = match target {
                None => (t0, v),
                Some(TypeKind::Float(kind)) => (ty.unwrap(), super::float_bits::round_to(kind, v)),
                Some(_) => return Err("floating point value not valid for specified type".into()),
            };
            Ok(ctx.attr(Attr::Float { bits: v.to_bits(), ty }))
        }
        (_, _) if negate => Err("expected a number after '-'".into()),
        (_, Some(_)) => Err("unexpected type after a non-numeric attribute".into()),
        (_, None) => Ok(attr),
    }
}
