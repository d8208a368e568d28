//! Grammar actions for locations: `"file":line:col`, names, `fused[...]`, `callsite(a at b)`, `unknown`, and
//! location aliases `#loc1 = loc(...)`, which MLIR prints after the ops that use them.

use super::state::ParseState;
use crate::ir::interner::{FxHashMap, FxHashSet};
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
        self.defined_before(child.as_slice(), offset);
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
        self.defined_before(&locs, offset);
        self.ctx.loc(LocData::Fused { locs: locs.into(), metadata })
    }

    /// `callsite(callee at caller)`.
    pub fn callsite_loc(&mut self, word: &str, callee: Loc, at: &str, caller: Loc, offset: usize) -> Loc {
        if word != "callsite" || at != "at" {
            self.error(offset, "expected 'callsite(<callee> at <caller>)'");
        }
        self.defined_before(&[callee, caller], offset);
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
        self.pending_loc_index.insert(placeholder, name);
        placeholder
    }

    /// A location alias inside a named, fused or call-site location must be defined above it: only an op's own
    /// location is patched once the whole input is read.
    fn defined_before(&mut self, children: &[Loc], offset: usize) {
        for child in children {
            if let Some(name) = self.pending_loc_index.get(child).copied() {
                let msg = format!(
                    "location alias '#{name}' is used inside another location before its definition: define it above"
                );
                self.error(offset, msg);
            }
        }
    }

    /// `#name = loc(...)`.
    pub fn define_loc_alias(&mut self, token: &'s str, loc: Loc, offset: usize) {
        if let Err(message) = self.ctx.loc_footprint(loc).check_alias() {
            self.error(offset, message);
        } else if self.loc_aliases.insert(&token[1..], loc).is_some() {
            self.error(offset, format!("redefinition of location alias '{token}'"));
        }
    }

    /// Replaces placeholder locations of aliases defined later in the input.
    pub(super) fn resolve_loc_aliases(&mut self, root: OpId) {
        if self.pending_loc_aliases.is_empty() {
            return;
        }
        let pending = std::mem::take(&mut self.pending_loc_aliases);
        self.pending_loc_index.clear();
        let alias_of: FxHashMap<Loc, &str> = pending.iter().map(|&(p, name, _)| (p, name)).collect();
        // Each alias's final location, shared along chains of aliases defined as aliases used before their
        // definition (so a long chain is walked once).
        let mut resolved: FxHashMap<&str, Loc> = FxHashMap::default();
        let mut map = FxHashMap::default();
        for &(placeholder, name, offset) in &pending {
            let (mut path, mut on_path, mut cur) = (Vec::new(), FxHashSet::default(), name);
            let found = loop {
                if let Some(&l) = resolved.get(cur) {
                    break Some(l);
                }
                if !on_path.insert(cur) {
                    let through = match path.len() {
                        1 => String::new(),
                        _ => format!(" (through #{})", path[1..].join(", #")),
                    };
                    self.error(offset, format!("location alias '#{name}' is defined in terms of itself{through}"));
                    break Some(Loc::Unknown);
                }
                path.push(cur);
                match self.loc_aliases.get(cur) {
                    Some(&l) => match alias_of.get(&l) {
                        Some(&next) => cur = next,
                        None => break Some(l),
                    },
                    None if cur == name => {
                        self.error(offset, format!("undefined location alias '#{name}'"));
                        break None;
                    }
                    None => break None,
                }
            };
            if let Some(l) = found {
                resolved.extend(path.into_iter().map(|n| (n, l)));
                map.insert(placeholder, l);
            }
        }
        let resolve = |l: Loc| map.get(&l).copied().unwrap_or(l);
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
