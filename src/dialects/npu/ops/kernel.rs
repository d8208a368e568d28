//! `npu.kernel @name(%a: !npu.buf<hbm, 64 x f32>, ...) { ... }`: an NPU program. Its arguments are the HBM buffers
//! the harness binds to arrays; its one block holds the instructions in program order and needs no terminator
//! (the kernel ends when every queue has drained).

use crate::dialects::npu::types::as_buf;
use crate::ir::asm::{AsmItem, CustomParser, Delim, ParsedOp};
use crate::ir::print::OpPrinter;
use crate::ir::symbols::symbol_name;
use crate::ir::verify::op_error;
use crate::ir::{Arity, AttrKind, AttrSpec, Context, Diagnostic, OpId, OpInfo, OpTrait, Syntax};
use std::fmt;

/// The kernel attribute saying, per argument, which tensor of the graph it was lowered from the buffer holds: a
/// list of `{role = "source" | "sink", name, shape, dtype, layout}` or `{role = "scratch"}`, one per argument
/// (`convert-teg-to-npu` writes it; `tap-run` binds named inputs and writes named outputs by it).
pub const TENSORS_ATTR: &str = "npu.tensors";

/// The registration of `npu.kernel`.
pub const KERNEL: OpInfo = OpInfo {
    regions: Arity::Exact(1),
    traits: &[OpTrait::IsolatedFromAbove, OpTrait::Symbol, OpTrait::SingleBlock, OpTrait::NoTerminator],
    attrs: &[AttrSpec { name: "sym_name", kind: AttrKind::String, optional: false, default: None }],
    verify: Some(verify),
    syntax: Syntax::Custom { parse, print },
    canonicalization: &[&crate::dialects::npu::simplify_sync::SimplifySync],
    ..OpInfo::new("npu.kernel", "an NPU program: HBM buffers in, instructions in program order")
};

fn verify(ctx: &Context, op: OpId) -> Result<(), Diagnostic> {
    let region = ctx.body.regions(op)[0];
    let Some(&entry) = ctx.body.region(region).blocks.first() else {
        return Err(op_error(ctx, op, "needs a body"));
    };
    let cfg = crate::dialects::npu::machine_attr::machine_of(ctx, op).map_err(|m| op_error(ctx, op, m))?;
    let mut per_chip: std::collections::BTreeMap<u64, u64> = Default::default();
    for (i, &arg) in ctx.body.block(entry).args.iter().enumerate() {
        let Some(t) = as_buf(ctx, ctx.body.value_type(arg)) else {
            return Err(op_error(ctx, op, format!("argument #{i} must be an !npu.buf (an HBM buffer)")));
        };
        if t.chip >= cfg.chips {
            return Err(op_error(
                ctx,
                op,
                format!("argument #{i} is on chip {}; the machine has {}", t.chip, cfg.chips),
            ));
        }
        let used = per_chip.entry(t.chip).or_default();
        *used = used.saturating_add(t.bytes());
        if *used > cfg.hbm_bytes {
            return Err(op_error(
                ctx,
                op,
                format!("the buffers on chip {} take {} B, more than its {} B of HBM", t.chip, used, cfg.hbm_bytes),
            ));
        }
    }
    Ok(())
}

fn parse<'s>(p: &mut CustomParser<'_, 's>) -> Result<ParsedOp<'s>, Diagnostic> {
    let mut op = ParsedOp::default();
    let name = p.symbol_name()?;
    let (items, loc) = p.group(Delim::Paren)?;
    let (_, args) = p.nested(items, loc).arguments()?;
    p.attr_dict(&mut op);
    let ctx = p.ctx();
    let (key, value) = (ctx.sym("sym_name"), ctx.string_attr(&name));
    op.props.push((key, value));
    let region = match p.peek() {
        Some(AsmItem::Region(..)) => p.region()?,
        _ => return Err(p.expected("the kernel's body")),
    };
    p.expect_end()?;
    op.regions.push((region, args));
    Ok(op)
}

fn print(p: &mut OpPrinter<'_, '_>, op: OpId) -> fmt::Result {
    let ctx = p.ctx();
    let name = symbol_name(ctx, op).ok_or(fmt::Error)?;
    let region = *ctx.body.regions(op).first().ok_or(fmt::Error)?;
    let entry = ctx.body.region(region).blocks.first().copied().ok_or(fmt::Error)?;
    p.write(" ");
    p.symbol_name(name)?;
    p.write("(");
    for i in 0..ctx.body.block(entry).args.len() {
        if i > 0 {
            p.write(", ");
        }
        p.block_arg(entry, i)?;
    }
    p.write(")");
    p.attr_dict(op, &["sym_name"])?;
    p.write(" ");
    p.region(region, false)
}
