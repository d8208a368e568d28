//! `func.func`: a named function with a signature and an optional body (absent for declarations).
//!
//! Pretty form: `func.func [private] @name(%arg0: i32, ...) -> (results) attributes {...} { body }`, or with
//! bare argument types for a declaration: `func.func private @f(i32) -> i32`.

use super::signature;
use crate::ir::asm::{AsmItem, CustomParser, Delim, ParsedOp};
use crate::ir::format::parse_result_types;
use crate::ir::print::OpPrinter;
use crate::ir::symbols::symbol_name;
use crate::ir::verify::op_error;
use crate::ir::{Arity, AttrKind, AttrSpec, Context, Diagnostic, OpId, OpInfo, OpTrait, Syntax};
use std::fmt;

/// The registration of `func.func`.
pub const INFO: OpInfo = OpInfo {
    regions: Arity::Exact(1),
    traits: &[OpTrait::IsolatedFromAbove, OpTrait::Symbol],
    attrs: &[
        AttrSpec { name: "sym_name", kind: AttrKind::String, optional: false, default: None },
        AttrSpec { name: "function_type", kind: AttrKind::FunctionType, optional: false, default: None },
        AttrSpec { name: "sym_visibility", kind: AttrKind::String, optional: true, default: None },
        AttrSpec { name: "arg_attrs", kind: AttrKind::Array, optional: true, default: None },
        AttrSpec { name: "res_attrs", kind: AttrKind::Array, optional: true, default: None },
    ],
    verify: Some(verify),
    syntax: Syntax::Custom { parse, print },
    ..OpInfo::new("func.func", "a function with a signature and a body")
};

const VISIBILITIES: [&str; 3] = ["private", "public", "nested"];

fn verify(ctx: &Context, op: OpId) -> Result<(), Diagnostic> {
    if let Some(v) = ctx.op_attr(op, "sym_visibility").and_then(|a| ctx.attr_data(a).as_str()) {
        if !VISIBILITIES.contains(&v) {
            let msg =
                format!("visibility expected to be one of [\"public\", \"private\", \"nested\"], but got \"{v}\"");
            return Err(op_error(ctx, op, msg));
        }
    }
    let (inputs, _) = signature(ctx, op).ok_or_else(|| op_error(ctx, op, "requires a function type"))?;
    let region = ctx.body.regions(op)[0];
    let Some(&entry) = ctx.body.region(region).blocks.first() else {
        let visibility = ctx.op_attr(op, "sym_visibility").and_then(|a| ctx.attr_data(a).as_str());
        if visibility.is_none_or(|v| v == "public") {
            return Err(op_error(ctx, op, "symbol declaration cannot have public visibility"));
        }
        return Ok(());
    };
    let args = &ctx.body.block(entry).args;
    if args.len() != inputs.len() {
        let msg = format!("entry block must have {} arguments to match function signature", inputs.len());
        return Err(op_error(ctx, op, msg));
    }
    for (i, (&arg, &ty)) in args.iter().zip(&inputs).enumerate() {
        let actual = ctx.body.value_type(arg);
        if actual != ty {
            let msg = format!(
                "type of entry block argument #{i}('{}') must match the type of the corresponding argument in function signature('{}')",
                crate::ir::print::type_to_string(ctx, actual),
                crate::ir::print::type_to_string(ctx, ty)
            );
            return Err(op_error(ctx, op, msg));
        }
    }
    Ok(())
}

fn parse<'s>(p: &mut CustomParser<'_, 's>) -> Result<ParsedOp<'s>, Diagnostic> {
    let mut op = ParsedOp::default();
    if let Some(AsmItem::Keyword(k, _)) = p.peek() {
        if VISIBILITIES.contains(k) {
            let k = k.to_string();
            p.next_item();
            let (key, value) = (p.ctx().sym("sym_visibility"), p.ctx().string_attr(&k));
            op.props.push((key, value));
        }
    }
    let name = p.symbol_name()?;
    let (items, loc) = p.group(Delim::Paren)?;
    let (inputs, entry_args) = p.nested(items, loc).arguments()?;
    let results = if p.eat_punct("->") { parse_result_types(p)? } else { Vec::new() };
    p.attr_dict(&mut op);
    let ctx = p.ctx();
    let fn_type = ctx.function_type(&inputs, &results);
    let entries = [("sym_name", ctx.string_attr(&name)), ("function_type", ctx.type_attr(fn_type))];
    for (k, v) in entries {
        let key = ctx.sym(k);
        op.props.push((key, v));
    }
    let region = match p.peek() {
        Some(AsmItem::Region(..)) => p.region()?,
        _ => {
            let r = p.ctx().body.create_region();
            crate::ir::asm::ParsedRegion { region: r, pending: u32::MAX }
        }
    };
    p.expect_end()?;
    op.regions.push((region, entry_args));
    Ok(op)
}

fn print(p: &mut OpPrinter<'_, '_>, op: OpId) -> fmt::Result {
    let ctx = p.ctx();
    let (inputs, results) = signature(ctx, op).ok_or(fmt::Error)?;
    let name = symbol_name(ctx, op).ok_or(fmt::Error)?;
    if let Some(vis) = ctx.op_attr(op, "sym_visibility").and_then(|a| ctx.attr_data(a).as_str()) {
        if !VISIBILITIES.contains(&vis) {
            return Err(fmt::Error);
        }
        p.write(" ");
        p.write(vis);
    }
    p.write(" ");
    p.symbol_name(name)?;
    let region = *ctx.body.regions(op).first().ok_or(fmt::Error)?;
    let entry = ctx.body.region(region).blocks.first().copied();
    p.write("(");
    match entry {
        Some(block) => {
            if ctx.body.block(block).args.len() != inputs.len() {
                return Err(fmt::Error);
            }
            for i in 0..inputs.len() {
                if i > 0 {
                    p.write(", ");
                }
                p.block_arg(block, i)?;
            }
        }
        None => p.types(&inputs)?,
    }
    p.write(")");
    if !results.is_empty() {
        p.write(" -> ");
        p.result_types(&results)?;
    }
    p.attr_dict(op, &["sym_name", "function_type", "sym_visibility"])?;
    if entry.is_some() {
        p.write(" ");
        p.region(region, false)?;
    }
    Ok(())
}
