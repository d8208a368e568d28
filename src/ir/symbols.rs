//! Symbol tables: ops that define a symbol (`sym_name`) inside an op with the `SymbolTable` trait, and lookup of
//! `@a::@b` references.

use super::attrs::Attr;
use super::body::OpId;
use super::interner::FxBuild;
use super::Context;
use indexmap::IndexMap;

/// The name an op defines, if it has a string `sym_name` attribute.
pub fn symbol_name(ctx: &Context, op: OpId) -> Option<&str> {
    ctx.op_attr(op, "sym_name").and_then(|a| ctx.attr_data(a).as_str())
}

/// The symbols defined directly inside the (single-region) symbol table op `table`, in order; a repeated name
/// keeps its first definition.
pub fn symbol_table(ctx: &Context, table: OpId) -> IndexMap<String, OpId, FxBuild> {
    let mut map = IndexMap::default();
    for &r in ctx.body.regions(table) {
        for &b in &ctx.body.region(r).blocks {
            for op in ctx.body.block_ops(b) {
                if let Some(name) = symbol_name(ctx, op) {
                    map.entry(name.to_string()).or_insert(op);
                }
            }
        }
    }
    map
}

/// Resolves a symbol reference attribute starting from the symbol table `table`.
pub fn lookup(ctx: &Context, table: OpId, reference: super::AttrId) -> Option<OpId> {
    let Attr::SymbolRef { root, nested } = ctx.attr_data(reference) else { return None };
    let mut op = *symbol_table(ctx, table).get(ctx.str(*root))?;
    for n in nested.iter() {
        op = *symbol_table(ctx, op).get(ctx.str(*n))?;
    }
    Some(op)
}
