//! Check patterns: directive kinds, compiling a pattern line (literal text, `{{regex}}`,
//! `[[VAR:regex]]`, `[[VAR]]`, `[[#expr]]`) into a fixed string or one POSIX regex, and matching
//! it against a range of the input with the current variable values (a port of LLVM's
//! `Pattern::parsePattern` and `Pattern::match`).

use std::cell::{OnceCell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;

use super::expr::{EvalError, ExprParser, Expression};
use super::regex_match::{Captures, PosixRegex};
use super::regex_posix::{self, ParseMode};
use super::source::{ErrorDiag, Loc, Span, SPACE_CHARS};
use super::vars::{Context, NumVarId, StrVar};

/// The kind of a directive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CheckKind {
    /// `CHECK:` (and `CHECK-COUNT-n:`).
    Plain,
    /// `CHECK-NEXT:`
    Next,
    /// `CHECK-SAME:`
    Same,
    /// `CHECK-NOT:`
    Not,
    /// `CHECK-DAG:`
    Dag,
    /// `CHECK-LABEL:`
    Label,
    /// `CHECK-EMPTY:`
    Empty,
    /// The implicit end-of-file pattern carrying trailing DAG/NOT directives.
    Eof,
}

/// A directive kind with its modifiers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CheckType {
    /// The kind.
    pub kind: CheckKind,
    /// Repetition count (`CHECK-COUNT-n`), 1 otherwise.
    pub count: usize,
    /// The `{LITERAL}` modifier.
    pub literal: bool,
}

impl CheckType {
    /// A plain type of `kind`.
    pub fn of(kind: CheckKind) -> Self {
        CheckType { kind, count: 1, literal: false }
    }

    /// LLVM's `getDescription`, e.g. `CHECK-NEXT` or `CHECK-COUNT{LITERAL}`.
    pub fn description(&self, prefix: &str) -> String {
        let suffix = match self.kind {
            CheckKind::Plain if self.count > 1 => "-COUNT",
            CheckKind::Plain => "",
            CheckKind::Next => "-NEXT",
            CheckKind::Same => "-SAME",
            CheckKind::Not => "-NOT",
            CheckKind::Dag => "-DAG",
            CheckKind::Label => "-LABEL",
            CheckKind::Empty => "-EMPTY",
            CheckKind::Eof => return "implicit EOF".into(),
        };
        let modifiers = if self.literal { "{LITERAL}" } else { "" };
        format!("{prefix}{suffix}{modifiers}")
    }

    /// The abbreviation used in input-dump labels (`check`, `next`, ...).
    pub fn abbreviation(&self) -> &'static str {
        match self.kind {
            CheckKind::Plain if self.count > 1 => "count",
            CheckKind::Plain => "check",
            CheckKind::Next => "next",
            CheckKind::Same => "same",
            CheckKind::Not => "not",
            CheckKind::Dag => "dag",
            CheckKind::Label => "label",
            CheckKind::Empty => "empty",
            CheckKind::Eof => "eof",
        }
    }
}

/// What a substitution inserts.
#[derive(Clone, Debug)]
enum SubstKind {
    /// The escaped value of a string variable.
    Str(String),
    /// The formatted value of a numeric expression.
    Num(Expression),
}

/// The longest a pattern's regex may grow when variable values are substituted into it.
pub const MAX_SUBSTITUTED_BYTES: usize = 1 << 20;

/// A value spliced into the regex at match time.
#[derive(Clone, Debug)]
pub(crate) struct Substitution {
    /// The text of the block (`VAR` or `N+1`), for diagnostics.
    pub from: String,
    from_loc: Loc,
    insert_idx: usize,
    kind: SubstKind,
}

/// Matching options that affect pattern compilation.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PatternOptions {
    /// `--strict-whitespace`
    pub strict_whitespace: bool,
    /// `--match-full-lines`
    pub match_full_lines: bool,
    /// `--ignore-case`
    pub ignore_case: bool,
}

/// A successful match, relative to the start of the searched range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Match {
    /// Offset of the match in the searched range.
    pub pos: usize,
    /// Length of the match.
    pub len: usize,
}

/// Why a pattern did not match.
#[derive(Clone, Debug)]
pub(crate) enum MatchError {
    /// The pattern does not occur.
    NotFound,
    /// Substitution failed (undefined variable, overflow).
    Errors(Vec<ErrorDiag>),
}

/// A compiled check pattern.
#[derive(Clone, Debug)]
pub(crate) struct Pattern {
    /// Directive kind.
    pub ty: CheckType,
    /// Location of the pattern text.
    pub loc: Loc,
    /// Check-file line number, for `@LINE`.
    pub line: Option<usize>,
    fixed: Vec<u8>,
    regex: Vec<u8>,
    substs: Vec<Substitution>,
    var_defs: BTreeMap<String, usize>,
    num_defs: BTreeMap<String, (NumVarId, usize)>,
    ignore_case: bool,
    cache: PatternCache,
}

/// Compiled forms of a pattern (the fixed-string searcher and the last compiled regex).
#[derive(Default, Clone)]
struct PatternCache {
    fixed: OnceCell<Option<regex::bytes::Regex>>,
    last: RefCell<Option<(Vec<u8>, Rc<PosixRegex>)>>,
}

impl std::fmt::Debug for PatternCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PatternCache")
    }
}

/// LLVM 19 supports back-references `\\1`..`\\9` only (LLVM 22 raised this to 20).
const BACKREF_LIMIT: usize = 9;

impl Pattern {
    /// A pattern with nothing to match yet (used for the EOF pattern).
    pub fn empty(ty: CheckType, loc: Loc, line: Option<usize>) -> Self {
        Pattern {
            ty,
            loc,
            line,
            fixed: Vec::new(),
            regex: Vec::new(),
            substs: Vec::new(),
            var_defs: BTreeMap::new(),
            num_defs: BTreeMap::new(),
            ignore_case: false,
            cache: PatternCache::default(),
        }
    }

    /// Whether the pattern defines or uses variables (forbidden on `CHECK-LABEL`).
    pub fn has_variable(&self) -> bool {
        !(self.substs.is_empty() && self.var_defs.is_empty())
    }

    /// The raw fixed string or regex text, used for fuzzy "possible intended match" search.
    pub fn example_text(&self) -> &[u8] {
        if self.fixed.is_empty() {
            &self.regex
        } else {
            &self.fixed
        }
    }

    /// The literal text a plain pattern matches (neither a regex nor a variable nor `CHECK-EMPTY`/EOF), and
    /// whether it matches ignoring ASCII case.
    pub fn literal(&self) -> Option<(&[u8], bool)> {
        let plain = !self.fixed.is_empty() && self.ty.kind != CheckKind::Eof;
        plain.then_some((&self.fixed[..], self.ignore_case))
    }

    /// The fixed string and regex lengths, bounding the fuzzy search cost.
    pub fn text_sizes(&self) -> (usize, usize) {
        (self.fixed.len(), self.regex.len())
    }

    /// Substitutions, for "with X equal to ..." notes.
    pub fn substitutions(&self) -> &[Substitution] {
        &self.substs
    }

    /// Names of the variables this pattern defines, with the input range of their current value.
    pub fn variable_captures(&self, ctx: &Context) -> Vec<(String, (usize, usize))> {
        let mut caps: Vec<(String, (usize, usize))> = Vec::new();
        for name in self.var_defs.keys() {
            if let Some(r) = ctx.string_var(name).and_then(|v| v.range) {
                caps.push((name.clone(), r));
            }
        }
        for (name, (id, _)) in &self.num_defs {
            if let Some(r) = ctx.num_var(*id).matched {
                caps.push((name.clone(), r));
            }
        }
        caps.sort_by_key(|c| c.1 .0);
        caps
    }
}

/// Parser for one pattern line.
pub(crate) struct PatternParser<'c> {
    /// Variable tables.
    pub ctx: &'c mut Context,
    /// Compilation options.
    pub opts: PatternOptions,
}

type PResult<T> = Result<T, ErrorDiag>;

/// Mutable state while building the regex of one pattern.
struct Builder {
    pat: Pattern,
    cur_paren: usize,
}

impl PatternParser<'_> {
    /// LLVM's `Pattern::parsePattern` for the text `text` of a directive of type `ty` found with
    /// `prefix` on check-file line `line`.
    pub fn parse(&mut self, text: Span<'_>, prefix: &str, ty: CheckType, line: Option<usize>) -> PResult<Pattern> {
        let mut pat = Pattern::empty(ty, text.loc(), line);
        pat.ignore_case = self.opts.ignore_case;
        let full_lines = self.opts.match_full_lines && ty.kind != CheckKind::Not;
        let strict = self.opts.strict_whitespace;
        let mut text = text;
        if !(strict && self.opts.match_full_lines) {
            text = text.rtrim(SPACE_CHARS);
        }
        if text.is_empty() && ty.kind != CheckKind::Empty {
            let msg = format!("found empty check string with prefix '{prefix}:'");
            return Err(ErrorDiag::new(pat.loc, msg));
        }
        if !text.is_empty() && ty.kind == CheckKind::Empty {
            let msg = format!("found non-empty check string for empty check with prefix '{prefix}:'");
            return Err(ErrorDiag::new(pat.loc, msg));
        }
        if ty.kind == CheckKind::Empty {
            pat.regex = b"(\n$)".to_vec();
            return Ok(pat);
        }
        let plain = !text.contains(b"{{") && !text.contains(b"[[");
        if ty.literal || (!full_lines && (text.len() < 2 || plain)) {
            pat.fixed = text.bytes().to_vec();
            return Ok(pat);
        }
        let mut b = Builder { pat, cur_paren: 1 };
        if full_lines {
            b.pat.regex.push(b'^');
            if !strict {
                b.pat.regex.extend_from_slice(b" *");
            }
        }
        while !text.is_empty() {
            text = self.parse_piece(&mut b, text)?;
        }
        if full_lines {
            if !strict {
                b.pat.regex.extend_from_slice(b" *");
            }
            b.pat.regex.push(b'$');
        }
        Ok(b.pat)
    }

    /// Parses one `{{...}}`, `[[...]]` or literal run at the front of `text`; returns the rest.
    fn parse_piece<'a>(&mut self, b: &mut Builder, text: Span<'a>) -> PResult<Span<'a>> {
        if text.starts_with(b"{{") {
            return self.parse_regex_block(b, text);
        }
        if text.starts_with(b"[[") && !text.starts_with(b"[[[") {
            return self.parse_subst_block(b, text);
        }
        let end =
            [text.find_from(b"{{", 1), text.find_from(b"[[", 1)].into_iter().flatten().min().unwrap_or(text.len());
        regex_posix::escape(text.take_front(end).bytes(), &mut b.pat.regex);
        Ok(text.drop_front(end))
    }

    fn parse_regex_block<'a>(&mut self, b: &mut Builder, text: Span<'a>) -> PResult<Span<'a>> {
        let Some(end) = text.find(b"}}") else {
            let msg = "found start of regex string with no end '}}'";
            return Err(ErrorDiag::new(text.loc(), msg));
        };
        // LLVM wraps the block in parentheses if '|' occurs anywhere in the rest of the line.
        let has_alt = text.contains(b"|");
        if has_alt {
            b.pat.regex.push(b'(');
            b.cur_paren += 1;
        }
        add_regex(b, text.drop_front(2).take_front(end - 2), ParseMode::Lint)?;
        if has_alt {
            b.pat.regex.push(b')');
        }
        Ok(text.drop_front(end + 2))
    }

    fn parse_subst_block<'a>(&mut self, b: &mut Builder, text: Span<'a>) -> PResult<Span<'a>> {
        let unparsed = text.drop_front(2);
        let Some(end) = find_regex_var_end(unparsed)? else {
            let msg = "Invalid substitution block, no ]] found";
            return Err(ErrorDiag::new(text.loc(), msg));
        };
        let mut block = unparsed.take_front(end);
        let rest = unparsed.drop_front(end + 2);
        let is_num = block.consume_front(b"#");
        if is_num {
            self.parse_numeric_block(b, block, false)?;
        } else {
            self.parse_string_block(b, block)?;
        }
        Ok(rest)
    }

    fn parse_string_block(&mut self, b: &mut Builder, block: Span<'_>) -> PResult<()> {
        let var_end = block.find(b":");
        let name_part = block.take_front(var_end.unwrap_or(block.len()));
        if let Some(sp) = name_part.find_first_of(SPACE_CHARS) {
            return Err(ErrorDiag::new(block.loc_at(sp), "unexpected whitespace"));
        }
        let mut rest = block;
        let v = super::expr::parse_variable(&mut rest)?;
        let name = v.name.string();
        if var_end.is_none() {
            if v.pseudo {
                return self.parse_numeric_block(b, block, true);
            }
            if !rest.is_empty() {
                let msg = "invalid name in string variable use";
                return Err(ErrorDiag::new(v.name.loc(), msg));
            }
            return self.add_string_use(b, &name, v.name.loc());
        }
        if v.pseudo || !rest.consume_front(b":") {
            let msg = "invalid name in string variable definition";
            return Err(ErrorDiag::new(v.name.loc(), msg));
        }
        if self.ctx.num_table_get(&name).is_some() {
            let msg = format!("numeric variable with name '{name}' already exists");
            return Err(ErrorDiag::new(v.name.loc(), msg));
        }
        b.pat.regex.push(b'(');
        b.pat.var_defs.insert(name.clone(), b.cur_paren);
        self.ctx.mark_string_defined(&name);
        b.cur_paren += 1;
        if !rest.is_empty() {
            add_regex(b, rest, ParseMode::Lint)?;
        }
        b.pat.regex.push(b')');
        Ok(())
    }

    fn add_string_use(&mut self, b: &mut Builder, name: &str, loc: Loc) -> PResult<()> {
        if let Some(&paren) = b.pat.var_defs.get(name) {
            if !(1..=BACKREF_LIMIT).contains(&paren) {
                let msg = format!("Can't back-reference more than {BACKREF_LIMIT} variables");
                return Err(ErrorDiag::new(loc, msg));
            }
            b.pat.regex.extend_from_slice(format!("\\{paren}").as_bytes());
            return Ok(());
        }
        b.pat.substs.push(Substitution {
            from: name.to_string(),
            from_loc: loc,
            insert_idx: b.pat.regex.len(),
            kind: SubstKind::Str(name.to_string()),
        });
        Ok(())
    }

    fn parse_numeric_block(&mut self, b: &mut Builder, block: Span<'_>, legacy: bool) -> PResult<()> {
        let mut parser = ExprParser::new(self.ctx, b.pat.line);
        let (expr, defined) = parser.parse_block(block, legacy)?;
        let mut insert_idx = b.pat.regex.len();
        let subst_needed = expr.ast.is_some();
        if let Some(var) = defined {
            let name = self.ctx.num_var(var).name.clone();
            b.pat.regex.push(b'(');
            insert_idx += 1;
            b.pat.num_defs.insert(name.clone(), (var, b.cur_paren));
            self.ctx.num_table_insert(&name, var);
            b.cur_paren += 1;
        }
        if !subst_needed {
            let wildcard = expr.format.wildcard_regex();
            let span = Span::new(wildcard.as_bytes(), 0, 0, wildcard.len());
            add_regex(b, span, ParseMode::Llvm)?;
        }
        if defined.is_some() {
            b.pat.regex.push(b')');
        }
        if subst_needed {
            b.pat.substs.push(Substitution {
                from: block.string(),
                from_loc: block.loc(),
                insert_idx,
                kind: SubstKind::Num(expr),
            });
        }
        Ok(())
    }
}

/// LLVM's `AddRegExToRegEx`: validates a regex piece and appends it.
fn add_regex(b: &mut Builder, rs: Span<'_>, mode: ParseMode) -> PResult<()> {
    match regex_posix::parse(rs.bytes(), false, mode) {
        Ok(ere) => {
            b.pat.regex.extend_from_slice(rs.bytes());
            b.cur_paren += ere.ngroups;
            Ok(())
        }
        Err(e) => Err(ErrorDiag::new(rs.loc(), format!("invalid regex: {e}"))),
    }
}

/// LLVM's `FindRegexVarEnd`: offset of the `]]` closing a substitution block, skipping nested
/// brackets and escapes. A stray `]` is fatal (LLVM exits with status 1).
fn find_regex_var_end(s: Span<'_>) -> PResult<Option<usize>> {
    let b = s.bytes();
    let (mut i, mut depth) = (0usize, 0usize);
    while i < b.len() {
        if b[i..].starts_with(b"]]") && depth == 0 {
            return Ok(Some(i));
        }
        match b[i] {
            b'\\' => {
                i += 2;
                continue;
            }
            b'[' => depth += 1,
            b']' if depth == 0 => {
                let mut e = ErrorDiag::new(s.loc_at(i), "missing closing \"]\" for regex variable");
                e.exit_code = 1;
                return Err(e);
            }
            b']' => depth -= 1,
            _ => {}
        }
        i += 1;
    }
    Ok(None)
}

impl Pattern {
    /// LLVM's `Pattern::match`: searches `input[range]`; on success records variable
    /// definitions in `ctx`. Offsets in the result are relative to `range.0`.
    pub fn matches(&self, input: &[u8], range: (usize, usize), ctx: &mut Context) -> Result<Match, MatchError> {
        let hay = &input[range.0..range.1];
        if self.ty.kind == CheckKind::Eof {
            return Ok(Match { pos: hay.len(), len: 0 });
        }
        if !self.fixed.is_empty() {
            return self.match_fixed(hay);
        }
        let re = self.compiled_regex(ctx)?;
        let caps = re
            .find(hay)
            .map_err(|e| MatchError::Errors(vec![ErrorDiag::new(self.loc, e)]))?
            .ok_or(MatchError::NotFound)?;
        Ok(self.record_captures(&caps, input, range.0, ctx))
    }

    fn match_fixed(&self, hay: &[u8]) -> Result<Match, MatchError> {
        let re = self.cache.fixed.get_or_init(|| fixed_regex(&self.fixed, self.ignore_case));
        let pos = match re {
            Some(re) => re.find(hay).map(|m| m.start()),
            None => hay.windows(self.fixed.len()).position(|w| w == self.fixed),
        };
        pos.map(|pos| Match { pos, len: self.fixed.len() }).ok_or(MatchError::NotFound)
    }

    /// Substitutes variable values into the regex and compiles it (cached by text).
    fn compiled_regex(&self, ctx: &mut Context) -> Result<Rc<PosixRegex>, MatchError> {
        let text = self.substituted_regex(ctx)?;
        let mut last = self.cache.last.borrow_mut();
        if let Some((t, re)) = last.as_ref() {
            if *t == text {
                return Ok(re.clone());
            }
        }
        // A regex that substitution made invalid (an empty value where a subexpression was) does not match, as
        // in LLVM; one that substitution made too large is an error.
        let re = PosixRegex::new(&text, self.ignore_case).map_err(|e| match e.starts_with(regex_posix::TOO_LARGE) {
            true => MatchError::Errors(vec![ErrorDiag::new(self.loc, format!("after substitution: {e}"))]),
            false => MatchError::NotFound,
        })?;
        let re = Rc::new(re);
        *last = Some((text, re.clone()));
        Ok(re)
    }

    fn substituted_regex(&self, ctx: &mut Context) -> Result<Vec<u8>, MatchError> {
        if self.substs.is_empty() {
            return Ok(self.regex.clone());
        }
        if let Some(line) = self.line {
            ctx.set_line(line);
        }
        let mut text = Vec::with_capacity(self.regex.len());
        let mut copied = 0;
        let mut errors = Vec::new();
        for s in &self.substs {
            match s.result_regex(ctx) {
                Ok(v) => {
                    text.extend_from_slice(&self.regex[copied..s.insert_idx]);
                    text.extend_from_slice(&v);
                    copied = s.insert_idx;
                }
                Err(e) => errors.extend(s.errors(e)),
            }
            if text.len() > MAX_SUBSTITUTED_BYTES {
                let msg = format!("the pattern is longer than {MAX_SUBSTITUTED_BYTES} bytes after substitution");
                return Err(MatchError::Errors(vec![ErrorDiag::new(self.loc, msg)]));
            }
        }
        text.extend_from_slice(&self.regex[copied..]);
        if errors.is_empty() {
            Ok(text)
        } else {
            Err(MatchError::Errors(errors))
        }
    }

    fn record_captures(&self, caps: &Captures, input: &[u8], base: usize, ctx: &mut Context) -> Match {
        let abs = |c: Option<(usize, usize)>| c.map(|(a, b)| (base + a, base + b));
        for (name, &paren) in &self.var_defs {
            let range = abs(caps.get(paren).copied().flatten());
            let value = range.map_or(Vec::new(), |(a, b)| input[a..b].to_vec());
            ctx.set_string_var(name, StrVar { value, range });
        }
        for (name, &(var, paren)) in &self.num_defs {
            let Some((a, b)) = abs(caps.get(paren).copied().flatten()) else {
                continue;
            };
            let format = ctx.num_var(var).format;
            ctx.num_table_ensure(name, var);
            if let Some(v) = format.value_from_str(&input[a..b]) {
                ctx.set_num_value(var, v, Some((a, b)));
            }
        }
        let (start, end) = caps[0].unwrap_or((0, 0));
        let skip = usize::from(self.ty.kind == CheckKind::Empty);
        Match { pos: start + skip, len: end - start - skip }
    }
}

/// A literal-matching regex for a fixed string (uses the `regex` crate's substring search).
fn fixed_regex(fixed: &[u8], icase: bool) -> Option<regex::bytes::Regex> {
    let mut pat = String::from(if icase { "(?i-u)" } else { "(?-u)" });
    for &b in fixed {
        if b.is_ascii_alphanumeric() {
            pat.push(b as char);
        } else {
            pat.push_str(&format!("\\x{b:02X}"));
        }
    }
    regex::bytes::Regex::new(&pat).ok()
}

impl Substitution {
    /// The regex text to splice in: the escaped string value or the formatted number.
    fn result_regex(&self, ctx: &Context) -> Result<Vec<u8>, EvalError> {
        match &self.kind {
            SubstKind::Str(name) => {
                let v =
                    ctx.string_var(name).ok_or_else(|| EvalError::Undefined(vec![(name.clone(), self.from_loc)]))?;
                let mut out = Vec::new();
                regex_posix::escape(&v.value, &mut out);
                Ok(out)
            }
            SubstKind::Num(expr) => {
                let ast = expr.ast.as_ref().expect("substitution without expression");
                let v = ast.eval(ctx)?;
                Ok(expr.format.matching_string(v)?.into_bytes())
            }
        }
    }

    fn errors(&self, e: EvalError) -> Vec<ErrorDiag> {
        match e {
            EvalError::Overflow => vec![ErrorDiag::new(
                self.from_loc,
                "unable to substitute variable or numeric expression: overflow error",
            )],
            EvalError::Undefined(vars) => {
                vars.into_iter().map(|(name, loc)| ErrorDiag::new(loc, format!("undefined variable: {name}"))).collect()
            }
        }
    }

    /// The value as shown in "with X equal to ..." notes (LLVM 19 shows the text spliced into
    /// the regex, i.e. regex-escaped string values), if it can be computed.
    pub fn value_for_diagnostics(&self, ctx: &Context) -> Option<String> {
        let v = self.result_regex(ctx).ok()?;
        Some(format!("\"{}\"", write_escaped(&v)))
    }
}

/// LLVM's `raw_ostream::write_escaped`.
pub(crate) fn write_escaped(v: &[u8]) -> String {
    let mut out = String::new();
    for &c in v {
        match c {
            b'\\' => out.push_str("\\\\"),
            b'\t' => out.push_str("\\t"),
            b'\n' => out.push_str("\\n"),
            b'"' => out.push_str("\\\""),
            0x20..=0x7e => out.push(c as char),
            _ => out.push_str(&format!("\\{c:03o}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compile(text: &str, opts: PatternOptions, ctx: &mut Context) -> PResult<Pattern> {
        let span = Span::new(text.as_bytes(), 0, 0, text.len());
        let mut p = PatternParser { ctx, opts };
        p.parse(span, "CHECK", CheckType::of(CheckKind::Plain), Some(1))
    }

    fn find(text: &str, input: &str, opts: PatternOptions, ctx: &mut Context) -> Option<(usize, usize)> {
        let p = compile(text, opts, ctx).unwrap();
        let m = p.matches(input.as_bytes(), (0, input.len()), ctx).ok()?;
        Some((m.pos, m.len))
    }

    #[test]
    fn literal_and_regex_pieces() {
        let mut ctx = Context::default();
        let o = PatternOptions::default();
        let p = compile("a.b {{[0-9]+}} c", o, &mut ctx).unwrap();
        assert_eq!(p.regex, b"a\\.b [0-9]+ c");
        assert_eq!(find("a.b {{[0-9]+}} c", "xx a.b 42 c", o, &mut ctx), Some((3, 8)));
        assert_eq!(find("foo", "a foo", o, &mut ctx), Some((2, 3)));
    }

    #[test]
    fn alternation_is_wrapped_and_longest() {
        let mut ctx = Context::default();
        let o = PatternOptions::default();
        let p = compile("x{{a|ab}}", o, &mut ctx).unwrap();
        assert_eq!(p.regex, b"x(a|ab)");
        assert_eq!(find("[[X:a|ab]]", "ab", o, &mut ctx), Some((0, 2)));
        assert_eq!(ctx.string_var("X").unwrap().value, b"ab");
    }

    #[test]
    fn same_line_use_is_a_backreference() {
        let mut ctx = Context::default();
        let o = PatternOptions::default();
        let p = compile("[[X:[a-z]+]] [[X]]", o, &mut ctx).unwrap();
        assert_eq!(p.regex, b"([a-z]+) \\1");
        assert_eq!(find("[[Y:[a-z]+]] [[Y]]", "ab cd cd", o, &mut ctx), Some((3, 5)));
    }

    #[test]
    fn match_full_lines_anchors() {
        let mut ctx = Context::default();
        let o = PatternOptions { match_full_lines: true, ..Default::default() };
        assert_eq!(find("foo", "xfoo\n foo \n", o, &mut ctx), Some((5, 5)));
    }

    #[test]
    fn errors() {
        let mut ctx = Context::default();
        let o = PatternOptions::default();
        assert!(compile("{{\\d}}", o, &mut ctx).unwrap_err().msg.contains("POSIX"));
        assert!(compile("{{a", o, &mut ctx).unwrap_err().msg.contains("no end"));
        assert!(compile("[[X", o, &mut ctx).unwrap_err().msg.contains("no ]]"));
        assert_eq!(compile("[[X:a]b]]", o, &mut ctx).unwrap_err().exit_code, 1);
        assert!(compile("", o, &mut ctx).unwrap_err().msg.contains("empty check string"));
    }

    #[test]
    fn undefined_variable_is_a_match_error() {
        let mut ctx = Context::default();
        let p = compile("[[UNDEF]]", PatternOptions::default(), &mut ctx).unwrap();
        match p.matches(b"x", (0, 1), &mut ctx) {
            Err(MatchError::Errors(e)) => assert_eq!(e[0].msg, "undefined variable: UNDEF"),
            other => panic!("{other:?}"),
        }
    }
}
