//! Aliases a whole-module print defines for large values it would otherwise write out several times:
//! `!type = ...` and `#attr = ...` before the module, `#loc = loc(...)` after it, as mlir-opt prints them.
//!
//! Interned values form a DAG, and a chain of aliases that each use the previous one twice describes a tree of
//! exponential size in a few lines. A value is aliased when it is large (at least [`ALIAS_MIN_NODES`] nodes as a
//! tree) and used more than once, counting uses by ops and by other values; every other value is small or
//! written once, so the text stays linear in the distinct values. The uses are counted in one walk over the DAG
//! that visits each distinct value once, with an explicit stack.

use super::attrs::Spelling;
use crate::ir::attrs::AttrId;
use crate::ir::body::OpId;
use crate::ir::footprint::Child as Item;
use crate::ir::interner::{FxHashMap, FxHashSet};
use crate::ir::location::Loc;
use crate::ir::types::TypeId;
use crate::ir::{walk, Context};
use std::fmt::{self, Write};

/// The fewest nodes a value must have, written out as a tree, to be printed through an alias when it is used
/// more than once.
pub const ALIAS_MIN_NODES: u64 = 1024;

/// The aliases of one print, with their definitions in an order where every alias is defined before a
/// definition uses it.
#[derive(Debug, Default)]
pub struct Aliases {
    names: FxHashMap<Item, Box<str>>,
    order: Vec<Item>,
}

impl Aliases {
    /// The aliases for printing everything under `root`; locations only when `debug_info`.
    pub fn compute(ctx: &Context, root: OpId, debug_info: bool) -> Aliases {
        let mut uses = Uses::default();
        for op in walk::preorder(&ctx.body, root) {
            uses.op(ctx, op, debug_info);
        }
        uses.finish(ctx)
    }

    /// The alias of `ty`, if it has one.
    pub fn type_name(&self, ty: TypeId) -> Option<&str> {
        self.name(Item::Type(ty))
    }

    /// The alias of `attr`, if it has one.
    pub fn attr_name(&self, attr: AttrId) -> Option<&str> {
        self.name(Item::Attr(attr))
    }

    /// The alias of `loc`, if it has one.
    pub fn loc_name(&self, loc: Loc) -> Option<&str> {
        match loc {
            Loc::Id(_) => self.name(Item::Loc(loc)),
            _ => None,
        }
    }

    fn name(&self, item: Item) -> Option<&str> {
        if self.names.is_empty() {
            return None;
        }
        self.names.get(&item).map(|n| &**n)
    }

    /// Writes `!name = type` and `#name = attr` lines, one per alias, in definition order.
    pub fn write_definitions(&self, ctx: &Context, out: &mut dyn Write) -> fmt::Result {
        let spell = Spelling::with_aliases(ctx, self);
        for item in &self.order {
            match *item {
                Item::Type(t) => {
                    write!(out, "{} = ", self.names[item])?;
                    spell.type_body(out, t)?;
                }
                Item::Attr(a) => {
                    write!(out, "{} = ", self.names[item])?;
                    spell.attr_body(out, a)?;
                }
                Item::Loc(_) => continue,
            }
            out.write_char('\n')?;
        }
        Ok(())
    }

    /// Writes `#loc = loc(...)` lines, one per location alias, in definition order.
    pub fn write_loc_definitions(&self, ctx: &Context, out: &mut dyn Write) -> fmt::Result {
        let spell = Spelling::with_aliases(ctx, self);
        for item in &self.order {
            if let Item::Loc(l) = *item {
                write!(out, "\n{} = loc(", self.names[item])?;
                spell.loc_body(out, l)?;
                out.write_char(')')?;
            }
        }
        Ok(())
    }
}

/// Uses of each distinct value, counted over ops and over the DAG.
#[derive(Default)]
struct Uses {
    count: FxHashMap<Item, u32>,
    /// Values in postorder: each after everything inside it.
    postorder: Vec<Item>,
    /// Values whose children were counted.
    expanded: FxHashSet<Item>,
}

impl Uses {
    /// Counts what printing `op` writes: its attributes, properties, operand and result types, block argument
    /// types and (with debug info) its and its block arguments' locations.
    fn op(&mut self, ctx: &Context, op: OpId, debug_info: bool) {
        let data = ctx.body.op(op);
        self.root(ctx, Item::Attr(data.attrs));
        self.root(ctx, Item::Attr(data.props));
        for v in ctx.body.operands(op).chain(ctx.body.results(op)) {
            self.root(ctx, Item::Type(ctx.body.value_type(v)));
        }
        if debug_info {
            self.loc(ctx, data.loc);
        }
        for &r in ctx.body.regions(op) {
            for &b in &ctx.body.region(r).blocks {
                let block = ctx.body.block(b);
                for &a in block.args.iter() {
                    self.root(ctx, Item::Type(ctx.body.value_type(a)));
                }
                if debug_info {
                    for &l in block.arg_locs.iter() {
                        self.loc(ctx, l);
                    }
                }
            }
        }
    }

    fn loc(&mut self, ctx: &Context, loc: Loc) {
        if let Loc::Id(_) = loc {
            self.root(ctx, Item::Loc(loc));
        }
    }

    /// Counts a use of `item` and, the first time, of everything inside it.
    fn root(&mut self, ctx: &Context, item: Item) {
        let mut stack = vec![(item, false)];
        *self.count.entry(item).or_default() += 1;
        while let Some((item, done)) = stack.pop() {
            if done {
                self.postorder.push(item);
                continue;
            }
            if !self.expanded.insert(item) {
                continue;
            }
            stack.push((item, true));
            for child in ctx.children(item) {
                *self.count.entry(child).or_default() += 1;
                if !self.expanded.contains(&child) {
                    stack.push((child, false));
                }
            }
        }
    }

    /// Names the large values used more than once, in postorder.
    fn finish(self, ctx: &Context) -> Aliases {
        let mut aliases = Aliases::default();
        let mut counters: FxHashMap<&str, usize> = FxHashMap::default();
        for item in self.postorder {
            let base = match item {
                Item::Type(_) => "!type",
                Item::Attr(_) => "#attr",
                Item::Loc(_) => "#loc",
            };
            // The parser takes a location alias before its definition only as an op's own location, so a
            // location that holds an aliased one is aliased too (MLIR's printer aliases every location).
            let holds_loc_alias = matches!(item, Item::Loc(_))
                && ctx.children(item).iter().any(|c| matches!(c, Item::Loc(_)) && aliases.names.contains_key(c));
            let large_and_repeated = ctx.footprint(item).nodes >= ALIAS_MIN_NODES && self.count[&item] >= 2;
            if !holds_loc_alias && !large_and_repeated {
                continue;
            }
            let n = counters.entry(base).or_default();
            let name = if *n == 0 { base.to_string() } else { format!("{base}{n}") };
            *n += 1;
            aliases.names.insert(item, name.into());
            aliases.order.push(item);
        }
        aliases
    }
}
