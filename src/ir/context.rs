//! The context: interned types, attributes, strings and locations, the op registry, loaded sources, and the
//! IR body. Everything else in the crate takes a `&Context` or `&mut Context`.
//!
//! Fields are public so that a pass can borrow the body mutably while interning through `ctx.interners`.

use super::affine::AffineMap;
use super::attrs::{Attr, AttrId};
use super::body::{Body, OpId};
use super::dialect_data::DialectValue;
use super::entity::EntityId;
use super::footprint::{self, Child, Footprint, Own};
use super::interner::{FxHashSet, Interner};
use super::location::{Loc, LocData, LocId};
use super::registry::{OpTrait, RegisteredOp, Registry};
use super::source::SourceMap;
use super::types::{FloatKind, TypeId, TypeKind};
use std::sync::Arc;

crate::define_id!(
    /// An interned string: op names, attribute keys, symbol names, file names.
    Symbol,
    "sym"
);

/// Owns all IR and everything the IR refers to: the body (mutable IR) next to the [`Interners`] (uniqued
/// types, attributes, strings, locations and the registry), so that code holding the body mutably can still
/// intern through `ctx.interners`. `Context` derefs to its interners: `ctx.int_attr(..)` interns.
#[derive(Debug)]
pub struct Context {
    /// Ops, values, blocks and regions.
    pub body: Body,
    /// Uniqued types, attributes, strings and locations, and the registry.
    pub interners: Interners,
    /// Files the IR was parsed from.
    pub sources: SourceMap,
    /// Accept ops of dialects that are not registered (`--allow-unregistered-dialect`).
    pub allow_unregistered: bool,
}

/// Everything a context uniques, plus the registry its op names resolve against. Interning never changes IR,
/// so a rewriter can hand these out while it keeps the body to itself.
#[derive(Debug)]
pub struct Interners {
    /// Interned types.
    pub types: Interner<TypeId, TypeKind>,
    /// Interned attributes.
    pub attrs: Interner<AttrId, Attr>,
    /// Interned strings.
    pub symbols: Interner<Symbol, Box<str>>,
    /// Interned structured locations.
    pub locs: Interner<LocId, LocData>,
    /// Registered dialects and ops.
    pub registry: Arc<Registry>,
    /// For each interned string, the index of the op registered under it: op names resolve once, when the name
    /// is interned, so asking for an op's registration never hashes its name again.
    registrations: Vec<Option<u32>>,
    /// The footprint of every interned type, attribute and location, by id.
    footprints: Footprints,
    empty_dict: AttrId,
}

/// Footprints by id, one table per interner.
#[derive(Debug, Default)]
struct Footprints {
    types: Vec<Footprint>,
    attrs: Vec<Footprint>,
    locs: Vec<Footprint>,
}

impl std::ops::Deref for Context {
    type Target = Interners;
    fn deref(&self) -> &Interners {
        &self.interners
    }
}

impl std::ops::DerefMut for Context {
    fn deref_mut(&mut self) -> &mut Interners {
        &mut self.interners
    }
}

impl Context {
    /// A context over `registry`.
    pub fn new(registry: Arc<Registry>) -> Self {
        let mut interners = Interners {
            types: Interner::new(),
            attrs: Interner::new(),
            symbols: Interner::new(),
            locs: Interner::new(),
            registry,
            registrations: Vec::new(),
            footprints: Footprints::default(),
            empty_dict: AttrId::from_index(0),
        };
        interners.empty_dict = interners.attr(Attr::Dict(Box::new([])));
        Context { body: Body::default(), interners, sources: SourceMap::default(), allow_unregistered: false }
    }

    /// The registration of `op`'s name, if it is a registered op (no hashing: resolved when interned).
    pub fn registered(&self, op: OpId) -> Option<&RegisteredOp> {
        self.interners.registration(self.body.op(op).name)
    }

    /// Interface `I` of `op`, if its op attached one (found through the resolved registration: no hashing of
    /// the name).
    pub fn op_interface<I: ?Sized + Sync + 'static>(&self, op: OpId) -> Option<&'static I> {
        let index = (*self.interners.registrations.get(self.body.op(op).name.index())?)?;
        self.registry.interfaces().op::<I>(index as usize)
    }

    /// True if `op` is registered with trait `t`.
    pub fn has_trait(&self, op: OpId, t: OpTrait) -> bool {
        self.registered(op).is_some_and(|r| r.info.has_trait(t))
    }

    /// The name of an op as text.
    pub fn op_name(&self, op: OpId) -> &str {
        self.str(self.body.op(op).name)
    }

    /// but an op never holds the same name in both).
    pub fn op_attr(&self, op: OpId, name: &str) -> Option<AttrId> {
        let data = self.body.op(op);
        self.dict_get(data.attrs, name).or_else(|| self.dict_get(data.props, name))
    }

    /// Sets (or replaces) the discardable attribute `name` of `op`.
    pub fn set_op_attr(&mut self, op: OpId, name: &str, value: AttrId) {
        let key = self.sym(name);
        let mut entries = self.dict_entries(self.body.op(op).attrs).to_vec();
        entries.push((key, value));
        let dict = self.dict_attr(entries);
        self.body.op_mut(op).attrs = dict;
    }

    /// Sets (or replaces) the inherent attribute (property) `name` of `op`.
    pub fn set_op_prop(&mut self, op: OpId, name: &str, value: AttrId) {
        let key = self.sym(name);
        let mut entries = self.dict_entries(self.body.op(op).props).to_vec();
        entries.retain(|e| e.0 != key);
        entries.push((key, value));
        let dict = self.dict_attr(entries);
        self.body.op_mut(op).props = dict;
    }

    /// Removes the discardable attribute `name` of `op`; returns whether it was there.
    pub fn remove_op_attr(&mut self, op: OpId, name: &str) -> bool {
        let Some(key) = self.symbols.lookup(name) else { return false };
        let entries = self.dict_entries(self.body.op(op).attrs);
        if !entries.iter().any(|e| e.0 == key) {
            return false;
        }
        let kept: Vec<_> = entries.iter().copied().filter(|e| e.0 != key).collect();
        let dict = self.dict_attr(kept);
        self.body.op_mut(op).attrs = dict;
        true
    }

    /// `file:line:col` of [`Context::file_line_col`], or `unknown`: how printing passes name where an op is.
    pub fn loc_text(&self, loc: Loc) -> String {
        match self.file_line_col(loc) {
            Some((file, line, col)) => format!("{file}:{line}:{col}"),
            None => "unknown".to_string(),
        }
    }

    /// somewhere) and call sites (the callee); `None` for an unknown location.
    pub fn file_line_col(&self, loc: Loc) -> Option<(String, u32, u32)> {
        match loc {
            Loc::Unknown => None,
            Loc::Source { file, offset } => {
                let f = self.sources.file(file);
                let lc = f.line_col(offset);
                Some((f.name.clone(), lc.line, lc.col))
            }
            Loc::Id(id) => match &self.locs[id] {
                LocData::FileLineCol { file, line, col } => Some((self.str(*file).to_string(), *line, *col)),
                LocData::Name { child, .. } => child.and_then(|c| self.file_line_col(c)),
                LocData::Fused { locs, .. } => {
                    locs.iter().find(|&&l| self.loc_footprint(l).positioned).and_then(|&l| self.file_line_col(l))
                }
                LocData::CallSite { callee, .. } => self.file_line_col(*callee),
            },
        }
    }
}

impl Interners {
    /// Interface `I` of a dialect attribute, with its payload (`None` for builtin attributes and payloads
    /// without it).
    pub fn attr_interface<I: ?Sized + Sync + 'static>(&self, attr: AttrId) -> Option<(&'static I, &dyn DialectValue)> {
        let Attr::Dialect(data) = &self.attrs[attr] else { return None };
        let payload = &*data.0;
        Some((self.registry.interfaces().payload::<I>(payload.as_any())?, payload))
    }

    /// Interface `I` of a dialect type, with its payload (`None` for builtin types and payloads without it).
    pub fn type_interface<I: ?Sized + Sync + 'static>(&self, ty: TypeId) -> Option<(&'static I, &dyn DialectValue)> {
        let TypeKind::Dialect(data) = &self.types[ty] else { return None };
        let payload = &*data.0;
        Some((self.registry.interfaces().payload::<I>(payload.as_any())?, payload))
    }

    /// The registered op named by `name`, if any.
    pub fn registration(&self, name: Symbol) -> Option<&RegisteredOp> {
        let index = (*self.registrations.get(name.index())?)?;
        self.registry.op_at(index as usize)
    }

    /// Interns a string (resolving it against the registry's op names the first time it is seen).
    pub fn sym(&mut self, s: &str) -> Symbol {
        if let Some(id) = self.symbols.lookup(s) {
            return id;
        }
        self.registrations.push(self.registry.op_index(s).map(|i| i as u32));
        self.symbols.intern(s.into())
    }

    /// The text of an interned string.
    pub fn str(&self, s: Symbol) -> &str {
        &self.symbols[s]
    }

    /// Interns a type.
    pub fn ty(&mut self, kind: TypeKind) -> TypeId {
        if let Some(id) = self.types.lookup(&kind) {
            return id;
        }
        let shape = footprint::of_node(footprint::type_children(&kind), |c| self.footprint(c), Own::default());
        self.footprints.types.push(shape);
        self.types.intern(kind)
    }

    /// How deep and how large a type, attribute or location is as a tree.
    pub fn footprint(&self, item: Child) -> Footprint {
        match item {
            Child::Type(t) => self.type_footprint(t),
            Child::Attr(a) => self.attr_footprint(a),
            Child::Loc(l) => self.loc_footprint(l),
        }
    }

    /// The values directly inside a type, attribute or location.
    pub fn children(&self, item: Child) -> Vec<Child> {
        match item {
            Child::Type(t) => footprint::type_children(&self.types[t]),
            Child::Attr(a) => footprint::attr_children(&self.attrs[a]),
            Child::Loc(Loc::Id(l)) => footprint::loc_children(&self.locs[l]),
            Child::Loc(_) => Vec::new(),
        }
    }

    /// Every value inside `roots` (the roots included), each distinct value once and none already in `seen`,
    /// in preorder, left to right. An explicit stack: a value shared many times through aliases is visited once.
    pub fn distinct_within(&self, roots: impl IntoIterator<Item = Child>, seen: &mut FxHashSet<Child>) -> Vec<Child> {
        let mut stack: Vec<Child> = roots.into_iter().collect();
        stack.reverse();
        let mut out = Vec::new();
        while let Some(item) = stack.pop() {
            if seen.insert(item) {
                out.push(item);
                stack.extend(self.children(item).into_iter().rev());
            }
        }
        out
    }

    /// How deep and how large `ty` is as a tree.
    pub fn type_footprint(&self, ty: TypeId) -> Footprint {
        self.footprints.types[ty.index()]
    }

    /// How deep and how large `attr` is as a tree.
    pub fn attr_footprint(&self, attr: AttrId) -> Footprint {
        self.footprints.attrs[attr.index()]
    }

    /// How deep and how large `loc` is as a tree, and whether it holds a position.
    pub fn loc_footprint(&self, loc: Loc) -> Footprint {
        match loc {
            Loc::Unknown => Footprint::LEAF,
            Loc::Source { .. } => Footprint { positioned: true, ..Footprint::LEAF },
            Loc::Id(id) => self.footprints.locs[id.index()],
        }
    }

    /// The structure of a type.
    pub fn type_kind(&self, ty: TypeId) -> &TypeKind {
        &self.types[ty]
    }

    /// `iN`.
    pub fn int_type(&mut self, width: u32) -> TypeId {
        self.ty(TypeKind::Int(width))
    }

    /// `index`.
    pub fn index_type(&mut self) -> TypeId {
        self.ty(TypeKind::Index)
    }

    /// A float type.
    pub fn float_type(&mut self, kind: FloatKind) -> TypeId {
        self.ty(TypeKind::Float(kind))
    }

    /// `none`.
    pub fn none_type(&mut self) -> TypeId {
        self.ty(TypeKind::None)
    }

    /// `tensor<shape x elem>`.
    pub fn tensor_type(&mut self, shape: &[u64], elem: TypeId) -> TypeId {
        self.ty(TypeKind::Tensor { shape: shape.into(), elem, encoding: None })
    }

    /// `(inputs) -> results`.
    pub fn function_type(&mut self, inputs: &[TypeId], results: &[TypeId]) -> TypeId {
        self.ty(TypeKind::Function { inputs: inputs.into(), results: results.into() })
    }

    /// Interns an attribute.
    pub fn attr(&mut self, attr: Attr) -> AttrId {
        if let Some(id) = self.attrs.lookup(&attr) {
            return id;
        }
        let shape = footprint::of_node(footprint::attr_children(&attr), |c| self.footprint(c), Own::attr(&attr));
        self.footprints.attrs.push(shape);
        self.attrs.intern(attr)
    }

    /// The structure of an attribute.
    pub fn attr_data(&self, attr: AttrId) -> &Attr {
        &self.attrs[attr]
    }

    /// The empty dictionary (what an op without attributes holds).
    pub fn empty_dict(&self) -> AttrId {
        self.empty_dict
    }

    /// An integer attribute of type `ty`.
    pub fn int_attr(&mut self, value: i128, ty: TypeId) -> AttrId {
        self.attr(Attr::Int { value, ty })
    }

    /// A string attribute.
    pub fn string_attr(&mut self, s: &str) -> AttrId {
        self.attr(Attr::String(s.into()))
    }

    /// A type attribute.
    pub fn type_attr(&mut self, ty: TypeId) -> AttrId {
        self.attr(Attr::Type(ty))
    }

    /// An affine map attribute.
    pub fn affine_map_attr(&mut self, map: AffineMap) -> AttrId {
        self.attr(Attr::AffineMap(map))
    }

    /// A flat symbol reference `@name`.
    pub fn symbol_ref_attr(&mut self, name: &str) -> AttrId {
        let root = self.sym(name);
        self.attr(Attr::SymbolRef { root, nested: Box::new([]) })
    }

    /// A dictionary from entries in any order; a later duplicate key wins.
    pub fn dict_attr(&mut self, mut entries: Vec<(Symbol, AttrId)>) -> AttrId {
        if entries.is_empty() {
            return self.empty_dict;
        }
        entries.reverse();
        entries.sort_by(|a, b| self.symbols[a.0].cmp(&self.symbols[b.0]));
        entries.dedup_by_key(|e| e.0);
        self.attr(Attr::Dict(entries.into()))
    }

    /// The entries of a dictionary attribute (empty for anything else).
    pub fn dict_entries(&self, dict: AttrId) -> &[(Symbol, AttrId)] {
        self.attrs[dict].as_dict().unwrap_or(&[])
    }

    /// Looks up `key` in a dictionary attribute (a binary search: entries are sorted by key).
    pub fn dict_get(&self, dict: AttrId, key: &str) -> Option<AttrId> {
        let entries = self.dict_entries(dict);
        entries.binary_search_by(|e| self.symbols[e.0].as_ref().cmp(key)).ok().map(|i| entries[i].1)
    }

    /// Interns a structured location.
    pub fn loc(&mut self, data: LocData) -> Loc {
        if let Some(id) = self.locs.lookup(&data) {
            return Loc::Id(id);
        }
        let shape = footprint::of_node(footprint::loc_children(&data), |c| self.footprint(c), Own::loc(&data));
        self.footprints.locs.push(shape);
        Loc::Id(self.locs.intern(data))
    }

    /// A `"file":line:col` location.
    pub fn file_loc(&mut self, file: &str, line: u32, col: u32) -> Loc {
        let file = self.sym(file);
        self.loc(LocData::FileLineCol { file, line, col })
    }
}
