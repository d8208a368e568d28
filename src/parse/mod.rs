//! The parser: text → verified-ready IR. A logos lexer ([`lexer`]) feeds a token adapter ([`tokens`]) that
//! feeds the lalrpop grammar in `grammar/tap.lalrpop`, whose actions build IR through [`state::ParseState`].
//!
//! Parsing never panics on bad input: every problem becomes a [`Diagnostic`], and the grammar recovers at op
//! granularity so one run reports as many errors as it can.

mod errors;
pub mod lexer;
mod literals;
mod locations;
pub mod state;
pub mod tokens;

lalrpop_util::lalrpop_mod!(
    #[allow(clippy::all, missing_docs, unused)]
    grammar,
    "/tap.rs"
);

use crate::ir::{Context, Diagnostic, FileId, Loc, OpId, OpSpec, Severity};
use state::ParseState;
use std::sync::Arc;
use tokens::Tokens;

/// Parses a whole file into a `builtin.module` (wrapping the top-level ops unless the file is one module op).
pub fn parse_file(ctx: &mut Context, name: &str, text: &str) -> Result<OpId, Vec<Diagnostic>> {
    let file = ctx.sources.add(name, Arc::from(text));
    parse_range(ctx, file, 0..text.len())
}

/// Parses the byte range `range` of a loaded file (one chunk of `--split-input-file`); locations point into the
/// whole file.
pub fn parse_range(ctx: &mut Context, file: FileId, range: std::ops::Range<usize>) -> Result<OpId, Vec<Diagnostic>> {
    let source = ctx.sources.file(file).text.clone();
    let text = &source[range.clone()];
    let mut tokens = Tokens::new(text, file, range.start);
    let mut state = ParseState::new(ctx, file, range.start);
    let result = grammar::ModuleParser::new().parse(&mut state, &mut tokens);
    if let Err(e) = result {
        if tokens.diags.is_empty() {
            state.syntax_error(e);
        }
    }
    state.finish_names();
    if let Some(fatal) = tokens.fatal_at {
        state.diags.retain(|d| matches!(d.loc, Loc::Source { offset, .. } if (offset as usize) < fatal));
    }
    let mut diags = std::mem::take(&mut tokens.diags);
    diags.append(&mut state.diags);
    let module = wrap_module(&mut state, range.start);
    state.resolve_loc_aliases(module);
    diags.append(&mut state.diags);
    diags.sort_by_key(|d| match d.loc {
        Loc::Source { offset, .. } => offset,
        _ => u32::MAX,
    });
    if diags.iter().any(|d| d.severity == Severity::Error) {
        Err(diags)
    } else {
        Ok(module)
    }
}

/// The single top-level `builtin.module`, or a new module holding every top-level op.
fn wrap_module(state: &mut ParseState<'_, '_>, start: usize) -> OpId {
    let region = state.top_level();
    let body = &state.ctx.body;
    let blocks = &body.region(region).blocks;
    if let [block] = blocks[..] {
        if let Some(op) = body.first_op(block) {
            let single = body.next_op(op).is_none();
            if single && state.ctx.op_name(op) == "builtin.module" {
                state.ctx.body.unlink_op(op);
                return op;
            }
        }
    }
    if state.ctx.body.region(region).blocks.is_empty() {
        let block = state.ctx.body.create_block();
        state.ctx.body.append_block(region, block);
    }
    let name = state.ctx.sym("builtin.module");
    let empty = state.ctx.empty_dict();
    let _ = start;
    let loc = state.loc_at(0);
    state.ctx.body.create_op(OpSpec {
        name,
        loc,
        operands: &[],
        result_types: &[],
        attrs: empty,
        props: empty,
        regions: &[region],
        successors: &[],
    })
}
