//! `symbol-dce`: erases private symbols (functions, nested modules) that nothing references, repeating until no
//! more can go, as MLIR's pass of the same name.

use super::pass::{Changed, Pass, PassEnv, PassInfo};
use super::registry::PassEntry;
use crate::ir::footprint::Child;
use crate::ir::interner::FxHashSet;
use crate::ir::registry::OpTrait;
use crate::ir::symbols::symbol_name;
use crate::ir::walk::preorder;
use crate::ir::{Attr, AttrId, Context, Diagnostic, OpId, Symbol};
use std::collections::BTreeSet;

/// The registration of `symbol-dce`.
pub const ENTRY: PassEntry = PassEntry { info: &INFO, create: |_| Box::new(SymbolDce) };

static INFO: PassInfo = PassInfo {
    argument: "symbol-dce",
    name: "SymbolDCE",
    description: "Eliminate dead symbols",
    anchor: None,
    options: &[],
    statistics: &[("num-dce'd", "Number of symbols DCE'd")],
};

struct SymbolDce;

impl Pass for SymbolDce {
    fn info(&self) -> &'static PassInfo {
        &INFO
    }

    fn run(&mut self, ctx: &mut Context, op: OpId, env: &mut PassEnv<'_>) -> Result<Changed, Vec<Diagnostic>> {
        if !is_symbol_table(ctx, op) {
            let msg = "was scheduled to run under SymbolDCE, but does not define a symbol table";
            return Err(vec![crate::ir::verify::op_error(ctx, op, msg)]);
        }
        let mut changed = Changed::No;
        loop {
            let dead = dead_symbols(ctx, op);
            if dead.is_empty() {
                return Ok(changed);
            }
            for d in &dead {
                ctx.body.erase_op(*d);
            }
            env.stats.add("num-dce'd", dead.len() as u64);
            changed = Changed::Yes;
        }
    }
}

fn is_symbol_table(ctx: &Context, op: OpId) -> bool {
    ctx.registered(op).is_some_and(|r| r.info.has_trait(OpTrait::SymbolTable))
}

/// Private symbols directly inside symbol tables under `root` whose name no symbol reference mentions.
fn dead_symbols(ctx: &Context, root: OpId) -> Vec<OpId> {
    let nested = preorder(&ctx.body, root);
    let all: Vec<OpId> = std::iter::once(root).chain(nested.iter().copied()).collect();
    let mut referenced = BTreeSet::new();
    let mut seen = FxHashSet::default();
    for &op in &all {
        let data = ctx.body.op(op);
        for item in ctx.distinct_within([Child::Attr(data.attrs), Child::Attr(data.props)], &mut seen) {
            if let Child::Attr(a) = item {
                collect_refs(ctx, a, &mut referenced);
            }
        }
    }
    let is_table = |op: OpId| is_symbol_table(ctx, op);
    let private =
        |op: OpId| ctx.op_attr(op, "sym_visibility").and_then(|a| ctx.attr_data(a).as_str()) == Some("private");
    nested
        .into_iter()
        .filter(|&op| ctx.body.parent_op(op).is_some_and(is_table) && private(op))
        .filter(|&op| {
            symbol_name(ctx, op).is_some_and(|n| ctx.symbols.lookup(n).is_none_or(|s| !referenced.contains(&s)))
        })
        .collect()
}

/// The symbols a reference attribute names (root and nested parts); nothing for other attributes.
fn collect_refs(ctx: &Context, attr: AttrId, out: &mut BTreeSet<Symbol>) {
    if let Attr::SymbolRef { root, nested } = ctx.attr_data(attr) {
        out.insert(*root);
        out.extend(nested.iter().copied());
    }
}
