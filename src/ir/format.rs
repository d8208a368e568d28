//! Declarative assembly formats: one string per op describes both its pretty parser and its printer, as
//! MLIR's `assemblyFormat` does.
//!
//! Directives: `` `kw` `` (keyword or punctuation; `` `(` ``…`` `)` `` and `` `[` ``…`` `]` `` enclose a group),
//! `$operands`, `$regions`, `$successors`, `$<attr>` (an attribute the op declares), `type($operands)`,
//! `type($results)`, `functional-type($operands, $results)`, `attr-dict`, and optional groups
//! `( ... )?` whose anchor element (marked `^`) decides whether the group is printed.

use super::asm::{AsmItem, CustomParser, Delim, ParsedOp};
use super::attrs::{Attr, AttrId};
use super::body::OpId;
use super::diag::Diagnostic;
use super::print::OpPrinter;
use super::registry::{AttrKind, OpInfo, OpTrait};
use super::types::TypeId;
use std::fmt;

/// One element of a compiled format.
#[derive(Clone, Debug, PartialEq)]
enum Elem {
    Keyword(String),
    Punct(String),
    Group(Delim, Vec<Elem>),
    Operands,
    Regions,
    Successors,
    Attr(&'static str, AttrKind),
    OperandTypes,
    ResultTypes,
    FunctionalType,
    AttrDict,
    Optional(Vec<Elem>, usize),
}

/// A compiled declarative format.
#[derive(Clone, Debug)]
pub struct Format {
    elems: Vec<Elem>,
    same_type: bool,
    /// Attributes the format prints itself (the rest go in `attr-dict`).
    printed: Vec<&'static str>,
}

fn collect_attrs(elems: &[Elem], out: &mut Vec<&'static str>) {
    for e in elems {
        match e {
            Elem::Attr(name, _) => out.push(name),
            Elem::Group(_, inner) | Elem::Optional(inner, _) => collect_attrs(inner, out),
            _ => {}
        }
    }
}

const PUNCT: &[&str] = &[",", ":", "->", "=", "+", "-", "*", "?", "...", "<", ">"];

impl Format {
    /// Compiles `text` for the op `info`; errors name the offending directive.
    pub fn compile(text: &str, info: &OpInfo) -> Result<Format, String> {
        let tokens = tokenize(text)?;
        let mut pos = 0;
        let elems = compile_seq(&tokens, &mut pos, info, None)?;
        if pos != tokens.len() {
            return Err(format!("unbalanced '{}'", tokens[pos]));
        }
        let mut printed = Vec::new();
        collect_attrs(&elems, &mut printed);
        Ok(Format { elems, same_type: info.has_trait(OpTrait::SameOperandsAndResultType), printed })
    }

    /// Parses the items of a pretty op.
    pub fn parse<'s>(&self, p: &mut CustomParser<'_, 's>) -> Result<ParsedOp<'s>, Diagnostic> {
        let mut op = ParsedOp::default();
        parse_seq(&self.elems, p, &mut op)?;
        p.expect_end()?;
        if self.same_type && op.result_types.is_empty() {
            if let Some(ty) = first_operand_type(p, &op) {
                op.result_types.push(ty);
            }
        }
        if let (true, Some(&ty)) = (self.same_type, op.result_types.first()) {
            // Operands of a same-type op take the result type when the syntax leaves it out.
            for slot in op.operands.iter_mut().filter(|s| s.2.is_none()) {
                slot.2 = Some(ty);
            }
        }
        Ok(op)
    }

    /// Prints `op` after its name; fails if the op does not fit the format.
    pub fn print(&self, p: &mut OpPrinter<'_, '_>, op: OpId) -> fmt::Result {
        let mut state = PrintState { first: false, at_start: true, after_open: false, elided: self.printed.clone() };
        print_seq(&self.elems, p, op, &mut state)
    }
}

fn first_operand_type(p: &mut CustomParser<'_, '_>, op: &ParsedOp<'_>) -> Option<TypeId> {
    let (name, _, ty) = op.operands.first()?;
    ty.or_else(|| p.env.value_type(name))
}

// ----- compiling -----

fn tokenize(text: &str) -> Result<Vec<String>, String> {
    let mut tokens = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            c if c.is_whitespace() => {}
            '`' => {
                let end = text[i + 1..].find('`').ok_or("unterminated literal")? + i + 1;
                tokens.push(text[i..=end].to_string());
                while chars.peek().is_some_and(|&(j, _)| j <= end) {
                    chars.next();
                }
            }
            '(' | ')' | '^' | ',' | '?' => tokens.push(c.to_string()),
            _ => {
                let mut end = i + c.len_utf8();
                while let Some(&(j, d)) = chars.peek() {
                    if d.is_alphanumeric() || matches!(d, '_' | '-' | '$') {
                        end = j + d.len_utf8();
                        chars.next();
                    } else {
                        break;
                    }
                }
                tokens.push(text[i..end].to_string());
            }
        }
    }
    Ok(tokens)
}

fn compile_seq(tokens: &[String], pos: &mut usize, info: &OpInfo, close: Option<&str>) -> Result<Vec<Elem>, String> {
    let mut elems = Vec::new();
    loop {
        match tokens.get(*pos).map(String::as_str) {
            None => return close.map_or(Ok(elems), |c| Err(format!("missing {c}"))),
            Some(t) if Some(t) == close => {
                *pos += 1;
                return Ok(elems);
            }
            Some(_) => elems.push(compile_one(tokens, pos, info)?),
        }
    }
}

fn compile_one(tokens: &[String], pos: &mut usize, info: &OpInfo) -> Result<Elem, String> {
    let tok = tokens[*pos].as_str();
    *pos += 1;
    Ok(match tok {
        "`(`" => Elem::Group(Delim::Paren, compile_seq(tokens, pos, info, Some("`)`"))?),
        "`[`" => Elem::Group(Delim::Square, compile_seq(tokens, pos, info, Some("`]`"))?),
        "(" => compile_optional(tokens, pos, info)?,
        "attr-dict" => Elem::AttrDict,
        "$operands" => Elem::Operands,
        "$regions" => Elem::Regions,
        "$successors" => Elem::Successors,
        "type" => compile_type_directive(tokens, pos)?,
        "functional-type" => {
            expect_tokens(tokens, pos, &["(", "$operands", ",", "$results", ")"])?;
            Elem::FunctionalType
        }
        t if t.starts_with('`') => literal(t),
        t if t.starts_with('$') => {
            let spec = info.attrs.iter().find(|a| a.name == &t[1..]).ok_or(format!("unknown attribute '{t}'"))?;
            Elem::Attr(spec.name, spec.kind)
        }
        t => return Err(format!("unexpected '{t}'")),
    })
}

fn literal(t: &str) -> Elem {
    let inner = &t[1..t.len() - 1];
    if PUNCT.contains(&inner) {
        Elem::Punct(inner.to_string())
    } else {
        Elem::Keyword(inner.to_string())
    }
}

fn compile_optional(tokens: &[String], pos: &mut usize, info: &OpInfo) -> Result<Elem, String> {
    let mut inner = Vec::new();
    let mut anchor = None;
    loop {
        match tokens.get(*pos).map(String::as_str) {
            None => return Err("unterminated optional group".into()),
            Some(")") => break,
            Some("^") => {
                anchor = Some(inner.len().checked_sub(1).ok_or("'^' before any element")?);
                *pos += 1;
            }
            Some(_) => inner.push(compile_one(tokens, pos, info)?),
        }
    }
    expect_tokens(tokens, pos, &[")", "?"])?;
    let anchor = anchor.ok_or("optional group without an anchor '^'")?;
    Ok(Elem::Optional(inner, anchor))
}

fn compile_type_directive(tokens: &[String], pos: &mut usize) -> Result<Elem, String> {
    expect_tokens(tokens, pos, &["("])?;
    let what = tokens.get(*pos).cloned().unwrap_or_default();
    *pos += 1;
    expect_tokens(tokens, pos, &[")"])?;
    match what.as_str() {
        "$operands" => Ok(Elem::OperandTypes),
        "$results" => Ok(Elem::ResultTypes),
        w => Err(format!("type() of '{w}' is not supported")),
    }
}

fn expect_tokens(tokens: &[String], pos: &mut usize, want: &[&str]) -> Result<(), String> {
    for w in want {
        if tokens.get(*pos).map(String::as_str) != Some(*w) {
            return Err(format!("expected '{w}'"));
        }
        *pos += 1;
    }
    Ok(())
}

// ----- parsing -----

fn parse_seq<'s>(elems: &[Elem], p: &mut CustomParser<'_, 's>, op: &mut ParsedOp<'s>) -> Result<(), Diagnostic> {
    for elem in elems {
        parse_elem(elem, p, op)?;
    }
    Ok(())
}

fn parse_elem<'s>(elem: &Elem, p: &mut CustomParser<'_, 's>, op: &mut ParsedOp<'s>) -> Result<(), Diagnostic> {
    match elem {
        Elem::Keyword(k) => p.expect_keyword(k),
        Elem::Punct(s) => p.expect_punct(s),
        Elem::Group(delim, inner) => {
            let (items, loc) = p.group(*delim)?;
            let mut nested = p.nested(items, loc);
            parse_seq(inner, &mut nested, op)?;
            nested.expect_end()
        }
        Elem::Operands => parse_operands(p, op),
        Elem::Regions => {
            while matches!(p.peek(), Some(AsmItem::Region(..))) {
                let r = p.region()?;
                op.regions.push((r, Vec::new()));
            }
            Ok(())
        }
        Elem::Successors => parse_successors(p, op),
        Elem::Attr(name, kind) => parse_attr(p, op, name, *kind),
        Elem::OperandTypes => parse_operand_types(p, op),
        Elem::ResultTypes => {
            op.result_types = p.type_list()?;
            Ok(())
        }
        Elem::FunctionalType => parse_functional_type(p, op),
        Elem::AttrDict => {
            p.attr_dict(op);
            Ok(())
        }
        Elem::Optional(inner, _) => {
            if starts(&inner[0], p) {
                parse_seq(inner, p, op)?;
            }
            Ok(())
        }
    }
}

/// True if the next item can begin `elem` (used to decide whether an optional group is present).
fn starts(elem: &Elem, p: &mut CustomParser<'_, '_>) -> bool {
    match (elem, p.peek()) {
        (Elem::Keyword(k), Some(AsmItem::Keyword(q, _))) => k == q,
        (Elem::Punct(s), Some(AsmItem::Punct(q, _))) => s == q,
        (Elem::Group(d, _), Some(AsmItem::Group(e, ..))) => d == e,
        (Elem::Operands, Some(AsmItem::Value(..))) => true,
        (Elem::Regions, Some(AsmItem::Region(..))) => true,
        (Elem::Successors, Some(AsmItem::Block(..))) => true,
        (Elem::Attr(_, AttrKind::SymbolRef), Some(AsmItem::Symbol(..))) => true,
        (Elem::Attr(..), Some(AsmItem::Attr(..))) => true,
        (Elem::OperandTypes | Elem::ResultTypes, Some(AsmItem::Type(..))) => true,
        (Elem::FunctionalType, Some(AsmItem::Group(Delim::Paren, ..))) => true,
        (Elem::AttrDict, Some(AsmItem::AttrDict { .. })) => true,
        _ => false,
    }
}

fn parse_operands<'s>(p: &mut CustomParser<'_, 's>, op: &mut ParsedOp<'s>) -> Result<(), Diagnostic> {
    if !matches!(p.peek(), Some(AsmItem::Value(..))) {
        return Ok(());
    }
    loop {
        let (name, loc) = p.value()?;
        op.operands.push((name, loc, None));
        if !p.eat_punct(",") {
            return Ok(());
        }
    }
}

fn parse_successors<'s>(p: &mut CustomParser<'_, 's>, op: &mut ParsedOp<'s>) -> Result<(), Diagnostic> {
    while let Some(AsmItem::Block(..)) = p.peek() {
        if let Some(AsmItem::Block(name, loc)) = p.next_item() {
            op.successors.push((name, loc));
        }
        if !p.eat_punct(",") {
            break;
        }
    }
    Ok(())
}

fn parse_attr<'s>(
    p: &mut CustomParser<'_, 's>,
    op: &mut ParsedOp<'s>,
    name: &str,
    kind: AttrKind,
) -> Result<(), Diagnostic> {
    let value = if kind == AttrKind::String && matches!(p.peek(), Some(AsmItem::Symbol(..))) {
        // A symbol name written `@name` and stored as a string (`sym_name`).
        let text = p.symbol_name()?;
        p.ctx().string_attr(&text)
    } else if kind == AttrKind::Float {
        // A bare float is an `f64`, its bits in hex for infinities and NaNs (`0x7FF0000000000000`); negative
        // numbers start with `-` (a `:` after one belongs to the op's types).
        p.f64_attr()?
    } else if matches!(kind, AttrKind::Int | AttrKind::Float) {
        p.signed_attr()?
    } else {
        p.attr()?
    };
    // Declared attributes are inherent: they live in the op's properties, as in MLIR.
    let key = p.ctx().sym(name);
    op.props.push((key, value));
    Ok(())
}

fn parse_operand_types(p: &mut CustomParser<'_, '_>, op: &mut ParsedOp<'_>) -> Result<(), Diagnostic> {
    let n = op.operands.len();
    if n == 0 {
        return Ok(());
    }
    let loc = p.loc();
    let types = p.type_list()?;
    if types.len() != n {
        return Err(Diagnostic::error(loc, format!("expected {n} operand types but got {}", types.len())));
    }
    for (slot, ty) in op.operands.iter_mut().zip(types) {
        slot.2 = Some(ty);
    }
    Ok(())
}

fn parse_functional_type(p: &mut CustomParser<'_, '_>, op: &mut ParsedOp<'_>) -> Result<(), Diagnostic> {
    let (items, loc) = p.group(Delim::Paren)?;
    let inputs = {
        let mut nested = p.nested(items, loc);
        let types = if nested.at_end() { Vec::new() } else { nested.type_list()? };
        nested.expect_end()?;
        types
    };
    if inputs.len() != op.operands.len() {
        let msg = format!("expected {} operand types but got {}", op.operands.len(), inputs.len());
        return Err(Diagnostic::error(loc, msg));
    }
    for (slot, ty) in op.operands.iter_mut().zip(inputs) {
        slot.2 = Some(ty);
    }
    p.expect_punct("->")?;
    op.result_types = parse_result_types(p)?;
    Ok(())
}

/// Parses what follows `->`: one type, or a parenthesized (possibly empty) list.
pub fn parse_result_types(p: &mut CustomParser<'_, '_>) -> Result<Vec<TypeId>, Diagnostic> {
    if let Some(AsmItem::Group(Delim::Paren, ..)) = p.peek() {
        let (items, loc) = p.group(Delim::Paren)?;
        let mut nested = p.nested(items, loc);
        let types = if nested.at_end() { Vec::new() } else { nested.type_list()? };
        nested.expect_end()?;
        return Ok(types);
    }
    Ok(vec![p.ty()?])
}

// ----- printing -----

struct PrintState {
    first: bool,
    at_start: bool,
    after_open: bool,
    elided: Vec<&'static str>,
}

impl PrintState {
    fn space(&mut self, p: &mut OpPrinter<'_, '_>, tight: bool) {
        if !self.first && !self.after_open && !tight {
            p.write(" ");
        }
        self.first = false;
        self.at_start = false;
        self.after_open = false;
    }
}

fn print_seq(elems: &[Elem], p: &mut OpPrinter<'_, '_>, op: OpId, st: &mut PrintState) -> fmt::Result {
    for elem in elems {
        print_elem(elem, p, op, st)?;
    }
    Ok(())
}

fn print_elem(elem: &Elem, p: &mut OpPrinter<'_, '_>, op: OpId, st: &mut PrintState) -> fmt::Result {
    let body = &p.ctx().body;
    match elem {
        Elem::Keyword(k) => {
            st.space(p, false);
            p.write(k);
        }
        Elem::Punct(s) => {
            st.space(p, s == ",");
            p.write(s);
        }
        Elem::Group(delim, inner) => {
            let (open, close) = if *delim == Delim::Paren { ("(", ")") } else { ("[", "]") };
            // A group hugs what precedes it (`@f(%0)`), as MLIR prints it, unless it comes first.
            let tight = !st.at_start;
            st.space(p, tight);
            p.write(open);
            st.after_open = true;
            print_seq(inner, p, op, st)?;
            st.after_open = false;
            p.write(close);
        }
        Elem::Operands => {
            if body.num_operands(op) > 0 {
                st.space(p, false);
                let operands: Vec<_> = body.operands(op).collect();
                p.values(operands)?;
            }
        }
        Elem::Regions => {
            for r in body.regions(op).to_vec() {
                st.space(p, false);
                p.region(r, true)?;
            }
        }
        Elem::Successors => {
            for (i, b) in body.successors(op).to_vec().into_iter().enumerate() {
                if i > 0 {
                    p.write(",");
                }
                st.space(p, false);
                p.successor(b)?;
            }
        }
        Elem::Attr(name, kind) => print_attr(p, op, name, *kind, st)?,
        Elem::OperandTypes => {
            let types: Vec<TypeId> = body.operands(op).map(|v| body.value_type(v)).collect();
            if !types.is_empty() {
                st.space(p, false);
                p.types(&types)?;
            }
        }
        Elem::ResultTypes => {
            let types: Vec<TypeId> = body.results(op).map(|v| body.value_type(v)).collect();
            st.space(p, false);
            p.types(&types)?;
        }
        Elem::FunctionalType => {
            let inputs: Vec<TypeId> = body.operands(op).map(|v| body.value_type(v)).collect();
            let results: Vec<TypeId> = body.results(op).map(|v| body.value_type(v)).collect();
            st.space(p, false);
            p.write("(");
            p.types(&inputs)?;
            p.write(") -> ");
            p.result_types(&results)?;
        }
        Elem::AttrDict => {
            let elided = st.elided.clone();
            p.attr_dict(op, &elided)?;
        }
        Elem::Optional(inner, anchor) => {
            if present(&inner[*anchor], p, op) {
                print_seq(inner, p, op, st)?;
            }
        }
    }
    Ok(())
}

fn present(elem: &Elem, p: &OpPrinter<'_, '_>, op: OpId) -> bool {
    let body = &p.ctx().body;
    match elem {
        Elem::Operands | Elem::OperandTypes => body.num_operands(op) > 0,
        // Left out when the op infers them (`InferResultTypes`), whenever they are the inferred ones.
        Elem::ResultTypes => body.num_results(op) > 0 && !super::infer_types::infers(p.ctx(), op),
        Elem::Regions => !body.regions(op).is_empty(),
        Elem::Successors => !body.successors(op).is_empty(),
        Elem::Attr(name, _) => p.ctx().op_attr(op, name).is_some(),
        _ => true,
    }
}

/// An attribute as printed, with the type of an `i64` or `f64` number left out (also inside nested arrays).
fn bare_number(ctx: &super::context::Context, value: AttrId) -> String {
    if let Attr::Array(items) = ctx.attr_data(value) {
        let items: Vec<String> = items.iter().map(|&a| bare_number(ctx, a)).collect();
        return format!("[{}]", items.join(", "));
    }
    let text = super::print::attr_to_string(ctx, value);
    match text.strip_suffix(" : i64").or_else(|| text.strip_suffix(" : f64")) {
        Some(bare) if matches!(ctx.attr_data(value), Attr::Int { .. } | Attr::Float { .. }) => bare.to_string(),
        _ => text,
    }
}

fn print_attr(p: &mut OpPrinter<'_, '_>, op: OpId, name: &str, kind: AttrKind, st: &mut PrintState) -> fmt::Result {
    let Some(value) = p.ctx().op_attr(op, name) else { return Err(fmt::Error) };
    st.space(p, false);
    match (kind, p.ctx().attr_data(value)) {
        (AttrKind::String, Attr::String(s)) => {
            let s = s.to_string();
            p.symbol_name(&s)
        }
        // A declared integer or float attribute of the default type (i64, f64) prints bare, as MLIR's I64Attr and
        // F64Attr do; it parses back to the same type.
        (AttrKind::Int | AttrKind::Float, _) => {
            let text = bare_number(p.ctx(), value);
            p.write(&text);
            Ok(())
        }
        // So do the numbers of a declared array attribute.
        (AttrKind::Array, Attr::Array(items)) => {
            let items: Vec<String> = items.iter().map(|&a| bare_number(p.ctx(), a)).collect();
            p.write(&format!("[{}]", items.join(", ")));
            Ok(())
        }
        _ => p.attr(value as AttrId),
    }
}
