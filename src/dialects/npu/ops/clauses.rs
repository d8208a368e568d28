//! The clauses every instruction shares: `queue(dma0)`, `waits(%s = 1, ...)`, `signals(%s = 2, ...)`, and the
//! small pieces of syntax the instructions read (integers, integer lists, element types), each with its printer
//! and its decoding from properties.
//!
//! Semaphores are operands, after the instruction's buffers: first those waited for, then those signalled; the
//! values are the properties `waits` and `signals`. A wait `%s = v` holds once `%s` has reached `v` (timeline
//! semaphores only increase, so "reached" is "at least"); a signal `%s = v` sets it to `v`.

use crate::dialects::npu::types::elem_type;
use crate::ir::asm::{AsmItem, CustomParser, Delim, ParsedOp};
use crate::ir::print::OpPrinter;
use crate::ir::{Attr, AttrId, Context, Diagnostic, OpId, ValueId};
use crate::machine::ElemType;
use std::fmt;

/// The queues: `dma0` … `dma7` (one per DMA engine), `main` (the full tensor unit) and `sub` (preloads).
pub fn queue_index(name: &str, dma_engines: u64) -> Option<usize> {
    match name {
        "main" => Some(dma_engines as usize),
        "sub" => Some(dma_engines as usize + 1),
        _ => name.strip_prefix("dma")?.parse::<u64>().ok().filter(|&e| e < dma_engines).map(|e| e as usize),
    }
}

/// Adds property `name` to the op being parsed.
pub fn prop<'s>(ctx: &mut Context, op: &mut ParsedOp<'s>, name: &str, value: AttrId) {
    let key = ctx.sym(name);
    op.props.push((key, value));
}

/// Adds the `i64` property `name`.
pub fn int_prop_of<'s>(ctx: &mut Context, op: &mut ParsedOp<'s>, name: &str, value: i64) {
    let i64t = ctx.int_type(64);
    let value = ctx.int_attr(value as i128, i64t);
    prop(ctx, op, name, value);
}

/// Parses the keyword `name` when it comes next, as a unit property (`relu`, `accumulate`).
pub fn parse_flag<'s>(p: &mut CustomParser<'_, 's>, op: &mut ParsedOp<'s>, name: &str) {
    if p.eat_keyword(name) {
        let unit = p.ctx().attr(Attr::Unit);
        prop(p.ctx(), op, name, unit);
    }
}

/// Parses the function an instruction applies (`relu`, `sum`, ...), its first word, into the `kind` property;
/// `what` says what is expected.
pub fn parse_kind<'s>(p: &mut CustomParser<'_, 's>, op: &mut ParsedOp<'s>, what: &str) -> Result<(), Diagnostic> {
    let kind = match p.next_item() {
        Some(AsmItem::Keyword(k, _)) => k,
        _ => return Err(p.expected(what)),
    };
    let value = p.ctx().string_attr(kind);
    prop(p.ctx(), op, "kind", value);
    Ok(())
}

/// Prints ` kind` (an error for a kind that is not a bare word).
pub fn print_kind(p: &mut OpPrinter<'_, '_>, kind: &str) -> fmt::Result {
    if !crate::ir::print::is_bare_identifier(kind) {
        return Err(fmt::Error);
    }
    p.write(&format!(" {kind}"));
    Ok(())
}

/// Parses `queue(name)` into the `queue` property.
pub fn parse_queue<'s>(p: &mut CustomParser<'_, 's>, op: &mut ParsedOp<'s>) -> Result<(), Diagnostic> {
    p.expect_keyword("queue")?;
    let (items, loc) = p.group(Delim::Paren)?;
    let mut inner = p.nested(items, loc);
    let name = match inner.next_item() {
        Some(AsmItem::Keyword(k, _)) => k,
        _ => return Err(inner.expected("a queue name (dma0 ... dma7, main, sub)")),
    };
    inner.expect_end()?;
    let ctx = p.ctx();
    let (key, value) = (ctx.sym("queue"), ctx.string_attr(name));
    op.props.push((key, value));
    Ok(())
}

/// Parses `keyword(%s = 1, %t = 2)` when present: the semaphores as operands, the values as the property `keyword`.
pub fn parse_syncs<'s>(p: &mut CustomParser<'_, 's>, op: &mut ParsedOp<'s>, keyword: &str) -> Result<(), Diagnostic> {
    let mut values = Vec::new();
    if p.eat_keyword(keyword) {
        let (items, loc) = p.group(Delim::Paren)?;
        let mut inner = p.nested(items, loc);
        while !inner.at_end() {
            if !values.is_empty() {
                inner.expect_punct(",")?;
            }
            let (name, at) = inner.value()?;
            inner.expect_punct("=")?;
            values.push(int(&mut inner)?);
            let ty = inner.env.value_type(name); // A kernel argument is known by its signature's hint.
            op.operands.push((name, at, ty));
        }
    }
    let ctx = p.ctx();
    let list = int_list(ctx, &values);
    let key = ctx.sym(keyword);
    op.props.push((key, list));
    Ok(())
}

/// Parses the end every instruction shares, `: T [-> U] [signals(...)] [attributes {...}]`: the element type as
/// the `dtype` property (and a converting instruction's result type as `out_dtype`), and the semaphores signalled
/// after the operands parsed so far.
pub fn parse_tail<'s>(p: &mut CustomParser<'_, 's>, op: &mut ParsedOp<'s>) -> Result<(), Diagnostic> {
    p.expect_punct(":")?;
    let dtype = elem(p)?;
    let out = if p.eat_punct("->") { Some(elem(p)?) } else { None };
    parse_syncs(p, op, "signals")?;
    p.attr_dict(op);
    p.expect_end()?;
    let ctx = p.ctx();
    for (name, t) in [("dtype", Some(dtype)), ("out_dtype", out)] {
        if let Some(t) = t {
            let (key, value) = (ctx.sym(name), ctx.string_attr(crate::dialects::npu::types::elem_name(t)));
            op.props.push((key, value));
        }
    }
    Ok(())
}

/// Prints the end every instruction shares: ` : T [-> U]`, the signals (semaphore operands from `first_signal`
/// on) and the attributes not in `elided` (nor `dtype`, `out_dtype`, `queue`, `waits`, `signals`).
pub fn print_tail(p: &mut OpPrinter<'_, '_>, op: OpId, first_signal: usize, elided: &[String]) -> fmt::Result {
    let ctx = p.ctx();
    let ty = |name: &str| str_prop(ctx, op, name).map(|d| elem_type(d).map(|_| d.to_string()));
    let (dtype, out) = (ty("dtype"), ty("out_dtype"));
    p.write(&format!(" : {}", dtype.ok_or(fmt::Error)?.map_err(|_| fmt::Error)?));
    if let Some(out) = out {
        p.write(&format!(" -> {}", out.map_err(|_| fmt::Error)?));
    }
    print_syncs(p, op, "signals", first_signal)?;
    let common = ["dtype", "out_dtype", "queue", "waits", "signals"];
    let elided: Vec<&str> = elided.iter().map(String::as_str).chain(common).collect();
    p.attr_dict(op, &elided)
}

/// Parses an integer literal (a leading `-` allowed).
pub fn int(p: &mut CustomParser<'_, '_>) -> Result<i64, Diagnostic> {
    let loc = p.loc();
    let attr = p.signed_attr()?;
    let value = p.ctx().attr_data(attr).as_int();
    value.and_then(|v| i64::try_from(v).ok()).ok_or_else(|| Diagnostic::error(loc, "expected an integer"))
}

/// Parses an element type (`bf16`, `f32`, `i8`, `i32`, `f16`, `f8e4m3`), written as a type or a bare word.
pub fn elem(p: &mut CustomParser<'_, '_>) -> Result<ElemType, Diagnostic> {
    let loc = p.loc();
    let name = match p.next_item() {
        Some(AsmItem::Type(t, _)) => crate::ir::print::type_to_string(p.ctx(), t),
        Some(AsmItem::Keyword(k, _)) => k.to_string(),
        _ => return Err(Diagnostic::error(loc, "expected an element type")),
    };
    elem_type(&name).map_err(|e| Diagnostic::error(loc, e.message))
}

/// Parses `[(a, b, ...), ...]`, tuples of `arity` integers, into an array of integer arrays.
pub fn parse_tuples(p: &mut CustomParser<'_, '_>, arity: usize) -> Result<AttrId, Diagnostic> {
    let (items, loc) = p.group(Delim::Square)?;
    let mut list = p.nested(items, loc);
    let mut tuples = Vec::new();
    while !list.at_end() {
        if !tuples.is_empty() {
            list.expect_punct(",")?;
        }
        let (items, loc) = list.group(Delim::Paren)?;
        let mut tuple = list.nested(items, loc);
        let mut values = Vec::with_capacity(arity);
        for k in 0..arity {
            if k > 0 {
                tuple.expect_punct(",")?;
            }
            values.push(int(&mut tuple)?);
        }
        tuple.expect_end()?;
        tuples.push(int_list(list.ctx(), &values));
    }
    Ok(p.ctx().attr(Attr::Array(tuples.into())))
}

/// Property `name` of `op` as tuples of `arity` integers, each tuple's first (a loop count) fitting a `u32`.
pub fn loops_prop(ctx: &Context, op: OpId, name: &str, arity: usize) -> Result<Vec<Vec<i64>>, String> {
    let bad = || format!("'{name}' must be a list of [count, stride{}]", if arity == 3 { ", stride" } else { "" });
    let Some(Attr::Array(items)) = ctx.op_attr(op, name).map(|a| ctx.attr_data(a)) else { return Err(bad()) };
    let mut out = Vec::with_capacity(items.len());
    for &item in items.iter() {
        let Attr::Array(tuple) = ctx.attr_data(item) else { return Err(bad()) };
        let values: Vec<i64> = tuple
            .iter()
            .map(|&v| ctx.attr_data(v).as_int().and_then(|v| i64::try_from(v).ok()))
            .collect::<Option<_>>()
            .filter(|v: &Vec<i64>| v.len() == arity)
            .ok_or_else(bad)?;
        if u32::try_from(values[0]).is_err() {
            return Err(format!("a loop count of {} does not fit a u32", values[0]));
        }
        out.push(values);
    }
    Ok(out)
}

/// An array attribute of `i64` integers.
pub fn int_list(ctx: &mut Context, values: &[i64]) -> AttrId {
    let i64t = ctx.int_type(64);
    let items: Vec<AttrId> = values.iter().map(|&v| ctx.int_attr(v as i128, i64t)).collect();
    ctx.attr(Attr::Array(items.into()))
}

/// The integers of property `name` of `op` (`None` when absent or not a list of integers).
pub fn ints(ctx: &Context, op: OpId, name: &str) -> Option<Vec<i64>> {
    let Attr::Array(items) = ctx.attr_data(ctx.op_attr(op, name)?) else { return None };
    items.iter().map(|&i| ctx.attr_data(i).as_int().and_then(|v| i64::try_from(v).ok())).collect()
}

/// The integer property `name` of `op`.
pub fn int_prop(ctx: &Context, op: OpId, name: &str) -> Option<i64> {
    ctx.attr_data(ctx.op_attr(op, name)?).as_int().and_then(|v| i64::try_from(v).ok())
}

/// The element type in property `name` of `op` (`dtype`, `out_dtype`).
pub fn elem_prop(ctx: &Context, op: OpId, name: &str) -> Result<ElemType, String> {
    elem_type(str_prop(ctx, op, name).ok_or(format!("needs '{name}'"))?).map_err(|e| e.message)
}

/// Whether the unit property `name` (`relu`, `accumulate`) is there; any other value is an error.
pub fn unit_flag(ctx: &Context, op: OpId, name: &str) -> Result<bool, String> {
    match ctx.op_attr(op, name).map(|a| ctx.attr_data(a)) {
        None => Ok(false),
        Some(Attr::Unit) => Ok(true),
        Some(_) => Err(format!("'{name}' is a unit attribute: present or absent, with no value")),
    }
}

/// The string property `name` of `op`.
pub fn str_prop<'c>(ctx: &'c Context, op: OpId, name: &str) -> Option<&'c str> {
    ctx.attr_data(ctx.op_attr(op, name)?).as_str()
}

/// An instruction's queue and semaphores: the semaphore operands follow its `buffers` operands.
pub struct Sync {
    /// The queue's name.
    pub queue: String,
    /// `(semaphore, value)` waited for.
    pub waits: Vec<(ValueId, u64)>,
    /// `(semaphore, value)` signalled.
    pub signals: Vec<(ValueId, u64)>,
}

/// Decodes the queue and semaphores of `op`, whose first `buffers` operands are buffers.
pub fn sync_of(ctx: &Context, op: OpId, buffers: usize) -> Result<Sync, String> {
    let queue = str_prop(ctx, op, "queue").ok_or("needs a queue")?.to_string();
    let waits = ints(ctx, op, "waits").ok_or("'waits' must be a list of integers")?;
    let signals = ints(ctx, op, "signals").ok_or("'signals' must be a list of integers")?;
    let operands: Vec<ValueId> = ctx.body.operands(op).collect();
    if operands.len() != buffers + waits.len() + signals.len() {
        return Err(format!(
            "has {} operands, but {buffers} buffers, {} waits and {} signals",
            operands.len(),
            waits.len(),
            signals.len()
        ));
    }
    let value = |v: i64| u64::try_from(v).map_err(|_| format!("semaphore value {v} is negative"));
    let pair = |(&s, &v): (&ValueId, &i64)| value(v).map(|v| (s, v));
    let (waited, signalled) = operands[buffers..].split_at(waits.len());
    let waits = waited.iter().zip(&waits).map(pair).collect::<Result<_, _>>()?;
    let signals = signalled.iter().zip(&signals).map(pair).collect::<Result<_, _>>()?;
    Ok(Sync { queue, waits, signals })
}

/// Prints ` queue(name)`.
pub fn print_queue(p: &mut OpPrinter<'_, '_>, op: OpId) -> fmt::Result {
    let name = str_prop(p.ctx(), op, "queue").ok_or(fmt::Error)?;
    if !crate::ir::print::is_bare_identifier(name) {
        return Err(fmt::Error);
    }
    p.write(&format!(" queue({name})"));
    Ok(())
}

/// Prints ` keyword(%s = 1, ...)` for the semaphore operands from `first` on, when there are any.
pub fn print_syncs(p: &mut OpPrinter<'_, '_>, op: OpId, keyword: &str, first: usize) -> fmt::Result {
    let values = ints(p.ctx(), op, keyword).ok_or(fmt::Error)?;
    if values.is_empty() {
        return Ok(());
    }
    p.write(&format!(" {keyword}("));
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            p.write(", ");
        }
        let sem = p.ctx().body.operand(op, first + i);
        p.value(sem)?;
        p.write(&format!(" = {v}"));
    }
    p.write(")");
    Ok(())
}
