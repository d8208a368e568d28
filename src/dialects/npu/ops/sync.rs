//! Synchronization outside any queue: `%s = npu.semaphore` makes a timeline semaphore (a `u64` that starts at 0
//! and only increases; instructions wait for and signal values of it), and `npu.barrier` waits until every queue
//! has drained.

use crate::dialects::npu::types::sem_type;
use crate::ir::asm::{CustomParser, ParsedOp};
use crate::ir::print::OpPrinter;
use crate::ir::{Arity, Diagnostic, OpId, OpInfo, OpTrait, Syntax};
use std::fmt;

/// The registration of `npu.semaphore`.
pub const SEMAPHORE: OpInfo = OpInfo {
    results: Arity::Exact(1),
    traits: &[OpTrait::HasParent(&["npu.kernel"])],
    syntax: Syntax::Custom { parse: parse_semaphore, print: print_semaphore },
    ..OpInfo::new("npu.semaphore", "a timeline semaphore, starting at 0")
};

/// The registration of `npu.barrier`.
pub const BARRIER: OpInfo = OpInfo {
    traits: &[OpTrait::HasParent(&["npu.kernel"])],
    syntax: Syntax::Format("attr-dict"),
    ..OpInfo::new("npu.barrier", "waits until every queue has drained")
};

fn parse_semaphore<'s>(p: &mut CustomParser<'_, 's>) -> Result<ParsedOp<'s>, Diagnostic> {
    let mut op = ParsedOp::default();
    p.attr_dict(&mut op);
    p.expect_end()?;
    op.result_types.push(sem_type(p.ctx()));
    Ok(op)
}

fn print_semaphore(p: &mut OpPrinter<'_, '_>, op: OpId) -> fmt::Result {
    p.attr_dict(op, &[])
}
