//! The registry of dialects and ops: what each op is (arity, traits, required attributes, verifier, syntax)
//! and how each dialect parses its types and attributes.
//!
//! Dialects fill it through explicit `register` functions (no linker tricks), then it is frozen behind an
//! `Arc` and shared by every context.

use super::asm::{CustomParser, ParsedOp};
use super::attrs::AttrId;
use super::body::OpId;
use super::diag::Diagnostic;
use super::format::Format;
use super::interface_map::InterfaceMap;
use super::interner::FxBuild;
use super::print::OpPrinter;
use super::types::TypeId;
use super::Context;
use indexmap::IndexMap;

/// How many operands, results, regions or successors an op takes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Arity {
    /// Exactly this many.
    Exact(u32),
    /// This many or more.
    AtLeast(u32),
    /// Any number.
    Any,
}

impl Arity {
    /// True if `n` satisfies the arity.
    pub fn admits(self, n: usize) -> bool {
        match self {
            Arity::Exact(k) => n == k as usize,
            Arity::AtLeast(k) => n >= k as usize,
            Arity::Any => true,
        }
    }

    /// Words for a diagnostic: "exactly 2", "at least 1".
    pub fn describe(self) -> String {
        match self {
            Arity::Exact(k) => format!("exactly {k}"),
            Arity::AtLeast(k) => format!("at least {k}"),
            Arity::Any => "any number of".into(),
        }
    }
}

/// Properties of an op that generic code (verifier, passes) relies on, as MLIR's op traits.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum OpTrait {
    /// Must be the last op of its block.
    Terminator,
    /// Regions cannot use values defined outside the op.
    IsolatedFromAbove,
    /// Blocks of its regions need no terminator.
    NoTerminator,
    /// Each region has at most one block.
    SingleBlock,
    /// Its single region holds a symbol table: symbol names are unique inside.
    SymbolTable,
    /// Defines a symbol through its `sym_name` attribute.
    Symbol,
    /// No side effects: may be removed when unused, and deduplicated.
    Pure,
    /// Returns control to the parent op (like `func.return`).
    ReturnLike,
    /// Operand order does not matter.
    Commutative,
    /// Produces a constant from its attributes.
    ConstantLike,
    /// Its regions are graph regions (no dominance, any order), like `builtin.module`'s.
    GraphRegions,
    /// Every operand and result has the same type.
    SameOperandsAndResultType,
    /// Must be nested directly in one of these ops.
    HasParent(&'static [&'static str]),
}

/// What kind of attribute a declared attribute must be.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum AttrKind {
    /// Anything.
    Any,
    /// An integer.
    Int,
    /// A float.
    Float,
    /// A string.
    String,
    /// A bool.
    Bool,
    /// A unit attribute.
    Unit,
    /// A type.
    Type,
    /// A function type.
    FunctionType,
    /// A symbol reference.
    SymbolRef,
    /// An array.
    Array,
    /// A dictionary.
    Dict,
    /// An affine map.
    AffineMap,
    /// Dense elements.
    Dense,
}

/// An attribute an op declares.
#[derive(Copy, Clone, Debug)]
pub struct AttrSpec {
    /// Attribute name.
    pub name: &'static str,
    /// Required kind.
    pub kind: AttrKind,
    /// False if the op is invalid without it.
    pub optional: bool,
    /// The value an op gets when it is created without the attribute (MLIR's default-valued properties).
    pub default: Option<AttrDefault>,
}

/// A default attribute value: how it is spelled (to leave it out of pretty forms) and how to make it.
#[derive(Copy, Clone, Debug)]
pub struct AttrDefault {
    /// The printed form, e.g. `#arith.overflow<none>`.
    pub text: &'static str,
    /// Interns the value.
    pub make: fn(&mut Context) -> AttrId,
}

/// Adds the declared defaults an op is missing to its property list (used wherever ops are created).
pub fn fill_defaults(
    ctx: &mut Context,
    name: super::Symbol,
    props: &mut Vec<(super::Symbol, AttrId)>,
    attrs: &[(super::Symbol, AttrId)],
) {
    if !ctx.registration(name).is_some_and(|r| r.info.attrs.iter().any(|a| a.default.is_some())) {
        return;
    }
    let registry = ctx.registry.clone();
    let Some(reg) = registry.op(ctx.str(name)) else { return };
    for spec in reg.info.attrs {
        let Some(default) = spec.default else { continue };
        let key = ctx.sym(spec.name);
        if !props.iter().chain(attrs).any(|(k, _)| *k == key) {
            let value = (default.make)(ctx);
            props.push((key, value));
        }
    }
}

/// An op-specific verifier: returns the first problem found.
pub type VerifyFn = fn(&Context, OpId) -> Result<(), Diagnostic>;
/// A hand-written custom-syntax parser (for ops a declarative format cannot express).
pub type ParseFn = for<'p, 's> fn(&mut CustomParser<'p, 's>) -> Result<ParsedOp<'s>, Diagnostic>;
/// A hand-written custom-syntax printer.
pub type PrintFn = fn(&mut OpPrinter<'_, '_>, OpId) -> std::fmt::Result;

/// How an op is written besides the generic form.
#[derive(Copy, Clone, Debug)]
pub enum Syntax {
    /// Generic form only.
    Generic,
    /// A declarative assembly format (see [`super::format`]).
    Format(&'static str),
    /// Hand-written parser and printer.
    Custom {
        /// The parser.
        parse: ParseFn,
        /// The printer.
        print: PrintFn,
    },
}

/// Everything the core knows about one op.
#[derive(Copy, Clone, Debug)]
pub struct OpInfo {
    /// `dialect.op`.
    pub name: &'static str,
    /// One line for `--show-dialects` and docs.
    pub summary: &'static str,
    /// Operand count.
    pub operands: Arity,
    /// Result count.
    pub results: Arity,
    /// Region count.
    pub regions: Arity,
    /// Successor count.
    pub successors: Arity,
    /// Traits.
    pub traits: &'static [OpTrait],
    /// Declared attributes (checked by the generic verifier).
    pub attrs: &'static [AttrSpec],
    /// Op-specific verification, run after the generic checks pass.
    pub verify: Option<VerifyFn>,
    /// Pretty syntax.
    pub syntax: Syntax,
    /// Folding hook (constant folding and simplification to an existing value).
    pub fold: Option<super::rewrite::FoldFn>,
    /// Canonicalization patterns (`canonicalize` applies them with every other op's).
    pub canonicalization: &'static [&'static dyn super::rewrite::RewritePattern],
}

impl OpInfo {
    /// An op named `name` with no operands, results, regions, successors or traits; adjust with struct update.
    pub const fn new(name: &'static str, summary: &'static str) -> Self {
        OpInfo {
            name,
            summary,
            operands: Arity::Exact(0),
            results: Arity::Exact(0),
            regions: Arity::Exact(0),
            successors: Arity::Exact(0),
            traits: &[],
            attrs: &[],
            verify: None,
            syntax: Syntax::Generic,
            fold: None,
            canonicalization: &[],
        }
    }

    /// True if the op has trait `t`.
    pub fn has_trait(&self, t: OpTrait) -> bool {
        self.traits.contains(&t)
    }

    /// The `HasParent` list, if the op declares one.
    pub fn allowed_parents(&self) -> Option<&'static [&'static str]> {
        self.traits.iter().find_map(|t| match t {
            OpTrait::HasParent(p) => Some(*p),
            _ => None,
        })
    }
}

/// Why a dialect could not parse the body of one of its types or attributes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ItemError {
    /// What is wrong.
    pub message: String,
    /// Byte offset in the body where it is wrong, if known (the diagnostic then points there).
    pub offset: Option<usize>,
}

impl ItemError {
    /// An error about the item as a whole.
    pub fn new(message: impl Into<String>) -> ItemError {
        ItemError { message: message.into(), offset: None }
    }
}

impl From<String> for ItemError {
    fn from(message: String) -> ItemError {
        ItemError::new(message)
    }
}

/// Parses the body of a dialect type `!dialect.name<body>`: `(ctx, "dialect.name", body)`.
pub type TypeParseFn = fn(&mut Context, &str, Option<&str>) -> Result<TypeId, ItemError>;
/// Parses the body of a dialect attribute `#dialect.name<body>`.
pub type AttrParseFn = fn(&mut Context, &str, Option<&str>) -> Result<AttrId, ItemError>;

/// A dialect: a namespace of ops, types and attributes.
#[derive(Copy, Clone, Debug)]
pub struct DialectInfo {
    /// The namespace, e.g. `func`.
    pub name: &'static str,
    /// One line describing it.
    pub summary: &'static str,
    /// Parser for its types, if it has any.
    pub parse_type: Option<TypeParseFn>,
    /// Parser for its attributes, if it has any.
    pub parse_attr: Option<AttrParseFn>,
    /// Builds its constant op for a folded value (folding needs it to materialize constants).
    pub materialize_constant: Option<super::rewrite::MaterializeFn>,
}

/// A registered op: its info plus the compiled format, if it declares one.
#[derive(Debug)]
pub struct RegisteredOp {
    /// The op's declaration.
    pub info: OpInfo,
    /// The compiled declarative format.
    pub format: Option<Format>,
}

/// All registered dialects and ops.
#[derive(Debug, Default)]
pub struct Registry {
    dialects: IndexMap<&'static str, DialectInfo, FxBuild>,
    ops: IndexMap<&'static str, RegisteredOp, FxBuild>,
    interfaces: InterfaceMap,
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers a dialect.
    pub fn register_dialect(&mut self, info: DialectInfo) {
        self.dialects.insert(info.name, info);
    }

    /// Registers an op. Panics on a malformed declarative format: that is a bug in the dialect, not user input.
    pub fn register_op(&mut self, info: OpInfo) {
        let format = match info.syntax {
            Syntax::Format(text) => Some(
                Format::compile(text, &info).unwrap_or_else(|e| panic!("bad assembly format for {}: {e}", info.name)),
            ),
            _ => None,
        };
        self.ops.insert(info.name, RegisteredOp { info, format });
    }

    /// The op registered under `name`.
    pub fn op(&self, name: &str) -> Option<&RegisteredOp> {
        self.ops.get(name)
    }

    /// Attaches `imp` as interface `I` of the registered op `op` (a dialect for its own ops, or any module for
    /// another dialect's: an external model). Panics if `op` is not registered: a bug in the attaching code.
    pub fn attach_op_interface<I: ?Sized + Sync + 'static>(&mut self, op: &str, imp: &'static I) {
        let index = self.op_index(op).unwrap_or_else(|| panic!("attaching an interface to unregistered op {op}"));
        self.interfaces.attach_op(index, imp);
    }

    /// Attaches `imp` as interface `I` of the dialect types or attributes whose payload is a `P`.
    pub fn attach_payload_interface<P: std::any::Any, I: ?Sized + Sync + 'static>(&mut self, imp: &'static I) {
        self.interfaces.attach_payload::<P, I>(imp);
    }

    /// The interface implementations.
    pub fn interfaces(&self) -> &InterfaceMap {
        &self.interfaces
    }

    /// The position of the op registered under `name` (stable: registration order).
    pub fn op_index(&self, name: &str) -> Option<usize> {
        self.ops.get_index_of(name)
    }

    /// The op registered at position `index`.
    pub fn op_at(&self, index: usize) -> Option<&RegisteredOp> {
        self.ops.get_index(index).map(|(_, op)| op)
    }

    /// The dialect registered under `name`.
    pub fn dialect(&self, name: &str) -> Option<&DialectInfo> {
        self.dialects.get(name)
    }

    /// All dialects, in registration order.
    pub fn dialects(&self) -> impl Iterator<Item = &DialectInfo> {
        self.dialects.values()
    }

    /// All ops, in registration order.
    pub fn ops(&self) -> impl Iterator<Item = &RegisteredOp> {
        self.ops.values()
    }
}

/// The dialect prefix of an op, type or attribute name (`func` for `func.return`).
pub fn dialect_of(name: &str) -> &str {
    name.split_once('.').map_or(name, |(d, _)| d)
}
