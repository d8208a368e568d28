//! Variable tables shared by all patterns (LLVM's `FileCheckPatternContext`): string and numeric
//! variables, `-D` command-line definitions and `--enable-var-scope` clearing.

use std::collections::{BTreeMap, BTreeSet};

use super::expr::{EvalError, ExprParser, Format, FormatKind};
use super::source::{ErrorDiag, SourceMgr, Span};

/// Index of a numeric variable in the [`Context`] arena.
pub(crate) type NumVarId = usize;

/// A numeric variable.
#[derive(Clone, Debug)]
pub(crate) struct NumVar {
    /// Name (`@LINE` for the pseudo variable).
    pub name: String,
    /// Implicit format given at definition.
    pub format: Format,
    /// Current value, if defined.
    pub value: Option<i128>,
    /// Input range the value was captured from.
    pub matched: Option<(usize, usize)>,
    /// Check-file line of the defining directive.
    pub def_line: Option<usize>,
}

/// A string variable value.
#[derive(Clone, Debug)]
pub(crate) struct StrVar {
    /// The value.
    pub value: Vec<u8>,
    /// Input range it was captured from (absent for `-D` values).
    pub range: Option<(usize, usize)>,
}

/// All variables.
#[derive(Default)]
pub(crate) struct Context {
    strings: BTreeMap<String, StrVar>,
    defined_strings: BTreeSet<String>,
    nums: Vec<NumVar>,
    num_table: BTreeMap<String, NumVarId>,
    line_var: Option<NumVarId>,
}

impl Context {
    /// The value of string variable `name`.
    pub fn string_var(&self, name: &str) -> Option<&StrVar> {
        self.strings.get(name)
    }

    /// Sets string variable `name`.
    pub fn set_string_var(&mut self, name: &str, v: StrVar) {
        self.strings.insert(name.to_string(), v);
    }

    /// Whether a string variable of this name is defined anywhere (collision detection).
    pub fn string_var_defined(&self, name: &str) -> bool {
        self.defined_strings.contains(name)
    }

    /// Records that a string variable of this name is defined by some pattern.
    pub fn mark_string_defined(&mut self, name: &str) {
        self.defined_strings.insert(name.to_string());
    }

    /// The numeric variable `id`.
    pub fn num_var(&self, id: NumVarId) -> &NumVar {
        &self.nums[id]
    }

    /// Looks up a numeric variable by name.
    pub fn num_table_get(&self, name: &str) -> Option<NumVarId> {
        self.num_table.get(name).copied()
    }

    /// Makes `name` refer to numeric variable `id`.
    pub fn num_table_insert(&mut self, name: &str, id: NumVarId) {
        self.num_table.insert(name.to_string(), id);
    }

    /// Makes `name` refer to `id` unless it already refers to a variable.
    pub fn num_table_ensure(&mut self, name: &str, id: NumVarId) {
        self.num_table.entry(name.to_string()).or_insert(id);
    }

    /// Creates a numeric variable (not yet visible in the name table).
    pub fn make_num_var(&mut self, name: &str, format: Format, def_line: Option<usize>) -> NumVarId {
        self.nums.push(NumVar { name: name.to_string(), format, value: None, matched: None, def_line });
        self.nums.len() - 1
    }

    /// Sets the value of numeric variable `id`.
    pub fn set_num_value(&mut self, id: NumVarId, v: i128, matched: Option<(usize, usize)>) {
        self.nums[id].value = Some(v);
        self.nums[id].matched = matched;
    }

    /// Creates the `@LINE` pseudo variable.
    pub fn create_line_var(&mut self) {
        let id = self.make_num_var("@LINE", Format::of(FormatKind::Unsigned), None);
        self.num_table_insert("@LINE", id);
        self.line_var = Some(id);
    }

    /// Sets `@LINE` before matching a pattern of check-file line `line`.
    pub fn set_line(&mut self, line: usize) {
        if let Some(id) = self.line_var {
            self.set_num_value(id, line as i128, None);
        }
    }

    /// `--enable-var-scope`: forgets every variable whose name does not start with `$`.
    pub fn clear_local_vars(&mut self) {
        self.strings.retain(|k, _| k.starts_with('$'));
        for (name, &id) in &self.num_table {
            if !name.starts_with('$') {
                self.nums[id].value = None;
                self.nums[id].matched = None;
            }
        }
        self.num_table.retain(|k, _| k.starts_with('$'));
    }

    /// LLVM's `defineCmdlineVariables`: applies `-D` definitions (`NAME=VAL` or
    /// `#[FMT,]NAME=EXPR`). Errors are printed to `out`; returns whether all succeeded.
    pub fn define_cmdline(&mut self, defines: &[String], sm: &mut SourceMgr, out: &mut String) -> bool {
        if defines.is_empty() {
            return true;
        }
        let (text, indices) = cmdline_buffer(defines);
        let buf = sm.add("Global defines", text.into_bytes());
        let mut ok = true;
        for (start, len) in indices {
            let span = Span::new(sm.text(buf), buf, start, start + len);
            if let Err(e) = self.define_one(span) {
                ok = false;
                match e {
                    DefineError::Diag(d) => d.print(sm, out),
                    DefineError::Plain(msg) => {
                        out.push_str(&msg);
                        out.push('\n');
                    }
                }
            }
        }
        ok
    }

    fn define_one(&mut self, span: Span<'_>) -> Result<(), DefineError> {
        if span.is_empty() {
            let msg = "missing equal sign in global definition";
            return Err(DefineError::Diag(ErrorDiag::logged(span.loc(), msg)));
        }
        if span.starts_with(b"#") {
            return self.define_numeric(span.drop_front(1));
        }
        self.define_string(span)
    }

    fn define_numeric(&mut self, expr: Span<'_>) -> Result<(), DefineError> {
        let mut parser = ExprParser::new(self, None);
        let (e, var) = parser.parse_block(expr, false).map_err(DefineError::Diag)?;
        let value = match e.ast {
            Some(ast) => ast.eval(self),
            None => Err(EvalError::Undefined(Vec::new())),
        };
        let value = value.map_err(|err| match err {
            EvalError::Overflow => DefineError::Plain("overflow error".into()),
            EvalError::Undefined(vars) => DefineError::Plain(
                vars.iter().map(|(n, _)| format!("undefined variable: {n}")).collect::<Vec<_>>().join("\n"),
            ),
        })?;
        if let Some(id) = var {
            self.set_num_value(id, value, None);
            let name = self.nums[id].name.clone();
            self.num_table_insert(&name, id);
        }
        Ok(())
    }

    fn define_string(&mut self, span: Span<'_>) -> Result<(), DefineError> {
        let eq = span.find(b"=").unwrap_or(span.len());
        let orig = span.take_front(eq);
        let value = span.drop_front(eq + 1).bytes().to_vec();
        let mut name_span = orig;
        let v = super::expr::parse_variable(&mut name_span).map_err(DefineError::Diag)?;
        if v.pseudo || !name_span.is_empty() {
            let msg = format!("invalid name in string variable definition '{}'", orig.string());
            return Err(DefineError::Diag(ErrorDiag::logged(orig.loc(), msg)));
        }
        let name = v.name.string();
        if self.num_table.contains_key(&name) {
            let msg = format!("numeric variable with name '{name}' already exists");
            return Err(DefineError::Diag(ErrorDiag::logged(v.name.loc(), msg)));
        }
        self.strings.entry(name.clone()).or_insert(StrVar { value, range: None });
        self.defined_strings.insert(name);
        Ok(())
    }
}

enum DefineError {
    Diag(ErrorDiag),
    Plain(String),
}

/// Builds the synthetic "Global defines" buffer and the (offset, length) of each definition
/// inside it, exactly as LLVM does so that error columns agree.
fn cmdline_buffer(defines: &[String]) -> (String, Vec<(usize, usize)>) {
    let mut text = String::new();
    let mut indices = Vec::new();
    for (i, def) in defines.iter().enumerate() {
        let prefix = format!("Global define #{}: ", i + 1);
        let Some(eq) = def.find('=') else {
            indices.push((text.len(), 0));
            continue;
        };
        if def.starts_with('#') {
            text.push_str(&format!("{prefix}{def} (parsed as: [["));
            let mut subst = def.clone();
            subst.replace_range(eq..eq + 1, ":");
            indices.push((text.len(), subst.len()));
            text.push_str(&subst);
            text.push_str("]])\n");
        } else {
            text.push_str(&prefix);
            indices.push((text.len(), def.len()));
            text.push_str(def);
            text.push('\n');
        }
    }
    (text, indices)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cmdline_definitions() {
        let mut ctx = Context::default();
        let mut sm = SourceMgr::default();
        let mut out = String::new();
        let defs = vec!["X=foo".to_string(), "#%x,N=10+6".to_string()];
        assert!(ctx.define_cmdline(&defs, &mut sm, &mut out), "{out}");
        assert_eq!(ctx.string_var("X").unwrap().value, b"foo");
        let n = ctx.num_table_get("N").unwrap();
        assert_eq!(ctx.num_var(n).value, Some(16));
        assert_eq!(ctx.num_var(n).format.kind, FormatKind::HexLower);
    }

    #[test]
    fn cmdline_definition_errors_point_into_synthetic_buffer() {
        let mut ctx = Context::default();
        let mut sm = SourceMgr::default();
        let mut out = String::new();
        let defs = vec!["#%z,N=5".to_string()];
        assert!(!ctx.define_cmdline(&defs, &mut sm, &mut out));
        assert!(out.starts_with("Global defines:1:43: error: invalid format specifier"), "{out}");
    }

    #[test]
    fn var_scope_clears_locals() {
        let mut ctx = Context::default();
        let v = StrVar { value: b"v".to_vec(), range: None };
        ctx.set_string_var("L", v.clone());
        ctx.set_string_var("$G", v);
        ctx.clear_local_vars();
        assert!(ctx.string_var("L").is_none());
        assert!(ctx.string_var("$G").is_some());
    }
}
