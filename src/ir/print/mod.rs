//! The IR printer: generic form for every op, the op's custom form where it has one (unless generic printing
//! is forced), optional locations, and MLIR's value and block numbering.
//!
//! Output goes to a `String` buffer that is flushed to an optional `io::Write` sink between top-level lines,
//! so printing a million-op module does not hold a second copy of the text in memory.

mod aliases;
mod attrs;
mod names;

pub use aliases::{Aliases, ALIAS_MIN_NODES};
pub use attrs::Spelling;
pub use attrs::{
    attr_to_string, format_float, is_bare_identifier, type_to_string, write_attr, write_dict, write_function_type,
    write_loc, write_result_types, write_string, write_symbol_name, write_type, write_type_list,
};
pub use names::{is_isolated, Names, ValueName};

use super::attrs::AttrId;
use super::body::{BlockId, OpId, RegionId, ValueId};
use super::interner::FxHashMap;
use super::location::Loc;
use super::registry::Syntax;
use super::types::TypeId;
use super::Context;
use std::fmt::{self, Write};
use std::io;

/// What the printer prints.
#[derive(Copy, Clone, Debug, Default)]
pub struct PrintOptions {
    /// Print every op in generic form (`--print-op-generic`).
    pub generic: bool,
    /// Print `loc(...)` after ops and block arguments (`--print-debuginfo`).
    pub debug_info: bool,
}

/// Prints `op` (and everything nested in it) as text.
pub fn op_to_string(ctx: &Context, op: OpId, opts: PrintOptions) -> String {
    let mut printer = Printer::new(ctx, opts, None, op);
    let _ = printer.print_op(op);
    let _ = printer.aliases.write_loc_definitions(ctx, &mut printer.out);
    printer.out
}

/// Prints `op` to `sink`, followed by a newline.
pub fn print_op_to(ctx: &Context, op: OpId, opts: PrintOptions, sink: &mut dyn io::Write) -> io::Result<()> {
    let mut printer = Printer::new(ctx, opts, Some(sink), op);
    printer.print_op(op).map_err(|_| io::Error::other("formatting failed"))?;
    printer.aliases.write_loc_definitions(ctx, &mut printer.out).map_err(|_| io::Error::other("formatting failed"))?;
    printer.out.push('\n');
    printer.flush()?;
    printer.io_error.map_or(Ok(()), Err)
}

/// Prints a single op on one line, generic form, no regions expanded beyond `{...}` (MLIR's "see current operation").
pub fn op_summary(ctx: &Context, op: OpId) -> String {
    let opts = PrintOptions { generic: true, debug_info: false };
    let mut printer = Printer::new(ctx, opts, None, ctx.body.parent_op(op).unwrap_or(op));
    printer.summary = true;
    let _ = printer.print_op(op);
    printer.out
}

/// Printer state: options, names, output buffer.
pub struct Printer<'c> {
    ctx: &'c Context,
    opts: PrintOptions,
    names: Names,
    out: String,
    sink: Option<&'c mut dyn io::Write>,
    io_error: Option<io::Error>,
    indent: usize,
    custom_depth: usize,
    summary: bool,
    type_cache: FxHashMap<TypeId, Box<str>>,
    aliases: Aliases,
}

const FLUSH_AT: usize = 1 << 16;

impl<'c> Printer<'c> {
    /// A printer for `root`; a root that is not nested in another op gets aliases for its large repeated values,
    /// whose definitions start the output.
    fn new(ctx: &'c Context, opts: PrintOptions, sink: Option<&'c mut dyn io::Write>, root: OpId) -> Self {
        let aliases = match ctx.body.parent_op(root) {
            None => Aliases::compute(ctx, root, opts.debug_info),
            Some(_) => Aliases::default(),
        };
        let mut out = String::new();
        let _ = aliases.write_definitions(ctx, &mut out);
        Printer {
            ctx,
            opts,
            names: Names::compute(ctx, root),
            out,
            sink,
            io_error: None,
            indent: 0,
            custom_depth: 0,
            summary: false,
            type_cache: FxHashMap::default(),
            aliases,
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        if let Some(sink) = self.sink.as_mut() {
            sink.write_all(self.out.as_bytes())?;
            self.out.clear();
        }
        Ok(())
    }

    fn maybe_flush(&mut self) {
        if self.custom_depth == 0 && self.out.len() >= FLUSH_AT && self.io_error.is_none() {
            if let Err(e) = self.flush() {
                self.io_error = Some(e);
            }
        }
    }

    fn newline(&mut self) {
        self.out.push('\n');
        for _ in 0..self.indent {
            self.out.push(' ');
        }
    }

    fn print_op(&mut self, op: OpId) -> fmt::Result {
        self.print_result_names(op)?;
        let custom = if self.opts.generic { None } else { self.custom_syntax(op) };
        match custom {
            Some(syntax) => self.print_custom(op, syntax)?,
            None => self.print_generic(op)?,
        }
        self.print_trailing_loc(self.ctx.body.op(op).loc)
    }

    fn custom_syntax(&self, op: OpId) -> Option<Syntax> {
        let reg = self.ctx.registered(op)?;
        match reg.info.syntax {
            Syntax::Generic => None,
            s => Some(s),
        }
    }

    fn print_custom(&mut self, op: OpId, syntax: Syntax) -> fmt::Result {
        let start = self.out.len();
        self.custom_depth += 1;
        self.out.push_str(self.ctx.op_name(op));
        let result = {
            let mut p = OpPrinter { p: self };
            match syntax {
                Syntax::Custom { print, .. } => print(&mut p, op),
                Syntax::Format(_) => {
                    let reg = p.p.ctx.registered(op).expect("format op is registered");
                    reg.format.as_ref().expect("format is compiled").print(&mut p, op)
                }
                Syntax::Generic => Err(fmt::Error),
            }
        };
        self.custom_depth -= 1;
        if result.is_err() {
            // The op does not fit its pretty syntax (it is probably invalid): fall back to the generic form.
            self.out.truncate(start);
            self.print_generic(op)?;
        }
        Ok(())
    }

    fn print_result_names(&mut self, op: OpId) -> fmt::Result {
        let n = self.ctx.body.num_results(op);
        if n == 0 {
            return Ok(());
        }
        let first = self.ctx.body.result(op, 0);
        match self.names.value(first) {
            Some(ValueName::Num { n: num, .. }) => write!(self.out, "%{num}")?,
            _ => self.out.push_str("%0"),
        }
        if n > 1 {
            write!(self.out, ":{n}")?;
        }
        self.out.push_str(" = ");
        Ok(())
    }

    fn print_generic(&mut self, op: OpId) -> fmt::Result {
        let ctx = self.ctx;
        let data = ctx.body.op(op);
        write_string(&mut self.out, ctx.op_name(op))?;
        self.out.push('(');
        self.print_operand_list(op)?;
        self.out.push(')');
        let succs = ctx.body.successors(op);
        if !succs.is_empty() {
            self.out.push('[');
            for (i, &b) in succs.iter().enumerate() {
                if i > 0 {
                    self.out.push_str(", ");
                }
                self.print_block_name(b)?;
            }
            self.out.push(']');
        }
        if data.props != ctx.empty_dict() {
            self.out.push_str(" <");
            Spelling::with_aliases(ctx, &self.aliases).dict(&mut self.out, data.props, &[])?;
            self.out.push('>');
        }
        let regions = ctx.body.regions(op);
        if !regions.is_empty() {
            self.out.push_str(" (");
            for (i, &r) in regions.iter().enumerate() {
                if i > 0 {
                    self.out.push_str(", ");
                }
                self.print_region(r, true)?;
            }
            self.out.push(')');
        }
        if data.attrs != ctx.empty_dict() {
            self.out.push(' ');
            Spelling::with_aliases(ctx, &self.aliases).dict(&mut self.out, data.attrs, &[])?;
        }
        self.out.push_str(" : (");
        let operand_types: Vec<TypeId> = ctx.body.operands(op).map(|v| ctx.body.value_type(v)).collect();
        self.print_types(&operand_types)?;
        self.out.push_str(") -> ");
        let result_types: Vec<TypeId> = ctx.body.results(op).map(|v| ctx.body.value_type(v)).collect();
        self.print_result_types(&result_types)
    }

    fn print_result_types(&mut self, types: &[TypeId]) -> fmt::Result {
        let bare = types.len() == 1 && !matches!(self.ctx.type_kind(types[0]), super::types::TypeKind::Function { .. });
        if bare {
            return self.print_type(types[0]);
        }
        self.out.push('(');
        self.print_types(types)?;
        self.out.push(')');
        Ok(())
    }

    fn print_operand_list(&mut self, op: OpId) -> fmt::Result {
        for (i, v) in self.ctx.body.operands(op).enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            self.print_value(v)?;
        }
        Ok(())
    }

    fn print_value(&mut self, v: ValueId) -> fmt::Result {
        match self.names.value(v) {
            Some(ValueName::Arg(n)) => write!(self.out, "%arg{n}"),
            Some(ValueName::Num { n, result: None }) => write!(self.out, "%{n}"),
            Some(ValueName::Num { n, result: Some(r) }) => write!(self.out, "%{n}#{r}"),
            None => self.out.write_str("<<UNKNOWN SSA VALUE>>"),
        }
    }

    fn print_type(&mut self, ty: TypeId) -> fmt::Result {
        if let Some(s) = self.type_cache.get(&ty) {
            self.out.push_str(s);
            return Ok(());
        }
        let mut s = String::new();
        Spelling::with_aliases(self.ctx, &self.aliases).ty(&mut s, ty)?;
        self.out.push_str(&s);
        self.type_cache.insert(ty, s.into());
        Ok(())
    }

    fn print_types(&mut self, types: &[TypeId]) -> fmt::Result {
        for (i, &t) in types.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            self.print_type(t)?;
        }
        Ok(())
    }

    fn print_block_name(&mut self, b: BlockId) -> fmt::Result {
        match self.names.block(b) {
            Some(n) => write!(self.out, "^bb{n}"),
            None => self.out.write_str("^<<UNKNOWN BLOCK>>"),
        }
    }

    fn print_trailing_loc(&mut self, loc: Loc) -> fmt::Result {
        if self.opts.debug_info {
            self.out.push_str(" loc(");
            Spelling::with_aliases(self.ctx, &self.aliases).loc(&mut self.out, loc)?;
            self.out.push(')');
        }
        Ok(())
    }

    fn print_region(&mut self, r: RegionId, print_entry_args: bool) -> fmt::Result {
        if self.summary {
            self.out.push_str("{...}");
            return Ok(());
        }
        self.out.push('{');
        let blocks = &self.ctx.body.region(r).blocks;
        for (i, &b) in blocks.iter().enumerate() {
            let data = self.ctx.body.block(b);
            let label = i > 0 || (print_entry_args && !data.args.is_empty()) || self.ctx.body.first_op(b).is_none();
            if label {
                self.newline();
                self.print_block_label(b, print_entry_args || i > 0)?;
            }
            self.indent += 2;
            let mut cursor = self.ctx.body.first_op(b);
            while let Some(op) = cursor {
                self.newline();
                self.print_op(op)?;
                self.maybe_flush();
                cursor = self.ctx.body.next_op(op);
            }
            self.indent -= 2;
        }
        self.newline();
        self.out.push('}');
        Ok(())
    }

    fn print_block_label(&mut self, b: BlockId, with_args: bool) -> fmt::Result {
        self.print_block_name(b)?;
        let args = &self.ctx.body.block(b).args;
        if with_args && !args.is_empty() {
            self.out.push('(');
            for i in 0..args.len() {
                if i > 0 {
                    self.out.push_str(", ");
                }
                self.print_block_arg(b, i)?;
            }
            self.out.push(')');
        }
        self.out.push(':');
        Ok(())
    }

    fn print_block_arg(&mut self, b: BlockId, i: usize) -> fmt::Result {
        let data = self.ctx.body.block(b);
        let v = data.args[i];
        let loc = data.arg_locs.get(i).copied().unwrap_or_default();
        self.print_value(v)?;
        self.out.push_str(": ");
        self.print_type(self.ctx.body.value_type(v))?;
        self.print_trailing_loc(loc)
    }
}

/// What an op's custom printer writes with; it appends to the line that already holds the op name.
pub struct OpPrinter<'p, 'c> {
    p: &'p mut Printer<'c>,
}

impl<'c> OpPrinter<'_, 'c> {
    /// The context.
    pub fn ctx(&self) -> &'c Context {
        self.p.ctx
    }

    /// Writes text as is.
    pub fn write(&mut self, s: &str) {
        self.p.out.push_str(s);
    }

    /// Writes the name of a value.
    pub fn value(&mut self, v: ValueId) -> fmt::Result {
        self.p.print_value(v)
    }

    /// Writes values separated by `, `.
    pub fn values(&mut self, values: impl IntoIterator<Item = ValueId>) -> fmt::Result {
        for (i, v) in values.into_iter().enumerate() {
            if i > 0 {
                self.write(", ");
            }
            self.value(v)?;
        }
        Ok(())
    }

    /// Writes a type.
    pub fn ty(&mut self, t: TypeId) -> fmt::Result {
        self.p.print_type(t)
    }

    /// Writes types separated by `, `.
    pub fn types(&mut self, types: &[TypeId]) -> fmt::Result {
        self.p.print_types(types)
    }

    /// Writes a result type list as it follows `->`.
    pub fn result_types(&mut self, types: &[TypeId]) -> fmt::Result {
        self.p.print_result_types(types)
    }

    /// Writes an attribute.
    pub fn attr(&mut self, a: AttrId) -> fmt::Result {
        Spelling::with_aliases(self.p.ctx, &self.p.aliases).attr(&mut self.p.out, a)
    }

    /// Writes ` attributes {...}` with the op's attributes minus `elide` (and ` attributes <{props}> {...}` when
    /// the op has properties left), or nothing if none remain.
    pub fn attr_dict(&mut self, op: OpId, elide: &[&str]) -> fmt::Result {
        let ctx = self.p.ctx;
        let (attrs, props) = (ctx.body.op(op).attrs, ctx.body.op(op).props);
        // Properties holding their declared default are left out of the pretty form, as MLIR does.
        let mut elide: Vec<&str> = elide.to_vec();
        if let Some(reg) = ctx.registered(op) {
            for spec in reg.info.attrs {
                let is_default = |d: super::registry::AttrDefault| {
                    ctx.dict_get(props, spec.name).is_some_and(|v| attr_to_string(ctx, v) == d.text)
                };
                if spec.default.is_some_and(is_default) {
                    elide.push(spec.name);
                }
            }
        }
        let elide = &elide[..];
        let remaining = |d: AttrId| ctx.dict_entries(d).iter().filter(|e| !elide.contains(&ctx.str(e.0))).count();
        let (n_attrs, n_props) = (remaining(attrs), remaining(props));
        if n_attrs + n_props == 0 {
            return Ok(());
        }
        self.write(" attributes ");
        if n_props > 0 {
            self.write("<");
            Spelling::with_aliases(ctx, &self.p.aliases).dict(&mut self.p.out, props, elide)?;
            self.write("> ");
        }
        Spelling::with_aliases(ctx, &self.p.aliases).dict(&mut self.p.out, attrs, elide)
    }

    /// Writes a region; entry-block arguments are shown in a label only if `print_entry_args`.
    pub fn region(&mut self, r: RegionId, print_entry_args: bool) -> fmt::Result {
        self.p.print_region(r, print_entry_args)
    }

    /// Starts a new line at the current indentation.
    pub fn newline(&mut self) {
        self.p.newline();
    }

    /// Writes `^bbN`.
    pub fn successor(&mut self, b: BlockId) -> fmt::Result {
        self.p.print_block_name(b)
    }

    /// Writes `%arg0: i32` (with its location when printing debug info) for argument `i` of `block`.
    pub fn block_arg(&mut self, block: BlockId, i: usize) -> fmt::Result {
        self.p.print_block_arg(block, i)
    }

    /// Writes `@name`, quoted if needed.
    pub fn symbol_name(&mut self, name: &str) -> fmt::Result {
        write_symbol_name(&mut self.p.out, name)
    }
}
