//! The parser's state: builds IR as the grammar reduces. Keeps one name scope per open region, resolves SSA
//! names and block labels (forward references become placeholders replaced when the definition arrives), and
//! turns generic and pretty ops into IR ops.

use crate::ir::asm::{AsmEnv, AsmItem, CustomParser, EntryArg, ParsedOp, ParsedRegion};
use crate::ir::entity::EntityId;
use crate::ir::infer_types;
use crate::ir::interner::FxHashMap;
use crate::ir::print::type_to_string;
use crate::ir::registry::{dialect_of, ItemError, Syntax};
use crate::ir::{AttrId, BlockId, Context, Diagnostic, FileId, Loc, OpId, OpSpec, RegionId, Symbol, TypeId, ValueId};

/// A dialect type or attribute as spelled: its sigil, full name and body.
pub(super) type DialectItemKey<'s> = (char, &'s str, Option<&'s str>);

pub use super::literals::{AffineAst, AffineMapAst, DenseTree, KeyText};

/// The pieces of a generic op as the grammar collects them.
pub struct GenericOpParts<'s> {
    /// Byte offset of the op's first token.
    pub start: usize,
    /// Result names with optional group sizes and offsets.
    pub results: Vec<(&'s str, Option<&'s str>, usize)>,
    /// The quoted op name.
    pub name: &'s str,
    /// Operand names with offsets.
    pub operands: Vec<(&'s str, usize)>,
    /// Successor block names with offsets.
    pub successors: Vec<(&'s str, usize)>,
    /// `<{...}>`.
    pub props: Option<AttrId>,
    /// Regions.
    pub regions: Vec<ParsedRegion>,
    /// `{...}`.
    pub attrs: Option<AttrId>,
    /// Operand types from the signature.
    pub inputs: Vec<TypeId>,
    /// Result types from the signature.
    pub outputs: Vec<TypeId>,
    /// Trailing `loc(...)`.
    pub loc: Option<Loc>,
}

/// A use of a name that was not defined yet.
#[derive(Clone, Copy, Debug)]
pub(super) struct Forward<'s> {
    pub name: &'s str,
    pub value: ValueId,
    pub offset: usize,
}

/// Definitions of one scope. Names of the form `%N` (what the printer writes) live in a dense table indexed by
/// `N`; other names in a hash map.
#[derive(Default)]
struct Names<'s> {
    numbered: Vec<Option<(ValueId, u32, u32)>>,
    named: FxHashMap<&'s str, (ValueId, u32, u32)>,
}

/// Largest `N` kept in the dense table beyond the table's current size (larger ones go to the hash map).
const DENSE_SLACK: usize = 1 << 16;

impl<'s> Names<'s> {
    fn index(name: &str) -> Option<usize> {
        let digits = name.strip_prefix('%')?;
        if digits.is_empty() || digits.len() > 9 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        digits.parse().ok()
    }

    fn get(&self, name: &str) -> Option<(ValueId, u32, usize)> {
        let found = match Self::index(name) {
            Some(i) if i < self.numbered.len() => self.numbered[i],
            _ => self.named.get(name).copied(),
        };
        found.map(|(v, c, o)| (v, c, o as usize))
    }

    fn contains(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    fn insert(&mut self, name: &'s str, entry: (ValueId, u32, usize)) {
        let entry = (entry.0, entry.1, entry.2 as u32);
        match Self::index(name) {
            Some(i) if i < self.numbered.len() + DENSE_SLACK => {
                if i >= self.numbered.len() {
                    self.numbered.resize(i + 1, None);
                }
                self.numbered[i] = Some(entry);
            }
            _ => {
                self.named.insert(name, entry);
            }
        }
    }
}

#[derive(Default)]
struct Scope<'s> {
    region: Option<RegionId>,
    block: Option<BlockId>,
    values: Names<'s>,
    forward: FxHashMap<&'s str, Forward<'s>>,
    blocks: FxHashMap<&'s str, (BlockId, bool, usize)>,
    /// `%name: type` pairs written before the region opened (a pretty op's signature, such as `func.func`'s):
    /// the types of its entry arguments, known before the custom parser binds them, for type inference. By name
    /// (the last written wins): a kernel may have as many arguments as lines.
    hints: FxHashMap<&'s str, TypeId>,
}

/// Everything the grammar actions need.
pub struct ParseState<'s, 'c> {
    /// The context IR is built in.
    pub ctx: &'c mut Context,
    pub(super) file: FileId,
    pub(super) base: usize,
    /// Problems found so far.
    pub diags: Vec<Diagnostic>,
    scopes: Vec<Scope<'s>>,
    pending: Vec<Vec<Forward<'s>>>,
    pub(super) attr_aliases: FxHashMap<&'s str, AttrId>,
    pub(super) type_aliases: FxHashMap<&'s str, TypeId>,
    pub(super) loc_aliases: FxHashMap<&'s str, Loc>,
    pub(super) pending_loc_aliases: Vec<(Loc, &'s str, usize)>,
    /// The alias each pending placeholder stands for.
    pub(super) pending_loc_index: FxHashMap<Loc, &'s str>,
    /// Number of syntax errors (after one, name-resolution errors may be cascades and are not reported).
    pub syntax_errors: usize,
    tensor_types: FxHashMap<(&'s str, TypeId, Option<AttrId>), TypeId>,
    dialect_items: FxHashMap<DialectItemKey<'s>, Result<usize, ItemError>>,
    op_names: FxHashMap<&'s str, Symbol>,
    /// Signature hints seen since the last region opened (see `Scope::hints`).
    pending_hints: FxHashMap<&'s str, TypeId>,
}

impl<'s, 'c> ParseState<'s, 'c> {
    /// A state that parses text at offset `base` of `file` into `ctx`.
    pub fn new(ctx: &'c mut Context, file: FileId, base: usize) -> Self {
        let region = ctx.body.create_region();
        ParseState {
            ctx,
            file,
            base,
            diags: Vec::new(),
            scopes: vec![Scope { region: Some(region), ..Scope::default() }],
            pending: Vec::new(),
            attr_aliases: FxHashMap::default(),
            type_aliases: FxHashMap::default(),
            loc_aliases: FxHashMap::default(),
            pending_loc_aliases: Vec::new(),
            pending_loc_index: FxHashMap::default(),
            pending_hints: FxHashMap::default(),
            syntax_errors: 0,
            tensor_types: FxHashMap::default(),
            dialect_items: FxHashMap::default(),
            op_names: FxHashMap::default(),
        }
    }

    /// The location of a byte offset of the parsed text.
    pub fn loc_at(&self, offset: usize) -> Loc {
        Loc::Source { file: self.file, offset: (self.base + offset) as u32 }
    }

    /// `loc` if given, else the location of `offset`.
    pub fn loc_or(&self, loc: Option<Loc>, offset: usize) -> Loc {
        loc.unwrap_or_else(|| self.loc_at(offset))
    }

    pub(super) fn error(&mut self, offset: usize, msg: impl Into<String>) {
        let loc = self.loc_at(offset);
        self.diags.push(Diagnostic::error(loc, msg));
    }

    /// The empty dictionary.
    pub fn empty_dict(&self) -> AttrId {
        self.ctx.empty_dict()
    }

    fn scope(&mut self) -> &mut Scope<'s> {
        self.scopes.last_mut().expect("the top scope is never popped")
    }

    // ----- regions and blocks -----

    /// `{` of a region: opens a name scope.
    pub fn open_region(&mut self) {
        let region = self.ctx.body.create_region();
        let hints = std::mem::take(&mut self.pending_hints);
        self.scopes.push(Scope { region: Some(region), hints, ..Scope::default() });
    }

    /// A parenthesized item group of a pretty op: its `%name: type` pairs are hints for the next region.
    pub fn note_group(&mut self, items: &[crate::ir::asm::AsmItem<'s>]) {
        use crate::ir::asm::AsmItem;
        for w in items.windows(3) {
            if let [AsmItem::Value(v, _), AsmItem::Punct(":", _), AsmItem::Type(t, _)] = w {
                self.pending_hints.insert(v, *t);
            }
        }
    }

    /// `}` of a region: closes its scope; unresolved names travel with the region to its op.
    pub fn close_region(&mut self, _start: usize, _end: usize) -> ParsedRegion {
        if self.scopes.len() < 2 {
            // Error recovery unbalanced the scopes; hand back an empty region.
            let region = self.ctx.body.create_region();
            return ParsedRegion { region, pending: u32::MAX };
        }
        let scope = self.scopes.pop().expect("checked above");
        for (name, (_, defined, offset)) in &scope.blocks {
            if !defined {
                let msg = format!("reference to an undefined block '{name}'");
                self.error(*offset, msg);
            }
        }
        let forwards: Vec<Forward<'s>> = scope.forward.into_values().collect();
        self.pending.push(forwards);
        ParsedRegion {
            region: scope.region.expect("region scopes have a region"),
            pending: self.pending.len() as u32 - 1,
        }
    }

    /// `^name(args):`: starts a new block in the current region.
    pub fn start_block(&mut self, name: &'s str, args: Vec<(&'s str, TypeId, Loc)>, offset: usize) {
        let block = match self.scope().blocks.get(name).copied() {
            Some((b, false, _)) => b,
            Some((_, true, _)) => {
                self.error(offset, format!("redefinition of block '{name}'"));
                self.ctx.body.create_block()
            }
            None => self.ctx.body.create_block(),
        };
        self.scope().blocks.insert(name, (block, true, offset));
        let region = self.scope().region.expect("region scope");
        self.ctx.body.append_block(region, block);
        self.scope().block = Some(block);
        for (arg, ty, loc) in args {
            let v = self.ctx.body.add_block_arg(block, ty, loc);
            let off = match loc {
                Loc::Source { offset, .. } => offset as usize - self.base,
                _ => offset,
            };
            self.define_value(arg, v, 1, off);
        }
    }

    fn current_block(&mut self) -> BlockId {
        if let Some(b) = self.scope().block {
            return b;
        }
        let block = self.ctx.body.create_block();
        let region = self.scope().region.expect("region scope");
        self.ctx.body.append_block(region, block);
        self.scope().block = Some(block);
        block
    }

    /// Appends a finished op to the current block.
    pub fn append_op(&mut self, op: Option<OpId>) {
        if let Some(op) = op {
            let block = self.current_block();
            self.ctx.body.append_op(block, op);
        }
    }

    fn resolve_block(&mut self, name: &'s str, offset: usize) -> BlockId {
        if let Some(&(b, _, _)) = self.scope().blocks.get(name) {
            return b;
        }
        let b = self.ctx.body.create_block();
        self.scope().blocks.insert(name, (b, false, offset));
        b
    }

    // ----- values -----

    fn lookup(&self, name: &str) -> Option<(ValueId, usize)> {
        let (base, index) = split_use(name);
        for scope in self.scopes.iter().rev() {
            if let Some((first, count, offset)) = scope.values.get(base) {
                if index >= count {
                    return None;
                }
                return Some((ValueId::from_index(first.index() + index as usize), offset));
            }
        }
        None
    }

    /// Resolves a use of `name`; `ty` is the type the use states, if it states one.
    pub(super) fn resolve_use(&mut self, name: &'s str, offset: usize, ty: Option<TypeId>) -> Option<ValueId> {
        if let Some((v, def_offset)) = self.lookup(name) {
            self.check_use_type(name, v, ty, offset, def_offset);
            return Some(v);
        }
        let (base, index) = split_use(name);
        if index > 0 && self.scopes.iter().rev().any(|s| s.values.contains(base)) {
            self.error(offset, format!("reference to invalid result number in '{name}'"));
            return None;
        }
        if let Some(f) = self.scope().forward.get(name).copied() {
            self.check_use_type(name, f.value, ty, offset, f.offset);
            return Some(f.value);
        }
        let Some(ty) = ty else {
            self.error(offset, "use of undeclared SSA value name");
            return None;
        };
        let value = self.ctx.body.create_placeholder(ty);
        self.scope().forward.insert(name, Forward { name, value, offset });
        Some(value)
    }

    fn check_use_type(&mut self, name: &str, v: ValueId, ty: Option<TypeId>, offset: usize, prior: usize) {
        let actual = self.ctx.body.value_type(v);
        if let Some(ty) = ty.filter(|&t| t != actual) {
            let msg = format!(
                "use of value '{name}' expects different type than prior uses: '{}' vs '{}'",
                type_to_string(self.ctx, ty),
                type_to_string(self.ctx, actual)
            );
            let d = Diagnostic::error(self.loc_at(offset), msg).with_note(self.loc_at(prior), "prior use here");
            self.diags.push(d);
        }
    }

    fn define_value(&mut self, name: &'s str, first: ValueId, count: u32, offset: usize) {
        if name.contains('#') {
            self.error(offset, format!("invalid SSA value name '{name}' in a definition"));
            return;
        }
        if let Some((_, _, prev)) = self.scope().values.get(name) {
            let d = Diagnostic::error(self.loc_at(offset), format!("redefinition of SSA value '{name}'"))
                .with_note(self.loc_at(prev), "previously defined here");
            self.diags.push(d);
            return;
        }
        self.scope().values.insert(name, (first, count, offset));
        if self.scope().forward.is_empty() {
            return;
        }
        for i in 0..count {
            let value = ValueId::from_index(first.index() + i as usize);
            let keys = if i == 0 { vec![name.to_string(), format!("{name}#0")] } else { vec![format!("{name}#{i}")] };
            for key in keys {
                if let Some(f) = self.scope().forward.remove(key.as_str()) {
                    self.resolve_forward(f, value, offset);
                }
            }
        }
    }

    /// Replaces the placeholder of a forward reference by its definition, which must have the type the uses
    /// stated (reported at the definition, with a note at the first use, as MLIR does).
    fn resolve_forward(&mut self, f: Forward<'s>, value: ValueId, def_offset: usize) {
        let (used, defined) = (self.ctx.body.value_type(f.value), self.ctx.body.value_type(value));
        if used != defined {
            let (base, index) = split_use(f.name);
            let msg =
                format!("definition of SSA value '{base}#{index}' has type '{}'", type_to_string(self.ctx, defined));
            let note = format!("previously used here with type '{}'", type_to_string(self.ctx, used));
            let d = Diagnostic::error(self.loc_at(def_offset), msg).with_note(self.loc_at(f.offset), note);
            self.diags.push(d);
        }
        self.ctx.body.replace_all_uses(f.value, value);
    }

    /// Moves a closed region's unresolved names into the current scope, resolving those now defined.
    fn adopt_pending(&mut self, region: ParsedRegion) {
        let Some(list) = self.pending.get_mut(region.pending as usize) else { return };
        for f in std::mem::take(list) {
            if let Some((v, def_offset)) = self.lookup(f.name) {
                self.resolve_forward(f, v, def_offset);
            } else if let Some(existing) = self.scope().forward.get(f.name).copied() {
                self.resolve_forward(f, existing.value, existing.offset);
            } else {
                self.scope().forward.insert(f.name, f);
            }
        }
    }

    fn bind_entry_args(&mut self, region: ParsedRegion, args: &[EntryArg<'s>]) {
        if args.is_empty() {
            return;
        }
        let r = region.region;
        let block = match self.ctx.body.region(r).blocks.first() {
            Some(&b) if self.ctx.body.block(b).args.is_empty() => b,
            Some(_) => {
                let loc = args[0].loc;
                self.diags.push(Diagnostic::error(loc, "entry block arguments are declared twice"));
                return;
            }
            None => {
                let b = self.ctx.body.create_block();
                self.ctx.body.append_block(r, b);
                b
            }
        };
        let values: Vec<ValueId> = args.iter().map(|a| self.ctx.body.add_block_arg(block, a.ty, a.loc)).collect();
        let mut by_name: FxHashMap<&str, usize> = FxHashMap::default();
        for (i, a) in args.iter().enumerate() {
            if by_name.insert(a.name, i).is_some() {
                self.diags.push(Diagnostic::error(a.loc, format!("redefinition of SSA value '{}'", a.name)));
            }
        }
        let Some(list) = self.pending.get_mut(region.pending as usize) else { return };
        let forwards = std::mem::take(list);
        let mut rest = Vec::new();
        for f in forwards {
            match by_name.get(f.name).copied() {
                Some(i) => {
                    let offset = match args[i].loc {
                        Loc::Source { offset, .. } => offset as usize - self.base,
                        _ => f.offset,
                    };
                    self.resolve_forward(f, values[i], offset)
                }
                None => rest.push(f),
            }
        }
        self.pending[region.pending as usize] = rest;
    }

    /// Reports names still undefined at the end of the input.
    pub(super) fn finish_names(&mut self) {
        let mut leftovers: Vec<Forward<'s>> = self.scopes.iter().flat_map(|s| s.forward.values().copied()).collect();
        leftovers.extend(self.pending.iter().flatten().copied());
        leftovers.sort_by_key(|f| f.offset);
        if self.syntax_errors > 0 {
            return;
        }
        for f in leftovers {
            self.error(f.offset, "use of undeclared SSA value name");
        }
        let undefined: Vec<(&str, usize)> =
            self.scopes[0].blocks.iter().filter(|(_, b)| !b.1).map(|(n, b)| (*n, b.2)).collect();
        for (name, offset) in undefined {
            self.error(offset, format!("reference to an undefined block '{name}'"));
        }
    }

    /// Mutable access for the literal actions' caches.
    pub(super) fn tensor_cache(&mut self) -> &mut FxHashMap<(&'s str, TypeId, Option<AttrId>), TypeId> {
        &mut self.tensor_types
    }

    /// Mutable access to the dialect items parsed so far: each distinct spelling is parsed (and its layout
    /// checked) once, however often the input repeats it.
    pub(super) fn dialect_item_cache(&mut self) -> &mut FxHashMap<DialectItemKey<'s>, Result<usize, ItemError>> {
        &mut self.dialect_items
    }

    /// The ops parsed at top level, in order, and the region holding them.
    pub(super) fn top_level(&self) -> RegionId {
        self.scopes[0].region.expect("top scope has a region")
    }

    // ----- ops -----

    fn op_name(&mut self, quoted: &'s str, offset: usize) -> Symbol {
        if let Some(&sym) = self.op_names.get(quoted) {
            return sym;
        }
        let text = super::literals::unescape(quoted).unwrap_or_else(|e| {
            self.error(offset, e);
            String::new()
        });
        self.check_dialect_known(&text, offset);
        let sym = self.ctx.sym(&text);
        self.op_names.insert(quoted, sym);
        sym
    }

    fn check_dialect_known(&mut self, name: &str, offset: usize) {
        if self.ctx.allow_unregistered || self.ctx.registry.op(name).is_some() {
            return;
        }
        if self.ctx.registry.dialect(dialect_of(name)).is_none() {
            self.error(
                offset,
                format!(
                    "operation '{name}' is in an unregistered dialect; use --allow-unregistered-dialect to accept it"
                ),
            );
        }
    }

    fn result_count(&mut self, results: &[(&'s str, Option<&'s str>, usize)]) -> Option<Vec<u32>> {
        let mut counts = Vec::with_capacity(results.len());
        for &(_, count, offset) in results {
            match count.map_or(Ok(1), str::parse::<u32>) {
                Ok(n) if n > 0 => counts.push(n),
                _ => {
                    self.error(offset, "expected a positive result group size");
                    return None;
                }
            }
        }
        Some(counts)
    }

    fn define_results(&mut self, op: OpId, results: &[(&'s str, Option<&'s str>, usize)], counts: &[u32]) {
        let mut next = 0usize;
        for (&(name, _, offset), &count) in results.iter().zip(counts) {
            if next < self.ctx.body.num_results(op) {
                let first = self.ctx.body.result(op, next);
                self.define_value(name, first, count, offset);
            }
            next += count as usize;
        }
    }

    /// `props` plus the declared defaults the op lacks (cheap when the op declares none).
    fn with_defaults(&mut self, name: Symbol, props: AttrId, attrs: AttrId) -> AttrId {
        let declares =
            self.ctx.registry.op(self.ctx.str(name)).is_some_and(|r| r.info.attrs.iter().any(|a| a.default.is_some()));
        if !declares {
            return props;
        }
        let mut entries = self.ctx.dict_entries(props).to_vec();
        let attr_entries = self.ctx.dict_entries(attrs).to_vec();
        crate::ir::registry::fill_defaults(self.ctx, name, &mut entries, &attr_entries);
        self.ctx.dict_attr(entries)
    }

    /// Builds a generic op.
    pub fn generic_op(&mut self, parts: GenericOpParts<'s>) -> Option<OpId> {
        let name = self.op_name(parts.name, parts.start);
        let counts = self.result_count(&parts.results)?;
        let defined: u32 = counts.iter().sum();
        if !parts.results.is_empty() && defined as usize != parts.outputs.len() {
            let msg = format!("operation defines {} results but was provided {defined} to bind", parts.outputs.len());
            self.error(parts.start, msg);
            return None;
        }
        if parts.operands.len() != parts.inputs.len() {
            let msg = format!("expected {} operand types but had {}", parts.operands.len(), parts.inputs.len());
            self.error(parts.start, msg);
            return None;
        }
        let mut operands = Vec::with_capacity(parts.operands.len());
        for (&(n, off), &ty) in parts.operands.iter().zip(&parts.inputs) {
            operands.push(self.resolve_use(n, off, Some(ty))?);
        }
        let successors: Vec<BlockId> = parts.successors.iter().map(|&(n, off)| self.resolve_block(n, off)).collect();
        let regions: Vec<RegionId> = parts.regions.iter().map(|r| r.region).collect();
        let loc = self.loc_or(parts.loc, parts.start);
        let attrs = parts.attrs.unwrap_or(self.ctx.empty_dict());
        let props = self.with_defaults(name, parts.props.unwrap_or(self.ctx.empty_dict()), attrs);
        let op = self.ctx.body.create_op(OpSpec {
            name,
            loc,
            operands: &operands,
            result_types: &parts.outputs,
            attrs,
            props,
            regions: &regions,
            successors: &successors,
        });
        self.define_results(op, &parts.results, &counts);
        for r in parts.regions {
            self.adopt_pending(r);
        }
        Some(op)
    }

    /// Builds a pretty op by handing its items to the op's own parser.
    pub fn custom_op(
        &mut self,
        start: usize,
        results: Vec<(&'s str, Option<&'s str>, usize)>,
        name: &'s str,
        mut items: Vec<AsmItem<'s>>,
        end: usize,
    ) -> Option<OpId> {
        let syntax = self.ctx.registry.op(name).map(|r| r.info.syntax);
        let Some(syntax) = syntax.filter(|s| !matches!(s, Syntax::Generic)) else {
            self.error(start, format!("custom op '{name}' is unknown; write it in the generic form"));
            return None;
        };
        let loc = match items.last() {
            Some(AsmItem::Location(l)) => {
                let l = *l;
                items.pop();
                l
            }
            _ => self.loc_at(start),
        };
        let end_loc = self.loc_at(end);
        let parsed = self.run_custom_parser(name, loc, items, end_loc, syntax);
        match parsed {
            Ok(parsed) => self.build_parsed(start, &results, name, loc, parsed),
            Err(d) => {
                self.diags.push(d);
                None
            }
        }
    }

    fn run_custom_parser(
        &mut self,
        name: &'s str,
        loc: Loc,
        items: Vec<AsmItem<'s>>,
        end: Loc,
        syntax: Syntax,
    ) -> Result<ParsedOp<'s>, Diagnostic> {
        let registry = self.ctx.registry.clone();
        let mut parser = CustomParser::new(self, name, loc, items, end);
        match syntax {
            Syntax::Custom { parse, .. } => parse(&mut parser),
            Syntax::Format(_) => {
                registry.op(name).and_then(|r| r.format.as_ref()).expect("compiled format").parse(&mut parser)
            }
            Syntax::Generic => unreachable!("filtered by the caller"),
        }
    }

    fn build_parsed(
        &mut self,
        start: usize,
        results: &[(&'s str, Option<&'s str>, usize)],
        name: &'s str,
        loc: Loc,
        parsed: ParsedOp<'s>,
    ) -> Option<OpId> {
        let counts = self.result_count(results)?;
        let defined: u32 = counts.iter().sum();
        // Result types left out of the pretty form of an op that infers them: placeholders now, inferred below.
        let infer = parsed.result_types.is_empty() && defined > 0 && infer_types::has_inference(self.ctx, name);
        let mut parsed = parsed;
        if infer {
            parsed.result_types = vec![self.ctx.none_type(); defined as usize];
        }
        if !results.is_empty() && defined as usize != parsed.result_types.len() {
            let msg =
                format!("operation defines {} results but was provided {defined} to bind", parsed.result_types.len());
            self.error(start, msg);
            return None;
        }
        let mut operands = Vec::with_capacity(parsed.operands.len());
        for &(n, l, ty) in &parsed.operands {
            let off = match l {
                Loc::Source { offset, .. } => offset as usize - self.base,
                _ => start,
            };
            operands.push(self.resolve_use(n, off, ty)?);
        }
        let successors: Vec<BlockId> = parsed
            .successors
            .iter()
            .map(|&(n, l)| {
                let off = match l {
                    Loc::Source { offset, .. } => offset as usize - self.base,
                    _ => start,
                };
                self.resolve_block(n, off)
            })
            .collect();
        let regions: Vec<RegionId> = parsed.regions.iter().map(|r| r.0.region).collect();
        let name = self.ctx.sym(name);
        let mut props = parsed.props;
        crate::ir::registry::fill_defaults(self.ctx, name, &mut props, &parsed.attrs);
        let attrs = self.ctx.dict_attr(parsed.attrs);
        let props = self.ctx.dict_attr(props);
        let op = self.ctx.body.create_op(OpSpec {
            name,
            loc,
            operands: &operands,
            result_types: &parsed.result_types,
            attrs,
            props,
            regions: &regions,
            successors: &successors,
        });
        if infer {
            if let Err(e) = infer_types::infer_results(self.ctx, op) {
                self.error(
                    start,
                    format!("cannot infer the result types of '{}': {e}; write them", self.ctx.op_name(op)),
                );
            }
        }
        self.define_results(op, results, &counts);
        for (r, args) in &parsed.regions {
            self.bind_entry_args(*r, args);
            self.adopt_pending(*r);
        }
        Some(op)
    }
}

impl AsmEnv for ParseState<'_, '_> {
    fn context(&mut self) -> &mut Context {
        self.ctx
    }

    fn value_type(&self, name: &str) -> Option<TypeId> {
        if let Some((v, _)) = self.lookup(name) {
            return Some(self.ctx.body.value_type(v));
        }
        self.scopes.iter().rev().find_map(|s| s.hints.get(name).copied())
    }
}

/// Splits `%x#2` into `("%x", 2)`.
fn split_use(name: &str) -> (&str, u32) {
    match name.split_once('#') {
        Some((base, idx)) => (base, idx.parse().unwrap_or(u32::MAX)),
        None => (name, 0),
    }
}
