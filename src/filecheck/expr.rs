//! Numeric substitution blocks `[[#...]]`: matching formats, expression ASTs, their parser
//! (a port of LLVM's `parseNumericSubstitutionBlock` and friends) and evaluation.
//!
//! Values are `i128` (LLVM uses arbitrary-precision `APInt`); results outside that range are
//! reported as overflow errors.

use super::source::{ErrorDiag, Loc, Span, SPACE_CHARS};
use super::vars::{Context, NumVarId};

/// The kind of a matching format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FormatKind {
    /// No format (literals); defaults to unsigned.
    NoFormat,
    /// `%u`
    Unsigned,
    /// `%d`
    Signed,
    /// `%X`
    HexUpper,
    /// `%x`
    HexLower,
}

/// The largest precision a numeric format may give (`%.1024d`): a value is padded to it and its pattern repeats
/// a digit class that often, so a precision of 2^32 would take gigabytes.
pub const MAX_PRECISION: usize = 1024;

/// The most operators, calls and parentheses one numeric expression may hold: its tree is evaluated and
/// printed recursively, and each operator keeps the text of its operands.
pub const MAX_EXPR_OPERATORS: usize = 256;

/// A matching format: kind, precision (`%.8x`) and alternate form (`%#x`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Format {
    /// The kind.
    pub kind: FormatKind,
    /// Minimum number of digits.
    pub precision: usize,
    /// `0x` prefix.
    pub alt: bool,
}

impl Format {
    /// A format of `kind` without precision or alternate form.
    pub fn of(kind: FormatKind) -> Self {
        Format { kind, precision: 0, alt: false }
    }

    /// Whether a format is set (LLVM's `operator bool`).
    pub fn is_set(&self) -> bool {
        self.kind != FormatKind::NoFormat
    }

    /// LLVM's `operator==`: equal kinds (never `NoFormat`), precision and alternate form.
    pub fn same(&self, o: &Format) -> bool {
        self.is_set() && self.kind == o.kind && self.precision == o.precision && self.alt == o.alt
    }

    fn describe(&self) -> &'static str {
        match self.kind {
            FormatKind::NoFormat => "<none>",
            FormatKind::Unsigned => "%u",
            FormatKind::Signed => "%d",
            FormatKind::HexUpper => "%X",
            FormatKind::HexLower => "%x",
        }
    }

    fn is_hex(&self) -> bool {
        matches!(self.kind, FormatKind::HexUpper | FormatKind::HexLower)
    }

    /// The POSIX regex matching any value in this format.
    pub fn wildcard_regex(&self) -> String {
        let pre = if self.alt { "0x" } else { "" };
        let p = self.precision;
        let with_prec = |s: &str| format!("{pre}{s}{{{p}}}");
        match (self.kind, p) {
            (FormatKind::Signed, 0) => "-?[0-9]+".into(),
            (FormatKind::Signed, _) => with_prec("-?([1-9][0-9]*)?[0-9]"),
            (FormatKind::HexUpper, 0) => format!("{pre}[0-9A-F]+"),
            (FormatKind::HexUpper, _) => with_prec("([1-9A-F][0-9A-F]*)?[0-9A-F]"),
            (FormatKind::HexLower, 0) => format!("{pre}[0-9a-f]+"),
            (FormatKind::HexLower, _) => with_prec("([1-9a-f][0-9a-f]*)?[0-9a-f]"),
            (_, 0) => "[0-9]+".into(),
            (_, _) => with_prec("([1-9][0-9]*)?[0-9]"),
        }
    }

    /// The text of `v` in this format, or an overflow error (negative value in an unsigned
    /// format).
    pub fn matching_string(&self, v: i128) -> Result<String, EvalError> {
        if self.kind != FormatKind::Signed && v < 0 {
            return Err(EvalError::Overflow);
        }
        let abs = v.unsigned_abs();
        let digits = match self.kind {
            FormatKind::HexUpper => format!("{abs:X}"),
            FormatKind::HexLower => format!("{abs:x}"),
            _ => abs.to_string(),
        };
        let sign = if v < 0 { "-" } else { "" };
        let pre = if self.alt { "0x" } else { "" };
        let zeros = "0".repeat(self.precision.saturating_sub(digits.len()));
        Ok(format!("{sign}{pre}{zeros}{digits}"))
    }

    /// Parses text matched by [`Format::wildcard_regex`].
    pub fn value_from_str(&self, s: &[u8]) -> Option<i128> {
        let (neg, mut s) = match s.strip_prefix(b"-") {
            Some(rest) => (true, rest),
            None => (false, s),
        };
        if self.kind != FormatKind::Signed && self.alt {
            s = s.strip_prefix(b"0x").unwrap_or(s);
        }
        let radix = if self.is_hex() { 16 } else { 10 };
        let v = u128::from_str_radix(std::str::from_utf8(s).ok()?, radix).ok()?;
        let v = i128::try_from(v).ok()?;
        Some(if neg { -v } else { v })
    }
}

/// A binary function usable in expressions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Func {
    Add,
    Sub,
    Mul,
    Div,
    Max,
    Min,
}

impl Func {
    fn apply(self, l: i128, r: i128) -> Result<i128, EvalError> {
        let v = match self {
            Func::Add => l.checked_add(r),
            Func::Sub => l.checked_sub(r),
            Func::Mul => l.checked_mul(r),
            Func::Div => l.checked_div(r),
            Func::Max => Some(l.max(r)),
            Func::Min => Some(l.min(r)),
        };
        v.ok_or(EvalError::Overflow)
    }
}

/// Expression AST.
#[derive(Clone, Debug)]
pub(crate) enum Ast {
    /// Integer literal.
    Literal { text: String, value: i128 },
    /// Use of a numeric variable (`@LINE` included).
    Var { name: String, loc: Loc, var: NumVarId },
    /// Binary operation or function call.
    Binop { text: String, loc: Loc, func: Func, lhs: Box<Ast>, rhs: Box<Ast> },
}

/// Why an evaluation failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum EvalError {
    /// Use of variables without a value (name and location of each use).
    Undefined(Vec<(String, Loc)>),
    /// Arithmetic overflow, division by zero or unrepresentable value.
    Overflow,
}

impl Ast {
    fn text(&self) -> &str {
        match self {
            Ast::Literal { text, .. } | Ast::Binop { text, .. } => text,
            Ast::Var { name, .. } => name,
        }
    }

    /// Evaluates the expression with the current variable values.
    pub fn eval(&self, ctx: &Context) -> Result<i128, EvalError> {
        match self {
            Ast::Literal { value, .. } => Ok(*value),
            Ast::Var { name, loc, var } => {
                ctx.num_var(*var).value.ok_or_else(|| EvalError::Undefined(vec![(name.clone(), *loc)]))
            }
            Ast::Binop { func, lhs, rhs, .. } => match (lhs.eval(ctx), rhs.eval(ctx)) {
                (Ok(l), Ok(r)) => func.apply(l, r),
                (l, r) => Err(join_errors(l.err(), r.err())),
            },
        }
    }

    /// LLVM's `getImplicitFormat`: the format inherited from the variables used.
    fn implicit_format(&self, ctx: &Context) -> Result<Format, ErrorDiag> {
        match self {
            Ast::Literal { .. } => Ok(Format::of(FormatKind::NoFormat)),
            Ast::Var { var, .. } => Ok(ctx.num_var(*var).format),
            Ast::Binop { lhs, rhs, loc, .. } => {
                let (l, r) = (lhs.implicit_format(ctx)?, rhs.implicit_format(ctx)?);
                if l.is_set() && r.is_set() && !l.same(&r) {
                    return Err(ErrorDiag::logged(
                        *loc,
                        format!(
                            "implicit format conflict between '{}' ({}) and '{}' ({}), need an \
                             explicit format specifier",
                            lhs.text(),
                            l.describe(),
                            rhs.text(),
                            r.describe()
                        ),
                    ));
                }
                Ok(if l.is_set() { l } else { r })
            }
        }
    }
}

fn join_errors(l: Option<EvalError>, r: Option<EvalError>) -> EvalError {
    let mut undef = Vec::new();
    for e in [l, r].into_iter().flatten() {
        match e {
            EvalError::Undefined(v) => undef.extend(v),
            EvalError::Overflow => return EvalError::Overflow,
        }
    }
    EvalError::Undefined(undef)
}

/// A parsed numeric substitution block: optional expression and its matching format.
#[derive(Clone, Debug)]
pub(crate) struct Expression {
    /// The expression (absent for a bare definition such as `[[#N:]]`).
    pub ast: Option<Ast>,
    /// The format used to print or match the value.
    pub format: Format,
}

/// Which operands are allowed at a point of the grammar.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Operand {
    /// Only `@LINE` (first operand of a legacy `[[@LINE+n]]`).
    LineVar,
    /// Only a decimal literal (second operand of a legacy expression).
    LegacyLiteral,
    /// Anything.
    Any,
}

type PResult<T> = Result<T, ErrorDiag>;

fn err<T>(loc: Loc, msg: impl Into<String>) -> PResult<T> {
    Err(ErrorDiag::logged(loc, msg))
}

/// Parser state shared by the recursive descent functions.
pub(crate) struct ExprParser<'c> {
    /// Variable tables.
    pub ctx: &'c mut Context,
    /// Check-file line of the directive (for `@LINE` and same-line detection).
    pub line: Option<usize>,
    /// Operators, calls and parentheses parsed so far.
    operators: usize,
}

/// A variable name as parsed by LLVM's `parseVariable`.
pub(crate) struct VarName<'a> {
    /// The name, including a leading `$` or `@`.
    pub name: Span<'a>,
    /// Whether it is a pseudo variable (`@LINE`).
    pub pseudo: bool,
}

/// LLVM's `Pattern::parseVariable`: consumes a variable name from the front of `s`.
pub(crate) fn parse_variable<'a>(s: &mut Span<'a>) -> PResult<VarName<'a>> {
    let b = s.bytes();
    if b.is_empty() {
        return err(s.loc(), "empty variable name");
    }
    let pseudo = b[0] == b'@';
    let mut i = usize::from(b[0] == b'$' || pseudo);
    if i == b.len() {
        let kind = if pseudo { "pseudo " } else { "global " };
        return err(s.loc_at(i), format!("empty {kind}variable name"));
    }
    if !(b[i] == b'_' || b[i].is_ascii_alphabetic()) {
        return err(s.loc(), "invalid variable name");
    }
    i += 1;
    while i < b.len() && (b[i] == b'_' || b[i].is_ascii_alphanumeric()) {
        i += 1;
    }
    let name = s.take_front(i);
    *s = s.drop_front(i);
    Ok(VarName { name, pseudo })
}

impl<'c> ExprParser<'c> {
    /// A parser defining and reading variables in `ctx`, for a directive on check-file line `line`.
    pub fn new(ctx: &'c mut Context, line: Option<usize>) -> Self {
        ExprParser { ctx, line, operators: 0 }
    }

    /// Counts one more operator, call or parenthesis at `loc`, up to [`MAX_EXPR_OPERATORS`].
    fn grow(&mut self, loc: Loc) -> PResult<()> {
        self.operators += 1;
        if self.operators > MAX_EXPR_OPERATORS {
            return err(loc, format!("expression is too complex (more than {MAX_EXPR_OPERATORS} operators)"));
        }
        Ok(())
    }

    /// LLVM's `parseNumericSubstitutionBlock`: returns the expression and the variable it
    /// defines, if any.
    pub fn parse_block(&mut self, mut expr: Span<'_>, legacy_line: bool) -> PResult<(Expression, Option<NumVarId>)> {
        let explicit = self.parse_format_spec(&mut expr)?;
        let mut def = None;
        if let Some(d) = expr.find(b":") {
            def = Some(expr.take_front(d));
            expr = expr.drop_front(d + 1);
        }
        expr = expr.ltrim(SPACE_CHARS);
        let constraint = expr.consume_front(b"==");
        expr = expr.ltrim(SPACE_CHARS);
        let ast = if expr.is_empty() {
            if constraint {
                return err(expr.loc(), "empty numeric expression should not have a constraint");
            }
            None
        } else {
            Some(self.parse_top_expr(expr.rtrim(SPACE_CHARS), legacy_line, !constraint)?)
        };
        let format = self.select_format(explicit, ast.as_ref())?;
        let var = match def {
            Some(d) => Some(self.parse_var_definition(d.ltrim(SPACE_CHARS), format)?),
            None => None,
        };
        Ok((Expression { ast, format }, var))
    }

    fn select_format(&self, explicit: Option<(Format, usize)>, ast: Option<&Ast>) -> PResult<Format> {
        let precision = explicit.map_or(0, |e| e.1);
        let mut format = match (explicit, ast) {
            (Some((f, _)), _) if f.is_set() => f,
            (_, Some(ast)) => ast.implicit_format(self.ctx)?,
            _ => Format::of(FormatKind::NoFormat),
        };
        if !format.is_set() {
            format = Format { precision, ..Format::of(FormatKind::Unsigned) };
        }
        Ok(format)
    }

    /// Parses `%[#][.N]<u|d|x|X>,` at the front of `expr`. Returns the format (possibly unset)
    /// and the precision.
    fn parse_format_spec(&mut self, expr: &mut Span<'_>) -> PResult<Option<(Format, usize)>> {
        let Some(end) = expr.find(b",") else {
            return Ok(None);
        };
        if expr.find(b"(").is_some_and(|f| f < end) {
            return Ok(None);
        }
        let mut f = expr.take_front(end).trim(SPACE_CHARS);
        *expr = expr.drop_front(end + 1);
        if !f.consume_front(b"%") {
            return err(f.loc(), "invalid matching format specification in expression");
        }
        let alt_loc = f.loc();
        let alt = f.consume_front(b"#");
        let mut precision = 0;
        if f.consume_front(b".") {
            let at = f.loc();
            precision = match consume_integer(&mut f, 10) {
                Some(p) if p <= MAX_PRECISION as u128 => p as usize,
                Some(_) => return err(at, format!("precision in format specifier is larger than {MAX_PRECISION}")),
                None => return err(f.loc(), "invalid precision in format specifier"),
            };
        }
        let mut format = Format::of(FormatKind::NoFormat);
        if !f.is_empty() {
            let loc = f.loc();
            let kind = match f.pop_front() {
                Some(b'u') => FormatKind::Unsigned,
                Some(b'd') => FormatKind::Signed,
                Some(b'x') => FormatKind::HexLower,
                Some(b'X') => FormatKind::HexUpper,
                _ => return err(loc, "invalid format specifier in expression"),
            };
            format =
                Format { kind, precision, alt: alt && matches!(kind, FormatKind::HexLower | FormatKind::HexUpper) };
        }
        if alt && !format.is_hex() {
            return err(alt_loc, "alternate form only supported for hex values");
        }
        let f = f.ltrim(SPACE_CHARS);
        if !f.is_empty() {
            return err(f.loc(), "invalid matching format specification in expression");
        }
        Ok(Some((format, precision)))
    }

    fn parse_top_expr(&mut self, mut expr: Span<'_>, legacy: bool, maybe_constraint: bool) -> PResult<Ast> {
        let outer = expr;
        let allowed = if legacy { Operand::LineVar } else { Operand::Any };
        let mut ast = self.parse_operand(&mut expr, allowed, maybe_constraint)?;
        while !expr.is_empty() {
            ast = self.parse_binop(outer, &mut expr, ast, legacy)?;
            if legacy && !expr.is_empty() {
                return err(expr.loc(), format!("unexpected characters at end of expression '{}'", expr.string()));
            }
        }
        Ok(ast)
    }

    fn parse_var_definition(&mut self, mut expr: Span<'_>, format: Format) -> PResult<NumVarId> {
        let v = parse_variable(&mut expr)?;
        let name = v.name.string();
        if v.pseudo {
            return err(v.name.loc(), "definition of pseudo numeric variable unsupported");
        }
        if self.ctx.string_var_defined(&name) {
            return err(v.name.loc(), format!("string variable with name '{name}' already exists"));
        }
        let expr = expr.ltrim(SPACE_CHARS);
        if !expr.is_empty() {
            return err(expr.loc(), "unexpected characters after numeric variable name");
        }
        match self.ctx.num_table_get(&name) {
            Some(id) if !self.ctx.num_var(id).format.same(&format) => {
                err(expr.loc(), "format different from previous variable definition")
            }
            Some(id) => Ok(id),
            None => Ok(self.ctx.make_num_var(&name, format, self.line)),
        }
    }

    fn parse_var_use(&mut self, v: &VarName<'_>) -> PResult<Ast> {
        let name = v.name.string();
        if v.pseudo && name != "@LINE" {
            return err(v.name.loc(), format!("invalid pseudo numeric variable '{name}'"));
        }
        let id = match self.ctx.num_table_get(&name) {
            Some(id) => id,
            None => {
                let id = self.ctx.make_num_var(&name, Format::of(FormatKind::Unsigned), None);
                self.ctx.num_table_insert(&name, id);
                id
            }
        };
        let def_line = self.ctx.num_var(id).def_line;
        if def_line.is_some() && self.line.is_some() && def_line == self.line {
            return err(v.name.loc(), format!("numeric variable '{name}' defined earlier in the same CHECK directive"));
        }
        Ok(Ast::Var { name, loc: v.name.loc(), var: id })
    }

    fn parse_operand(&mut self, expr: &mut Span<'_>, allowed: Operand, maybe_constraint: bool) -> PResult<Ast> {
        if expr.starts_with(b"(") {
            if allowed != Operand::Any {
                return err(expr.loc(), "parenthesized expression not permitted here");
            }
            return self.parse_paren(expr);
        }
        if matches!(allowed, Operand::LineVar | Operand::Any) {
            let mut probe = *expr;
            match parse_variable(&mut probe) {
                Ok(v) => {
                    *expr = probe;
                    if expr.ltrim(SPACE_CHARS).starts_with(b"(") {
                        if allowed != Operand::Any {
                            return err(v.name.loc(), "unexpected function call");
                        }
                        return self.parse_call(expr, v.name);
                    }
                    return self.parse_var_use(&v);
                }
                Err(e) if allowed == Operand::LineVar => return Err(e),
                Err(_) => {}
            }
        }
        self.parse_literal(expr, allowed, maybe_constraint)
    }

    fn parse_literal(&mut self, expr: &mut Span<'_>, allowed: Operand, maybe_constraint: bool) -> PResult<Ast> {
        let save = *expr;
        let neg = expr.consume_front(b"-");
        let radix = if allowed == Operand::LegacyLiteral { 10 } else { 0 };
        match consume_integer(expr, radix).and_then(|v| i128::try_from(v).ok()) {
            Some(v) => Ok(Ast::Literal { text: save.drop_back(expr.len()).string(), value: if neg { -v } else { v } }),
            None => {
                let what = if maybe_constraint { "matching constraint or " } else { "" };
                err(save.loc(), format!("invalid {what}operand format"))
            }
        }
    }

    fn parse_paren(&mut self, expr: &mut Span<'_>) -> PResult<Ast> {
        *expr = expr.ltrim(SPACE_CHARS);
        self.grow(expr.loc())?;
        expr.consume_front(b"(");
        *expr = expr.ltrim(SPACE_CHARS);
        if expr.is_empty() {
            return err(expr.loc(), "missing operand in expression");
        }
        let mut sub = self.parse_operand(expr, Operand::Any, false)?;
        *expr = expr.ltrim(SPACE_CHARS);
        while !expr.is_empty() && !expr.starts_with(b")") {
            let orig = *expr;
            sub = self.parse_binop(orig, expr, sub, false)?;
            *expr = expr.ltrim(SPACE_CHARS);
        }
        if !expr.consume_front(b")") {
            return err(expr.loc(), "missing ')' at end of nested expression");
        }
        Ok(sub)
    }

    fn parse_binop(&mut self, whole: Span<'_>, rest: &mut Span<'_>, lhs: Ast, legacy: bool) -> PResult<Ast> {
        *rest = rest.ltrim(SPACE_CHARS);
        if rest.is_empty() {
            return Ok(lhs);
        }
        let op_loc = rest.loc();
        self.grow(op_loc)?;
        let func = match rest.pop_front() {
            Some(b'+') => Func::Add,
            Some(b'-') => Func::Sub,
            op => {
                let op = op.map_or(String::new(), |c| (c as char).to_string());
                return err(op_loc, format!("unsupported operation '{op}'"));
            }
        };
        *rest = rest.ltrim(SPACE_CHARS);
        if rest.is_empty() {
            return err(rest.loc(), "missing operand in expression");
        }
        let allowed = if legacy { Operand::LegacyLiteral } else { Operand::Any };
        let rhs = self.parse_operand(rest, allowed, false)?;
        Ok(Ast::Binop {
            text: whole.drop_back(rest.len()).string(),
            loc: whole.loc(),
            func,
            lhs: Box::new(lhs),
            rhs: Box::new(rhs),
        })
    }

    fn parse_call(&mut self, expr: &mut Span<'_>, name: Span<'_>) -> PResult<Ast> {
        self.grow(name.loc())?;
        *expr = expr.ltrim(SPACE_CHARS);
        let func = match name.bytes() {
            b"add" => Func::Add,
            b"div" => Func::Div,
            b"max" => Func::Max,
            b"min" => Func::Min,
            b"mul" => Func::Mul,
            b"sub" => Func::Sub,
            _ => return err(name.loc(), format!("call to undefined function '{}'", name.string())),
        };
        expr.consume_front(b"(");
        *expr = expr.ltrim(SPACE_CHARS);
        let args = self.parse_call_args(expr)?;
        if !expr.consume_front(b")") {
            return err(expr.loc(), "missing ')' at end of call expression");
        }
        let n = args.len();
        let Ok([lhs, rhs]) = <[Ast; 2]>::try_from(args) else {
            return err(name.loc(), format!("function '{}' takes 2 arguments but {n} given", name.string()));
        };
        Ok(Ast::Binop { text: name.string(), loc: name.loc(), func, lhs: Box::new(lhs), rhs: Box::new(rhs) })
    }

    fn parse_call_args(&mut self, expr: &mut Span<'_>) -> PResult<Vec<Ast>> {
        let mut args = Vec::new();
        while !expr.is_empty() && !expr.starts_with(b")") {
            if expr.starts_with(b",") {
                return err(expr.loc(), "missing argument");
            }
            let outer = *expr;
            let mut arg = self.parse_operand(expr, Operand::Any, false)?;
            while !expr.is_empty() {
                *expr = expr.ltrim(SPACE_CHARS);
                if expr.starts_with(b",") || expr.starts_with(b")") {
                    break;
                }
                arg = self.parse_binop(outer, expr, arg, false)?;
            }
            args.push(arg);
            *expr = expr.ltrim(SPACE_CHARS);
            if !expr.consume_front(b",") {
                break;
            }
            *expr = expr.ltrim(SPACE_CHARS);
            if expr.starts_with(b")") {
                return err(expr.loc(), "missing argument");
            }
        }
        Ok(args)
    }
}

/// LLVM's `StringRef::consumeInteger` for unsigned values; radix 0 auto-detects `0x`, `0b`,
/// `0o` and a leading `0` (octal).
pub(crate) fn consume_integer(s: &mut Span<'_>, radix: u32) -> Option<u128> {
    let mut t = *s;
    let radix = if radix == 0 { auto_radix(&mut t) } else { radix };
    let digits = t.bytes().iter().take_while(|b| (**b as char).is_digit(radix)).count();
    if digits == 0 {
        return None;
    }
    let text = std::str::from_utf8(&t.bytes()[..digits]).ok()?;
    let v = u128::from_str_radix(text, radix).ok()?;
    *s = t.drop_front(digits);
    Some(v)
}

fn auto_radix(s: &mut Span<'_>) -> u32 {
    for (p, r) in [(&b"0x"[..], 16), (b"0X", 16), (b"0b", 2), (b"0B", 2), (b"0o", 8)] {
        if s.consume_front(p) {
            return r;
        }
    }
    let b = s.bytes();
    if b.len() > 1 && b[0] == b'0' && b[1].is_ascii_digit() {
        *s = s.drop_front(1);
        return 8;
    }
    10
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        let hex = Format { kind: FormatKind::HexLower, precision: 4, alt: true };
        assert_eq!(hex.matching_string(255).unwrap(), "0x00ff");
        assert_eq!(hex.value_from_str(b"0x00ff"), Some(255));
        assert_eq!(Format::of(FormatKind::Signed).matching_string(-3).unwrap(), "-3");
        assert!(Format::of(FormatKind::Unsigned).matching_string(-3).is_err());
        assert_eq!(Format::of(FormatKind::HexUpper).wildcard_regex(), "[0-9A-F]+");
        assert_eq!(Format::of(FormatKind::Unsigned).wildcard_regex(), "[0-9]+");
    }

    fn parse(text: &str, ctx: &mut Context) -> PResult<(Expression, Option<NumVarId>)> {
        let span = Span::new(text.as_bytes(), 0, 0, text.len());
        let line = Some(text.len());
        ExprParser::new(ctx, line).parse_block(span, false)
    }

    #[test]
    fn parses_and_evaluates() {
        let mut ctx = Context::default();
        ctx.create_line_var();
        let (e, v) = parse("%x,N:", &mut ctx).unwrap();
        assert!(e.ast.is_none() && v.is_some());
        ctx.num_table_insert("N", v.unwrap());
        ctx.set_num_value(v.unwrap(), 10, None);
        let (e, _) = parse("N+0x10", &mut ctx).unwrap();
        assert_eq!(e.ast.unwrap().eval(&ctx), Ok(26));
        assert_eq!(e.format.kind, FormatKind::HexLower);
        let (e, _) = parse("max(N, 3) - mul(2, 3)", &mut ctx).unwrap();
        assert_eq!(e.ast.unwrap().eval(&ctx), Ok(4));
        let (e, _) = parse("div(N, 0)", &mut ctx).unwrap();
        assert_eq!(e.ast.unwrap().eval(&ctx), Err(EvalError::Overflow));
        assert!(parse("foo(1,2)", &mut ctx).is_err());
        assert!(parse("N*2", &mut ctx).is_err());
        assert!(parse("%z,N", &mut ctx).is_err());
    }

    #[test]
    fn undefined_variables_are_collected() {
        let mut ctx = Context::default();
        let (e, _) = parse("A+B", &mut ctx).unwrap();
        match e.ast.unwrap().eval(&ctx) {
            Err(EvalError::Undefined(v)) => assert_eq!(v.len(), 2),
            other => panic!("{other:?}"),
        }
    }
}
