//! Grammar actions for locations: `"file":line:col`, names, `fused[...]`, `callsite(a at b)`, `unknown`, and
//! location aliases `#loc1 = loc(...)`, which MLIR prints after the ops that use them.

use super::state::ParseState;
use crate::ir::walk::preorder;
use crate::ir::{AttrId, Loc, LocData, OpId};

impl<'s> ParseState<'s, '_> {
    /// `"file":line:col`.
    pub fn file_line_col(&mut self, file: &str, line: &str, col: &str, offset: usize) -> Loc {
        let file = super::literals::unescape(file).unwrap_or_else(|e| {
            self.error(offset, e);
            String::new()
        });
        let (Ok(line), Ok(col)) = (line.parse(), col.parse()) else {
            self.error(offset, "line or column out of range in location");
            return Loc::Unknown;
        };
        self.ctx.file_loc(&file, line, col)
    }

    /// `"name"` or `"name"(child)`.
    pub fn name_loc(&mut self, name: &str, child: Option<Loc>, offset: usize) -> Loc {
        let name = self.quoted(name, offset);
        let name = self.ctx.sym(&name);
        self.ctx.loc(LocData::Name { name, child })
    }

    fn quoted(&mut self, text: &str, offset: usize) -> String {
        super::literals::unescape(text).unwrap_or_else(|e| {
            self.error(offset, e);
            String::new()
        })
    }

    /// `unknown`.
    pub fn word_loc(&mut self, word: &str, offset: usize) -> Loc {
        if word != "unknown" {
            self.error(offset, format!("expected location, found '{word}'"));
        }
        Loc::Unknown
    }

    /// `fused[...]` or `fused<#meta>[...]`.
    pub fn fused_loc(&mut self, word: &str, metadata: Option<AttrId>, locs: Vec<Loc>, offset: usize) -> Loc {
        if word != "fused" {
            self.error(offset, format!("expected 'fused', found '{word}'"));
        }
        self.ctx.loc(LocData::Fused { locs: locs.into(), metadata })
    }

    /// `callsite(callee at caller)`.
    pub fn callsite_loc(&mut self, word: &str, callee: Loc, at: &str, caller: Loc, offset: usize) -> Loc {
        if word != "callsite" || at != "at" {
            self.error(offset, "expected 'callsite(<callee> at <caller>)'");
        }
        self.ctx.loc(LocData::CallSite { callee, caller })
    }

    /// `#loc3` inside `loc(...)`: resolved now if defined, else after the whole input is read.
    pub fn loc_alias_ref(&mut self, token: &'s str, offset: usize) -> Loc {
        let name = &token[1..];
        if let Some(&l) = self.loc_aliases.get(name) {
            return l;
        }
        let marker = self.ctx.sym(&format!("\u{0}pending-loc-alias {name} {offset}"));
        let placeholder = self.ctx.loc(LocData::Name { name: marker, child: None });
        self.pending_loc_aliases.push((placeholder, name, offset));
        placeholder
    }

    /// `#name = loc(...)`.
    pub fn define_loc_alias(&mut self, token: &'s str, loc: Loc, offset: usize) {
        if self.loc_aliases.insert(&token[1..], loc).is_some() {
            self.error(offset, format!("redefinition of location alias '{token}'"));
        }
    }

    /// Replaces placeholder locations of aliases defined later in the input.
    pub(super) fn resolve_loc_aliases(&mut self, root: OpId) {
        if self.pending_loc_aliases.is_empty() {
            return;
        }
        let mut map = Vec::new();
        for (placeholder, name, offset) in std::mem::take(&mut self.pending_loc_aliases) {
            match self.loc_aliases.get(name) {
                Some(&l) => map.push((placeholder, l)),
                None => self.error(offset, format!("undefined location alias '#{name}'")),
            }
        }
        let resolve = |l: Loc| map.iter().find(|(p, _)| *p == l).map_or(l, |(_, r)| *r);
        let mut ops = vec![root];
        ops.extend(preorder(&self.ctx.body, root));
        for op in ops {
            let loc = resolve(self.ctx.body.op(op).loc);
            self.ctx.body.op_mut(op).loc = loc;
            for &r in self.ctx.body.regions(op).to_vec().iter() {
                for b in self.ctx.body.region(r).blocks.clone() {
                    self.ctx.body.map_arg_locs(b, &resolve);
                }
            }
        }
    }
}
