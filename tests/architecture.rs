//! Enforces the dependency rules of ARCHITECTURE.md.
//!
//! The allowed imports live in one place, the table under "## Dependency rules" in `ARCHITECTURE.md`; this test
//! reads that table, parses every `src/**/*.rs` with `syn` and checks every crate-internal path it finds:
//! - `use` trees (`use crate::{a::b, c::{d, e}}` over several lines, `super::`, `super::super::`, `self::`),
//! - every `syn::Path` in code, types, patterns, bounds and macro paths (`crate::dialects::layout::X::new()`),
//! - the token streams of macro bodies and attributes (`crate :: a :: b`, `$crate :: a`, `super :: a`).
//!
//! `super::` and `self::` are resolved against the file's own module path (`src/dialects/teg/eval/cell.rs` is
//! `dialects::teg::eval::cell`, a `mod.rs` is its folder's module) and the inline modules around the path. The
//! lalrpop grammars in `grammar/` are not Rust: a text scan finds their `crate::` paths (`tap.lalrpop` is `parse`'s,
//! `NAME.lalrpop` is `dialects::NAME`'s). Each violation is reported with its file and line.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use proc_macro2::{Delimiter, Span, TokenStream, TokenTree};
use syn::visit::Visit;

// ---------------------------------------------------------------------------------------------------------------
// The table
// ---------------------------------------------------------------------------------------------------------------

/// The heading the table sits under in ARCHITECTURE.md.
const HEADING: &str = "## Dependency rules";

/// A module path pattern: `dialects::*` (`*` stands for any one name) or `crate` (the crate root, no segments).
type Pattern = Vec<String>;

/// What a row may import.
#[derive(Debug, Clone, PartialEq)]
enum Allowed {
    /// `everything`: the whole crate.
    Everything,
    /// A list of modules (each with everything below it); empty for `—`.
    Modules(Vec<Pattern>),
}

/// One row of the table.
#[derive(Debug, Clone)]
struct Row {
    layer: String,
    module: Pattern,
    planned: bool,
    allowed: Allowed,
    /// Line of the row in ARCHITECTURE.md, for messages.
    line: usize,
}

impl Row {
    fn name(&self) -> String {
        show(&self.module)
    }
}

fn show(p: &[String]) -> String {
    if p.is_empty() {
        "crate".to_string()
    } else {
        p.join("::")
    }
}

/// The table, with `libraries` expanded.
#[derive(Debug)]
struct Rules {
    rows: Vec<Row>,
}

fn parse_path(text: &str) -> Result<Pattern, String> {
    if text == "crate" {
        return Ok(Vec::new());
    }
    let segs: Vec<String> = text.split("::").map(str::to_string).collect();
    let ident = |s: &str| s == "*" || (!s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
    if segs.iter().all(|s| ident(s)) {
        Ok(segs)
    } else {
        Err(format!("`{text}` is not a module path"))
    }
}

/// The first `` `...` `` in a cell.
fn backticked(cell: &str) -> Option<&str> {
    let start = cell.find('`')? + 1;
    let len = cell[start..].find('`')?;
    Some(&cell[start..start + len])
}

/// Parses the table under [`HEADING`]: `| layer | module | may import |`.
fn parse_rules(markdown: &str) -> Result<Rules, String> {
    let lines: Vec<&str> = markdown.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.trim() == HEADING)
        .ok_or_else(|| format!("ARCHITECTURE.md has no heading `{HEADING}`"))?;
    let mut table = Vec::new();
    for (i, line) in lines.iter().enumerate().skip(start + 1) {
        let t = line.trim();
        if t.starts_with("## ") {
            break;
        }
        if t.starts_with('|') {
            table.push((i + 1, t));
        } else if !table.is_empty() {
            break; // the first table under the heading is the one
        }
    }
    let cells =
        |t: &str| -> Vec<String> { t.trim_matches('|').split('|').map(|c| c.trim().to_string()).collect::<Vec<_>>() };
    let Some(((_, header), rest)) = table.split_first() else {
        return Err(format!("no table under `{HEADING}` in ARCHITECTURE.md"));
    };
    if cells(header) != ["layer", "module", "may import"] {
        return Err(format!("the table under `{HEADING}` must have the columns `| layer | module | may import |`"));
    }
    let mut rows: Vec<Row> = Vec::new();
    for &(line, text) in rest.iter().skip(1) {
        let c = cells(text);
        let err = |m: String| format!("ARCHITECTURE.md:{line}: {m}\n  {text}");
        if c.len() != 3 {
            return Err(err(format!("expected 3 cells, found {}", c.len())));
        }
        let module = backticked(&c[1]).ok_or_else(|| err("the module cell names no `module`".into()))?;
        let module = parse_path(module).map_err(err)?;
        let planned = c[1].contains("planned");
        let allowed = parse_allowed(&c[2]).map_err(err)?;
        if let Some(other) = rows.iter().find(|r| r.module == module) {
            return Err(err(format!("module `{}` already has a row (line {})", show(&module), other.line)));
        }
        rows.push(Row { layer: c[0].clone(), module, planned, allowed, line });
    }
    if rows.is_empty() {
        return Err(format!("the table under `{HEADING}` has no rows"));
    }
    // Expand `libraries`: every row of the `library` layer.
    let libraries: Vec<Pattern> = rows.iter().filter(|r| r.layer == "library").map(|r| r.module.clone()).collect();
    for row in &mut rows {
        if let Allowed::Modules(list) = &mut row.allowed {
            if let Some(i) = list.iter().position(|p| p == &["<libraries>".to_string()]) {
                list.remove(i);
                list.extend(libraries.iter().filter(|l| **l != row.module).cloned());
            }
        }
    }
    Ok(Rules { rows })
}

/// `—`, `everything`, or a comma-separated list of `` `module` `` and `libraries`.
fn parse_allowed(cell: &str) -> Result<Allowed, String> {
    let cell = cell.trim();
    if cell == "everything" {
        return Ok(Allowed::Everything);
    }
    let mut list = Vec::new();
    if matches!(cell, "—" | "-" | "nothing") {
        return Ok(Allowed::Modules(list));
    }
    for item in cell.split(',').map(str::trim) {
        if item == "libraries" {
            list.push(vec!["<libraries>".to_string()]);
        } else if item.len() > 2 && item.starts_with('`') && item.ends_with('`') {
            let p = parse_path(&item[1..item.len() - 1])?;
            if p.is_empty() {
                return Err("write `everything` rather than `crate`".into());
            }
            list.push(p);
        } else {
            return Err(format!("`may import` entry `{item}` is neither `module`, `libraries`, `everything` nor `—`"));
        }
    }
    Ok(Allowed::Modules(list))
}

/// Does `pattern` match the start of `path`? (`*` matches any one name.)
fn is_prefix(pattern: &[String], path: &[String]) -> bool {
    pattern.len() <= path.len() && pattern.iter().zip(path).all(|(p, s)| p == "*" || p == s || s == "*")
}

impl Rules {
    /// The row governing a module: the longest matching prefix, a literal name beating `*`; `crate` only
    /// governs the crate root itself.
    fn row_of(&self, module: &[String]) -> Option<&Row> {
        self.rows
            .iter()
            .filter(|r| if r.module.is_empty() { module.is_empty() } else { is_prefix(&r.module, module) })
            .max_by_key(|r| (r.module.len(), r.module.iter().filter(|s| *s != "*").count()))
    }

    /// May `module` (governed by `row`) use `target` (a path from the crate root)?
    ///
    /// A module may use itself and everything below it that has no row of its own (for `dialects::*`: the dialect
    /// it matched); the very module of a row (`passes/mod.rs`, `dialects/mod.rs`) may also use the rows below it,
    /// since it registers them. Each listed entry grants that module and what is below it, again except parts
    /// with rows of their own: a generic pass cannot reach a dialect through a dialect-specific pass.
    fn allows(&self, row: &Row, module: &[String], target: &[String]) -> bool {
        let Allowed::Modules(list) = &row.allowed else { return true };
        // How deep the row governing the target is: an entry shorter than that does not reach it.
        let depth = self.row_of(target).map_or(0, |r| r.module.len());
        let own = &module[..row.module.len()];
        if !own.is_empty() && is_prefix(own, target) && (depth <= own.len() || module.len() == own.len()) {
            return true;
        }
        list.iter().any(|p| is_prefix(p, target) && depth <= p.len())
    }

    /// Checks the table against the source tree: every module it names exists (unless planned), the library
    /// layer only imports libraries above it, and no two rows may import each other.
    fn validate(&self, src: &Path) -> Result<(), String> {
        let mut problems = Vec::new();
        let exists = |p: &Pattern| module_exists(src, p);
        let known = |p: &Pattern| exists(p) || self.rows.iter().any(|r| r.module == *p);
        for row in &self.rows {
            if !row.planned && !exists(&row.module) {
                problems.push(format!(
                    "ARCHITECTURE.md:{}: row `{}` names a module that does not exist in src/ (mark it *(planned)*?)",
                    row.line,
                    row.name()
                ));
            }
            if let Allowed::Modules(list) = &row.allowed {
                for p in list.iter().filter(|p| !known(p)) {
                    problems.push(format!(
                        "ARCHITECTURE.md:{}: row `{}` may import `{}`, an unknown module",
                        row.line,
                        row.name(),
                        show(p)
                    ));
                }
            }
        }
        // Libraries form a stack: each imports only libraries listed above it.
        let libs: Vec<&Row> = self.rows.iter().filter(|r| r.layer == "library").collect();
        for (i, lib) in libs.iter().enumerate() {
            let Allowed::Modules(list) = &lib.allowed else {
                problems.push(format!("ARCHITECTURE.md:{}: library `{}` may import everything", lib.line, lib.name()));
                continue;
            };
            for p in list {
                if !libs[..i].iter().any(|l| is_prefix(&l.module, p)) {
                    problems.push(format!(
                        "ARCHITECTURE.md:{}: library `{}` may import `{}`, which is not a library listed above it",
                        lib.line,
                        lib.name(),
                        show(p)
                    ));
                }
            }
        }
        if let Some(cycle) = self.cycle() {
            problems.push(format!("the dependency table has a cycle: {}", cycle.join(" → ")));
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("\n"))
        }
    }

    /// Row `a` may import something governed by row `b` (a parent and its child rows are one unit here: the
    /// pass framework registers every pass and every pass uses the framework).
    fn edge(&self, a: &Row, b: &Row) -> bool {
        let related = is_prefix(&a.module, &b.module) || is_prefix(&b.module, &a.module);
        let Allowed::Modules(list) = &a.allowed else { return false };
        !related && list.iter().any(|p| self.row_of(p).is_some_and(|r| std::ptr::eq(r, b)))
    }

    /// A cycle among the rows that do not import `everything`, if any.
    fn cycle(&self) -> Option<Vec<String>> {
        let rows: Vec<&Row> = self.rows.iter().filter(|r| r.allowed != Allowed::Everything).collect();
        fn dfs(
            rules: &Rules,
            i: usize,
            rows: &[&Row],
            state: &mut [u8],
            stack: &mut Vec<usize>,
        ) -> Option<Vec<String>> {
            state[i] = 1;
            stack.push(i);
            for j in 0..rows.len() {
                if !rules.edge(rows[i], rows[j]) {
                    continue;
                }
                if state[j] == 1 {
                    let from = stack.iter().position(|&k| k == j).unwrap();
                    let mut names: Vec<String> = stack[from..].iter().map(|&k| rows[k].name()).collect();
                    names.push(rows[j].name());
                    return Some(names);
                }
                if state[j] == 0 {
                    if let Some(c) = dfs(rules, j, rows, state, stack) {
                        return Some(c);
                    }
                }
            }
            stack.pop();
            state[i] = 2;
            None
        }
        let mut state = vec![0u8; rows.len()];
        for i in 0..rows.len() {
            if state[i] == 0 {
                if let Some(c) = dfs(self, i, &rows, &mut state, &mut Vec::new()) {
                    return Some(c);
                }
            }
        }
        None
    }
}

/// `a::b` exists as `src/a/b.rs` or `src/a/b/`; `dialects::*` needs `src/dialects/`; `crate` is `src/lib.rs`.
fn module_exists(src: &Path, p: &[String]) -> bool {
    let p: Vec<&str> = p.iter().map(String::as_str).take_while(|s| *s != "*").collect();
    if p.is_empty() {
        return src.join("lib.rs").is_file();
    }
    let dir = p.iter().fold(src.to_path_buf(), |d, s| d.join(s));
    dir.is_dir() || dir.with_extension("rs").is_file()
}

// ---------------------------------------------------------------------------------------------------------------
// Finding the imports
// ---------------------------------------------------------------------------------------------------------------

/// A crate-internal path found in a file: where, as written, and resolved from the crate root.
#[derive(Debug, Clone)]
struct Import {
    line: usize,
    written: String,
    /// The module whose code holds it (the file's module plus enclosing inline modules).
    module: Vec<String>,
    /// The path from the crate root, or an error (`super::` above the crate root).
    target: Result<Vec<String>, String>,
}

/// The module path of a source file: `dialects/teg/eval/cell.rs` → `dialects::teg::eval::cell`; a `mod.rs` is
/// its folder's module; `lib.rs` is the crate root.
fn module_of(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().to_string()).collect();
    let last = parts.pop().unwrap_or_default();
    let stem = last.trim_end_matches(".rs");
    if !(stem == "mod" || (parts.is_empty() && stem == "lib")) {
        parts.push(stem.to_string());
    }
    parts
}

/// Resolves a path starting with `crate`, `self` or `super` against the module `at`.
fn resolve(segs: &[String], at: &[String]) -> Result<Vec<String>, String> {
    match segs.first().map(String::as_str) {
        Some("crate") => Ok(segs[1..].to_vec()),
        // `self::super::x` is `super::x`.
        Some("self") if segs.get(1).is_some_and(|s| s == "super") => resolve(&segs[1..], at),
        Some("self") => Ok(at.iter().chain(&segs[1..]).cloned().collect()),
        Some("super") => {
            let ups = segs.iter().take_while(|s| *s == "super").count();
            if ups > at.len() {
                return Err(format!("`{}` climbs above the crate root", segs.join("::")));
            }
            Ok(at[..at.len() - ups].iter().chain(&segs[ups..]).cloned().collect())
        }
        _ => unreachable!("only crate-relative paths are resolved"),
    }
}

fn line_of(span: Span) -> usize {
    span.start().line
}

fn is_root(s: &str) -> bool {
    matches!(s, "crate" | "self" | "super")
}

/// Walks a parsed file, collecting every path that starts with `crate`, `self` or `super`.
struct Collector {
    /// The file's module plus the inline modules entered so far.
    module: Vec<String>,
    out: Vec<Import>,
    /// `#[macro_export]` macros defined here: name → defining module (they live at the crate root).
    exported_macros: Vec<(String, Vec<String>)>,
}

impl Collector {
    fn push(&mut self, segs: Vec<String>, line: usize) {
        // `self` alone is a receiver or `use a::{self}`, nothing to check.
        if segs.len() < 2 && segs.first().is_none_or(|s| s != "super") {
            return;
        }
        let target = resolve(&segs, &self.module);
        self.out.push(Import { line, written: segs.join("::"), module: self.module.clone(), target });
    }

    /// Every leaf of a use tree, with the line of its last name (a multi-line group reports the member's line).
    fn use_tree(&mut self, tree: &syn::UseTree, prefix: &mut Vec<String>) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(&p.tree, prefix);
                prefix.pop();
            }
            syn::UseTree::Name(n) => self.use_leaf(prefix, Some(n.ident.to_string()), n.ident.span()),
            syn::UseTree::Rename(r) => self.use_leaf(prefix, Some(r.ident.to_string()), r.ident.span()),
            syn::UseTree::Glob(g) => self.use_leaf(prefix, None, g.star_token.spans[0]),
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    self.use_tree(t, prefix);
                }
            }
        }
    }

    fn use_leaf(&mut self, prefix: &[String], name: Option<String>, span: Span) {
        let mut segs = prefix.to_vec();
        // `use a::b::{self}` names `a::b`; `use crate::x as y` names `x`.
        if let Some(n) = name.filter(|n| n != "self" || segs.is_empty()) {
            segs.push(n);
        }
        if segs.first().is_some_and(|s| is_root(s)) {
            self.push(segs, line_of(span));
        }
    }

    /// Scans a token stream (a macro body or an attribute) for `crate :: a :: b`, `$crate :: a`, `super :: a`,
    /// `self :: a`.
    fn tokens(&mut self, stream: TokenStream) {
        let tokens: Vec<TokenTree> = stream.into_iter().collect();
        let mut i = 0;
        while i < tokens.len() {
            if let TokenTree::Group(g) = &tokens[i] {
                self.tokens(g.stream());
                i += 1;
                continue;
            }
            let TokenTree::Ident(first) = &tokens[i] else {
                i += 1;
                continue;
            };
            let name = first.to_string();
            let follows_colons = i >= 1 && is_colon(&tokens[i - 1]);
            if !is_root(&name) || follows_colons || !path_sep(&tokens, i + 1) {
                i += 1;
                continue;
            }
            let mut segs = vec![name];
            let mut j = i + 1;
            while path_sep(&tokens, j) {
                match tokens.get(j + 2) {
                    Some(TokenTree::Ident(id)) => {
                        segs.push(id.to_string());
                        j += 3;
                    }
                    Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Brace => {
                        // `crate::{a, b::c}` inside a macro: parse it as a use tree.
                        let text = format!("use {}::{{{}}};", segs.join("::"), g.stream());
                        if let Ok(item) = syn::parse_str::<syn::ItemUse>(&text) {
                            let line = line_of(first.span());
                            let before = self.out.len();
                            self.use_tree(&item.tree, &mut Vec::new());
                            for imp in &mut self.out[before..] {
                                imp.line = line;
                            }
                        }
                        segs.clear();
                        j += 3;
                        break;
                    }
                    _ => break,
                }
            }
            if !segs.is_empty() {
                self.push(segs, line_of(first.span()));
            }
            i = j;
        }
    }
}

fn is_colon(t: &TokenTree) -> bool {
    matches!(t, TokenTree::Punct(p) if p.as_char() == ':')
}

/// `::` at `tokens[i..i + 2]`.
fn path_sep(tokens: &[TokenTree], i: usize) -> bool {
    matches!((tokens.get(i), tokens.get(i + 1)), (Some(a), Some(b)) if is_colon(a) && is_colon(b))
}

impl<'ast> Visit<'ast> for Collector {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if m.content.is_some() {
            self.module.push(m.ident.to_string());
            syn::visit::visit_item_mod(self, m);
            self.module.pop();
        } else {
            syn::visit::visit_item_mod(self, m);
        }
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        for a in &u.attrs {
            self.visit_attribute(a);
        }
        if u.leading_colon.is_none() {
            self.use_tree(&u.tree, &mut Vec::new());
        }
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        if p.leading_colon.is_none() && p.segments.first().is_some_and(|s| is_root(&s.ident.to_string())) {
            let segs = p.segments.iter().map(|s| s.ident.to_string()).collect();
            self.push(segs, line_of(p.segments[0].ident.span()));
        }
        syn::visit::visit_path(self, p);
    }

    /// `pub(crate)`, `pub(super)`, `pub(in crate::a)` say who may see an item, they import nothing.
    fn visit_visibility(&mut self, _: &'ast syn::Visibility) {}

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        self.visit_path(&m.path);
        self.tokens(m.tokens.clone());
    }

    fn visit_attribute(&mut self, a: &'ast syn::Attribute) {
        if let syn::Meta::List(list) = &a.meta {
            self.visit_path(&list.path);
            self.tokens(list.tokens.clone());
        } else {
            syn::visit::visit_attribute(self, a);
        }
    }

    fn visit_item_macro(&mut self, m: &'ast syn::ItemMacro) {
        let exported = m.attrs.iter().any(|a| a.path().is_ident("macro_export"));
        if let (true, Some(name)) = (exported, &m.ident) {
            self.exported_macros.push((name.to_string(), self.module.clone()));
        }
        syn::visit::visit_item_macro(self, m);
    }
}

/// What one source file imports.
struct FileImports {
    rel: PathBuf,
    module: Vec<String>,
    imports: Vec<Import>,
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
    let entries = fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut paths: Vec<PathBuf> =
        entries.map(|e| e.map(|e| e.path()).map_err(|e| e.to_string())).collect::<Result<_, _>>()?;
    paths.sort();
    for path in paths {
        if path.is_dir() {
            rust_files(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    Ok(())
}

/// Parses every `src/**/*.rs` and collects its crate-internal paths, resolving `crate::m!` macro paths to the
/// module that defines the `#[macro_export]` macro `m`.
fn collect(src: &Path) -> Result<Vec<FileImports>, String> {
    let mut files = Vec::new();
    rust_files(src, &mut files)?;
    let mut out = Vec::new();
    let mut macros: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for file in files {
        let rel = file.strip_prefix(src).unwrap().to_path_buf();
        let text = fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        let ast = syn::parse_file(&text).map_err(|e| {
            let at = e.span().start();
            format!("src/{}:{}:{}: cannot parse: {e}", rel.display(), at.line, at.column + 1)
        })?;
        let module = module_of(&rel);
        let mut c = Collector { module: module.clone(), out: Vec::new(), exported_macros: Vec::new() };
        c.visit_file(&ast);
        macros.extend(c.exported_macros);
        out.push(FileImports { rel, module, imports: c.out });
    }
    for f in &mut out {
        for imp in &mut f.imports {
            if let Ok(t) = &mut imp.target {
                if let Some(home) = t.first().and_then(|m| macros.get(m)) {
                    if t.len() == 1 && !module_exists(src, t) {
                        *t = home.iter().chain(t.iter()).cloned().collect();
                    }
                }
            }
        }
    }
    Ok(out)
}

/// The `crate::` paths of a lalrpop grammar (plain text): `crate::a::b`, `crate::a::{b, c::{d}}` over lines.
fn grammar_imports(text: &str) -> Vec<(usize, Vec<String>)> {
    let line_at = |offset: usize| text[..offset].matches('\n').count() + 1;
    let masked: String = text
        .lines()
        .map(|l| if l.trim_start().starts_with("//") { " ".repeat(l.len()) } else { l.to_string() })
        .collect::<Vec<_>>()
        .join("\n");
    let bytes = masked.as_bytes();
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = masked[from..].find("crate").map(|i| i + from) {
        from = i + 5;
        if (i > 0 && (word(bytes[i - 1]) || bytes[i - 1] == b':')) || bytes.get(i + 5).is_some_and(|&c| word(c)) {
            continue;
        }
        let mut pos = i + 5;
        tree(&masked, &mut pos, vec!["crate".to_string()], &mut |segs, at| out.push((line_at(at), segs)));
    }
    out
}

/// Reads `::a::b`, `::{...}` or `::*` after `prefix` at `*pos`, reporting each leaf with its byte offset.
fn tree(text: &str, pos: &mut usize, prefix: Vec<String>, emit: &mut dyn FnMut(Vec<String>, usize)) {
    let bytes = text.as_bytes();
    let skip_ws = |p: &mut usize| {
        while bytes.get(*p).is_some_and(|c| c.is_ascii_whitespace()) {
            *p += 1;
        }
    };
    let mut segs = prefix;
    let mut leaf_at = *pos;
    loop {
        let mut p = *pos;
        skip_ws(&mut p);
        if !text[p..].starts_with("::") {
            break;
        }
        p += 2;
        skip_ws(&mut p);
        match bytes.get(p) {
            Some(b'{') => {
                p += 1;
                loop {
                    skip_ws(&mut p);
                    match bytes.get(p) {
                        Some(b'}') | None => {
                            *pos = p + 1;
                            return;
                        }
                        Some(b',') => p += 1,
                        _ => {
                            let start = p;
                            while bytes.get(p).is_some_and(|&c| c.is_ascii_alphanumeric() || c == b'_') {
                                p += 1;
                            }
                            if start == p {
                                *pos = p;
                                return; // not a path: stop quietly
                            }
                            let mut sub = segs.clone();
                            let name = &text[start..p];
                            if name != "self" {
                                sub.push(name.to_string());
                            }
                            tree(text, &mut p, sub.clone(), emit);
                            if !text[start..p].contains("::") {
                                emit(sub, start);
                            }
                        }
                    }
                }
            }
            Some(b'*') => {
                *pos = p + 1;
                emit(segs, p);
                return;
            }
            _ => {
                let start = p;
                while bytes.get(p).is_some_and(|&c| c.is_ascii_alphanumeric() || c == b'_') {
                    p += 1;
                }
                if start == p {
                    break;
                }
                segs.push(text[start..p].to_string());
                leaf_at = start;
                *pos = p;
            }
        }
    }
    if segs.len() > 1 {
        emit(segs, leaf_at);
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Checking
// ---------------------------------------------------------------------------------------------------------------

/// Checks a tree laid out like the repository: `root/ARCHITECTURE.md`, `root/src/`, `root/grammar/`. Returns the
/// violations, one line each (`src/file.rs:LINE: ...`), or an error if the table is broken or a file unreadable.
fn check(root: &Path) -> Result<Vec<String>, String> {
    let markdown =
        fs::read_to_string(root.join("ARCHITECTURE.md")).map_err(|e| format!("cannot read ARCHITECTURE.md: {e}"))?;
    let rules = parse_rules(&markdown)?;
    let src = root.join("src");
    rules.validate(&src)?;
    let mut bad = Vec::new();
    for file in collect(&src)? {
        let Some(row) = rules.row_of(&file.module) else {
            bad.push(format!(
                "src/{}:1: module `{}` has no row in the table of ARCHITECTURE.md",
                file.rel.display(),
                show(&file.module)
            ));
            continue;
        };
        for imp in &file.imports {
            let why = match &imp.target {
                Err(e) => Some(e.clone()),
                Ok(t) if !rules.allows(row, &imp.module, t) => Some(format!("may not import `{}`", show(t))),
                Ok(_) => None,
            };
            if let Some(why) = why {
                bad.push(format!(
                    "src/{}:{}: module `{}` (row `{}`) {why} (written `{}`)",
                    file.rel.display(),
                    imp.line,
                    show(&imp.module),
                    row.name(),
                    imp.written
                ));
            }
        }
    }
    bad.extend(check_grammars(&rules, root)?);
    Ok(bad)
}

/// The grammars follow the rules of the module that owns them: `tap.lalrpop` is `parse`'s, any other
/// `NAME.lalrpop` belongs to the dialect `dialects::NAME`.
fn check_grammars(rules: &Rules, root: &Path) -> Result<Vec<String>, String> {
    let dir = root.join("grammar");
    let mut bad = Vec::new();
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "lalrpop"))
        .collect();
    files.sort();
    for file in files {
        let stem = file.file_stem().unwrap().to_string_lossy().to_string();
        let module: Vec<String> =
            if stem == "tap" { vec!["parse".into()] } else { vec!["dialects".into(), stem.clone()] };
        let name = format!("grammar/{stem}.lalrpop");
        if !module_exists(&root.join("src"), &module) {
            bad.push(format!("{name}:1: grammar of `{}`, which does not exist in src/", show(&module)));
            continue;
        }
        let Some(row) = rules.row_of(&module) else {
            bad.push(format!("{name}:1: module `{}` has no row in the table of ARCHITECTURE.md", show(&module)));
            continue;
        };
        let text = fs::read_to_string(&file).map_err(|e| format!("{name}: {e}"))?;
        for (line, segs) in grammar_imports(&text) {
            let target = &segs[1..];
            if !rules.allows(row, &module, target) {
                bad.push(format!(
                    "{name}:{line}: module `{}` (row `{}`) may not import `{}`",
                    show(&module),
                    row.name(),
                    show(target)
                ));
            }
        }
    }
    Ok(bad)
}

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn modules_respect_the_dependency_rules() {
    let bad = check(repo()).unwrap_or_else(|e| panic!("{e}"));
    assert!(bad.is_empty(), "dependency rule violations (see ARCHITECTURE.md, {HEADING}):\n{}", bad.join("\n"));
}

#[test]
fn the_checker_sees_the_real_imports() {
    // Guards against a checker that silently finds nothing.
    let files = collect(&repo().join("src")).unwrap();
    let all: Vec<(String, usize, String)> = files
        .iter()
        .flat_map(|f| {
            f.imports.iter().map(move |i| (f.rel.display().to_string(), i.line, show(i.target.as_ref().unwrap())))
        })
        .collect();
    let has = |file: &str, target: &str| all.iter().any(|(f, _, t)| f == file && t.starts_with(target));
    assert!(has("passes/layout_print.rs", "dialects::layout::"), "use crate:: paths");
    assert!(has("passes/cse.rs", "passes::pass::"), "use super:: paths");
    assert!(has("dialects/teg/eval/block.rs", "dialects::teg::ops::Binary::Mul"), "paths in function bodies");
    assert!(has("ir/body.rs", "ir::entity::define_id"), "crate::m! resolves to the module defining m");
    assert!(all.len() > 500, "only {} crate paths found", all.len());
    let grammar = grammar_imports(&fs::read_to_string(repo().join("grammar/tap.lalrpop")).unwrap());
    assert!(grammar.iter().any(|(_, s)| s.join("::") == "crate::ir::asm::Delim"), "{grammar:?}");
}

/// The file-level import graph inside one library: file module → the file modules of the same library it
/// imports (a path names the longest file module that is its prefix).
fn library_graph(files: &[FileImports], library: &str) -> BTreeMap<String, Vec<String>> {
    let inside: Vec<&FileImports> = files.iter().filter(|f| f.module.first().is_some_and(|m| m == library)).collect();
    let modules: Vec<Vec<String>> = inside.iter().map(|f| f.module.clone()).collect();
    let owner = |t: &[String]| modules.iter().filter(|m| is_prefix(m, t)).max_by_key(|m| m.len()).map(|m| m.join("::"));
    let mut graph = BTreeMap::new();
    for f in inside {
        let from = f.module.join("::");
        let mut to: Vec<String> = f
            .imports
            .iter()
            .filter_map(|i| i.target.as_ref().ok())
            .filter_map(|t| owner(t))
            .filter(|m| *m != from && !from.starts_with(&format!("{m}::")))
            .collect();
        to.sort();
        to.dedup();
        graph.insert(from, to);
    }
    graph
}

/// A cycle of the graph, if it has one (depth first, with an explicit stack).
fn find_cycle(graph: &BTreeMap<String, Vec<String>>) -> Option<Vec<String>> {
    let mut state: BTreeMap<&str, u8> = BTreeMap::new();
    for start in graph.keys() {
        if state.contains_key(start.as_str()) {
            continue;
        }
        let mut stack: Vec<(&str, usize)> = vec![(start, 0)];
        state.insert(start, 1);
        while let Some((node, next)) = stack.pop() {
            let succ = graph.get(node).map_or(&[][..], |v| v.as_slice());
            let Some(to) = succ.get(next) else {
                state.insert(node, 2);
                continue;
            };
            stack.push((node, next + 1));
            match state.get(to.as_str()) {
                Some(1) => {
                    let at = stack.iter().position(|(n, _)| *n == to.as_str()).unwrap();
                    return Some(stack[at..].iter().map(|(n, _)| n.to_string()).collect());
                }
                Some(_) => {}
                None => {
                    state.insert(to, 1);
                    stack.push((to, 0));
                }
            }
        }
    }
    None
}

#[test]
fn libraries_have_no_import_cycle_inside() {
    let files = collect(&repo().join("src")).unwrap();
    for library in ["zspace", "array", "layout", "machine"] {
        let graph = library_graph(&files, library);
        assert!(graph.len() > 1, "{library} has files");
        if let Some(cycle) = find_cycle(&graph) {
            panic!("import cycle inside the {library} library: {}", cycle.join(" -> "));
        }
    }
    let layout = library_graph(&files, "layout");
    assert!(layout["layout::core_form"].contains(&"layout::stage".to_string()), "{layout:?}");
    let mut planted = BTreeMap::new();
    planted.insert("a".to_string(), vec!["b".to_string()]);
    planted.insert("b".to_string(), vec!["c".to_string()]);
    planted.insert("c".to_string(), vec!["a".to_string()]);
    assert_eq!(find_cycle(&planted), Some(vec!["a".into(), "b".into(), "c".into()]));
}

// ---------------------------------------------------------------------------------------------------------------
// The checker against planted violations
// ---------------------------------------------------------------------------------------------------------------

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let dest = to.join(path.file_name().unwrap());
        if path.is_dir() {
            copy_dir(&path, &dest);
        } else {
            fs::copy(&path, &dest).unwrap();
        }
    }
}

/// A scratch copy of `ARCHITECTURE.md`, `src/` and `grammar/`, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("tap-arch-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        fs::copy(repo().join("ARCHITECTURE.md"), dir.join("ARCHITECTURE.md")).unwrap();
        copy_dir(&repo().join("src"), &dir.join("src"));
        copy_dir(&repo().join("grammar"), &dir.join("grammar"));
        Scratch(dir)
    }

    /// Appends `text` to `rel` (creating it and its folders).
    fn append(&self, rel: &str, text: &str) {
        let path = self.0.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        let mut old = fs::read_to_string(&path).unwrap_or_default();
        old.push_str(text);
        fs::write(&path, old).unwrap();
    }

    fn line_of(&self, rel: &str, marker: &str) -> usize {
        let text = fs::read_to_string(self.0.join(rel)).unwrap();
        text.lines().position(|l| l.contains(marker)).unwrap_or_else(|| panic!("{marker} not in {rel}")) + 1
    }

    fn edit_table(&self, f: impl FnOnce(String) -> String) {
        let path = self.0.join("ARCHITECTURE.md");
        fs::write(&path, f(fs::read_to_string(&path).unwrap())).unwrap();
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// Each planted violation: the file, a marker on the line the checker must report, and the target it names.
const PLANTED: &[(&str, &str, &str)] = &[
    // A multi-line grouped use in a dialect, reported at the member's line.
    ("src/dialects/teg/verify.rs", "PLANT_GROUP", "dialects::layout::attr::LayoutAttr"),
    // `super::super::` out of teg into layout.
    ("src/dialects/teg/ops/attrs.rs", "PLANT_SUPER", "dialects::layout::repr::Layout"),
    // `self::super::` out of an inline module three levels down (`dialects::teg::ops::attrs::inner` → `dialects::layout`).
    ("src/dialects/teg/ops/attrs.rs", "PLANT_INLINE", "dialects::layout::cute::X"),
    // A fully qualified path inside a function body of a generic pass.
    ("src/passes/cse.rs", "PLANT_BODY", "dialects::teg::ops::decode"),
    // The same in a type and in a macro body.
    ("src/passes/dce.rs", "PLANT_TYPE", "dialects::arith::Fold"),
    ("src/passes/dce.rs", "PLANT_MACRO", "dialects::func::NAME"),
    // A library importing the core.
    ("src/zspace/range.rs", "PLANT_LIB", "ir::Context"),
    // The core importing a dialect (with spaces around `::`).
    ("src/ir/walk.rs", "PLANT_IR", "dialects::builtin::MODULE"),
    // A dialect importing the passes.
    ("src/dialects/arith/mod.rs", "PLANT_DIALECT_PASSES", "passes::pass::Pass"),
    // A pass folder using a dialect it has no row for.
    ("src/passes/teg_to_npu/patterns.rs", "PLANT_FOLDER", "dialects::teg::ops::OpKind"),
    // `render` importing `parse` (`render` is a file at the root, so `super::parse` is `crate::parse`).
    ("src/render.rs", "PLANT_RENDER", "parse::parse_file"),
    // A generic pass reaching a dialect through a dialect's pass.
    ("src/passes/dce.rs", "PLANT_THROUGH", "passes::layout_print::ENTRY"),
    // A grammar using another dialect.
    ("grammar/layout.lalrpop", "PLANT_GRAMMAR", "dialects::teg::ops::OpKind"),
];

fn plant(s: &Scratch) {
    s.append(
        "src/dialects/teg/verify.rs",
        "\n#[allow(unused_imports)]\nuse crate::{\n    ir::Context,\n    dialects::layout::attr::LayoutAttr, // PLANT_GROUP\n};\n",
    );
    s.append(
        "src/dialects/teg/ops/attrs.rs",
        "\n#[allow(unused_imports)]\nuse super::super::super::layout::repr::Layout; // PLANT_SUPER\n\
         mod inner {\n    #[allow(unused_imports)]\n    use self::super::super::super::super::layout::cute::X; // PLANT_INLINE\n    \
         #[allow(unused_imports)]\n    use self::deeper::Y; // stays inside: not a violation\n    mod deeper { pub struct Y; }\n}\n",
    );
    s.append(
        "src/passes/cse.rs",
        "\n#[allow(dead_code)]\nfn planted() {\n    let _ = 1;\n    let _ = crate::dialects::teg::ops::decode; // PLANT_BODY\n}\n",
    );
    s.append(
        "src/passes/dce.rs",
        "\n#[allow(dead_code)]\nstruct Planted(Vec<crate::dialects::arith::Fold>); // PLANT_TYPE\n\
         #[allow(dead_code)]\nfn planted_macro() {\n    println!(\"{}\", \n        crate::dialects::func::NAME); // PLANT_MACRO\n}\n",
    );
    s.append("src/passes/dce.rs", "\n#[allow(unused_imports)]\nuse super::layout_print::ENTRY; // PLANT_THROUGH\n");
    s.append("src/zspace/range.rs", "\n#[allow(unused_imports)]\nuse crate::ir::Context; // PLANT_LIB\n");
    s.append(
        "src/ir/walk.rs",
        "\n#[allow(dead_code)]\ntype Planted = crate :: dialects :: builtin :: MODULE; // PLANT_IR\n",
    );
    s.append(
        "src/dialects/arith/mod.rs",
        "\n#[allow(unused_imports)]\nuse crate::passes::pass::Pass; // PLANT_DIALECT_PASSES\n",
    );
    s.append("src/passes/mod.rs", "\npub mod teg_to_npu;\n");
    s.append("src/passes/teg_to_npu/mod.rs", "//! A planted conversion pass.\nmod patterns;\n");
    s.append(
        "src/passes/teg_to_npu/patterns.rs",
        "//! Its patterns.\nuse crate::ir::Context;\nuse super::super::pass::Pass;\nuse crate::{\n    dialects::teg::ops::OpKind, // PLANT_FOLDER\n};\n",
    );
    s.append("src/render.rs", "\n#[allow(unused_imports)]\nuse super::parse::parse_file; // PLANT_RENDER\n");
    s.append(
        "grammar/layout.lalrpop",
        "\nuse crate::{\n    ir::Context,\n    dialects::teg::ops::OpKind, // PLANT_GRAMMAR\n};\n",
    );
}

#[test]
fn the_checker_catches_each_kind_of_violation() {
    let s = Scratch::new("planted");
    plant(&s);
    let bad = check(&s.0).unwrap_or_else(|e| panic!("{e}"));
    for (file, marker, target) in PLANTED {
        let line = s.line_of(file, marker);
        let at = format!("{file}:{line}: ");
        assert!(
            bad.iter().any(|b| b.starts_with(&at) && b.contains(&format!("`{target}`"))),
            "{marker}: expected a violation at {at} naming `{target}`, got:\n{}",
            bad.join("\n")
        );
    }
    assert_eq!(bad.len(), PLANTED.len(), "unexpected extra violations:\n{}", bad.join("\n"));
    if std::env::var_os("TAP_ARCH_SHOW").is_some() {
        eprintln!("{}", bad.join("\n"));
    }

    // A row for the folder pass makes every file in it legal.
    s.edit_table(|md| {
        let row = "| pass | `passes::teg_print_dot` |";
        let at = md.find(row).unwrap();
        let end = at + md[at..].find('\n').unwrap() + 1;
        let new = "| pass | `passes::teg_to_npu` | `passes`, `ir`, `interfaces`, libraries, `dialects::teg` |\n";
        format!("{}{new}{}", &md[..end], &md[end..])
    });
    let bad = check(&s.0).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(bad.len(), PLANTED.len() - 1, "{}", bad.join("\n"));
    assert!(!bad.iter().any(|b| b.contains("teg_to_npu")), "{}", bad.join("\n"));
}

#[test]
fn a_broken_table_is_an_error() {
    let s = Scratch::new("table");
    let original = fs::read_to_string(s.0.join("ARCHITECTURE.md")).unwrap();
    let cases: &[(&str, &str, &str)] = &[
        ("| core | `ir` | libraries |", "| core | `ir` | libraries, `dialects::nosuch` |", "unknown module"),
        ("| core | `ir` | libraries |", "| core | `irr` | libraries |", "does not exist"),
        ("| core | `ir` | libraries |", "| core | `ir` | libraries, some prose |", "neither"),
        ("| core | `ir` | libraries |", "| core | `ir` | libraries | extra |", "expected 3 cells"),
        ("| core | `ir` | libraries |", "| core | `ir` | libraries, `parse` |", "cycle"),
        ("| library | `zspace` | — |", "| library | `zspace` | `layout` |", "not a library listed above"),
        (HEADING, "## Dependency policy", "no heading"),
    ];
    for (from, to, expect) in cases {
        assert!(original.contains(from), "the table changed: no `{from}`");
        fs::write(s.0.join("ARCHITECTURE.md"), original.replacen(from, to, 1)).unwrap();
        match check(&s.0) {
            Err(e) => assert!(e.contains(expect), "`{to}`: expected an error mentioning `{expect}`, got:\n{e}"),
            Ok(v) => panic!("`{to}`: expected a table error, got violations {v:?}"),
        }
    }
    // A module with no row at all is reported as a violation of its own.
    fs::write(s.0.join("ARCHITECTURE.md"), &original).unwrap();
    s.append("src/newtop.rs", "//! New.\n");
    let bad = check(&s.0).unwrap();
    assert!(bad.iter().any(|b| b.contains("src/newtop.rs:1: module `newtop` has no row")), "{bad:?}");
}

#[test]
fn longest_prefix_picks_the_row() {
    let md = fs::read_to_string(repo().join("ARCHITECTURE.md")).unwrap();
    let rules = parse_rules(&md).unwrap();
    let row = |m: &str| rules.row_of(&parse_path(m).unwrap()).map(|r| r.name()).unwrap_or_default();
    assert_eq!(row("dialects::teg::eval::cell"), "dialects::*");
    assert_eq!(row("dialects"), "dialects");
    assert_eq!(row("passes::cse"), "passes");
    assert_eq!(row("passes::teg_print_dot"), "passes::teg_print_dot");
    assert_eq!(row("ir::print::names"), "ir");
    assert_eq!(row("crate"), "crate");
    let set: BTreeSet<String> = rules.rows.iter().filter(|r| r.layer == "library").map(|r| r.name()).collect();
    assert!(set.contains("zspace") && set.contains("array") && set.contains("machine"), "{set:?}");
}
