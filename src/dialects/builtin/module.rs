//! `builtin.module`: a symbol table holding one graph region with one block and no terminator.
//!
//! Pretty form: `builtin.module @name? attributes {...}? { ... }`.

use crate::ir::asm::{CustomParser, ParsedOp};
use crate::ir::print::OpPrinter;
use crate::ir::symbols::symbol_name;
use crate::ir::{Arity, AttrKind, AttrSpec, Diagnostic, OpId, OpInfo, OpTrait, Syntax};
use std::fmt;

/// The registration of `builtin.module`.
pub const INFO: OpInfo = OpInfo {
    regions: Arity::Exact(1),
    traits: &[
        OpTrait::IsolatedFromAbove,
        OpTrait::SymbolTable,
        OpTrait::NoTerminator,
        OpTrait::SingleBlock,
        OpTrait::GraphRegions,
    ],
    attrs: &[
        AttrSpec { name: "sym_name", kind: AttrKind::String, optional: true, default: None },
        AttrSpec { name: "sym_visibility", kind: AttrKind::String, optional: true, default: None },
    ],
    syntax: Syntax::Custom { parse, print },
    ..OpInfo::new("builtin.module", "a top-level container of ops with a symbol table")
};

fn parse<'s>(p: &mut CustomParser<'_, 's>) -> Result<ParsedOp<'s>, Diagnostic> {
    let mut op = ParsedOp::default();
    if let Some(crate::ir::asm::AsmItem::Symbol(..)) = p.peek() {
        let name = p.symbol_name()?;
        let key = p.ctx().sym("sym_name");
        let value = p.ctx().string_attr(&name);
        op.props.push((key, value));
    }
    p.attr_dict(&mut op);
    let region = p.region()?;
    p.expect_end()?;
    if p.ctx().body.region(region.region).blocks.is_empty() {
        let ctx = p.ctx();
        let block = ctx.body.create_block();
        ctx.body.append_block(region.region, block);
    }
    op.regions.push((region, Vec::new()));
    Ok(op)
}

fn print(p: &mut OpPrinter<'_, '_>, op: OpId) -> fmt::Result {
    let ctx = p.ctx();
    if let Some(name) = symbol_name(ctx, op) {
        p.write(" ");
        p.symbol_name(name)?;
    }
    p.attr_dict(op, &["sym_name"])?;
    let &[region] = ctx.body.regions(op) else { return Err(fmt::Error) };
    let blocks = &ctx.body.region(region).blocks;
    if blocks.len() == 1 && ctx.body.first_op(blocks[0]).is_none() && ctx.body.block(blocks[0]).args.is_empty() {
        p.write(" {");
        p.newline();
        p.write("}");
        return Ok(());
    }
    if blocks.len() != 1 {
        return Err(fmt::Error);
    }
    p.write(" ");
    p.region(region, false)
}
