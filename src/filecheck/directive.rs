//! Reading the check file (LLVM's `FileCheck::readCheckFile`): finding directives
//! (`<PREFIX>[-KIND][{LITERAL}]:` not preceded by a word character, comment prefixes,
//! `CHECK-COUNT-n`, misspellings), compiling their patterns, grouping CHECK-DAG/CHECK-NOT with the
//! next positive directive, `--implicit-check-not` patterns, and the used-prefix checks.

use std::collections::BTreeSet;

use super::pattern::{CheckKind, CheckType, Pattern, PatternOptions, PatternParser};
use super::source::{BufId, ErrorDiag, Loc, SourceMgr, Span};
use super::vars::Context;

/// A CHECK-DAG or CHECK-NOT directive waiting for the next positive directive.
#[derive(Clone, Debug)]
pub(crate) struct DagNot {
    /// The pattern.
    pub pat: Pattern,
    /// The prefix it was written with.
    pub prefix: String,
}

/// A positive directive with the DAG/NOT directives that precede it.
#[derive(Debug)]
pub(crate) struct CheckString {
    /// The pattern.
    pub pat: Pattern,
    /// The prefix it was written with.
    pub prefix: String,
    /// Where errors about it point.
    pub loc: Loc,
    /// Preceding CHECK-DAG/CHECK-NOT directives, implicit ones first.
    pub dag_not: Vec<DagNot>,
}

/// What the check-file reader needs to know.
pub(crate) struct ReadOptions<'a> {
    /// Active check prefixes (defaults applied).
    pub check_prefixes: &'a [String],
    /// Comment prefixes (defaults applied).
    pub comment_prefixes: &'a [String],
    /// Whether the check prefixes are the default `CHECK`.
    pub default_prefix: bool,
    /// `--implicit-check-not` patterns.
    pub implicit_check_not: &'a [String],
    /// `--allow-unused-prefixes`
    pub allow_unused_prefixes: bool,
    /// Pattern compilation options.
    pub pattern: PatternOptions,
}

/// The parsed check file.
pub(crate) struct CheckFile {
    /// The directives in order.
    pub checks: Vec<CheckString>,
    /// The buffers holding the implicit patterns (for input-dump labels).
    pub implicit_bufs: Vec<BufId>,
}

/// The recognised form of a prefix occurrence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Found {
    None,
    Comment,
    Check(CheckType),
    Misspelled,
    BadNot,
    BadCount,
}

fn is_part_of_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'-' || c == b'_'
}

/// LLVM's `FindCheckType` for `prefix` found at `pos`. Returns the kind and the offset after
/// the directive's colon (or where an error should point).
fn find_check_type(text: &[u8], pos: usize, prefix: &str, is_comment: bool) -> (Found, Option<usize>) {
    if text.len() - pos <= prefix.len() {
        return (Found::None, None);
    }
    let mut r = pos + prefix.len();
    let rest = |r: usize| &text[r..];
    if is_comment {
        return match rest(r).first() {
            Some(b':') => (Found::Comment, Some(r + 1)),
            _ => (Found::None, None),
        };
    }
    if rest(r).starts_with(b":") {
        return (Found::Check(CheckType::of(CheckKind::Plain)), Some(r + 1));
    }
    if rest(r).starts_with(b"{") {
        return consume_modifiers(text, r, CheckType::of(CheckKind::Plain));
    }
    let misspelled = rest(r).starts_with(b"_");
    if !misspelled && !rest(r).starts_with(b"-") {
        return (Found::None, None);
    }
    r += 1;
    let (found, after) = find_suffix(text, r);
    match found {
        Found::Check(_) if misspelled => (Found::Misspelled, after),
        f => (f, after),
    }
}

/// The part of `FindCheckType` after `PREFIX-` (or the misspelled `PREFIX_`).
fn find_suffix(text: &[u8], mut r: usize) -> (Found, Option<usize>) {
    let rest = &text[r..];
    if rest.starts_with(b"COUNT-") {
        r += 6;
        let digits = text[r..].iter().take_while(|b| b.is_ascii_digit()).count();
        let count: Option<u64> = std::str::from_utf8(&text[r..r + digits]).ok().and_then(|s| s.parse().ok());
        r += digits;
        let ok_count = count.filter(|&c| c > 0 && c <= i32::MAX as u64);
        let next = text.get(r).copied();
        return match ok_count {
            Some(c) if matches!(next, Some(b':' | b'{')) => {
                let ty = CheckType { count: c as usize, ..CheckType::of(CheckKind::Plain) };
                consume_modifiers(text, r, ty)
            }
            _ => (Found::BadCount, Some(r)),
        };
    }
    const BAD_NOT: [&[u8]; 8] = [
        b"DAG-NOT:",
        b"NOT-DAG:",
        b"NEXT-NOT:",
        b"NOT-NEXT:",
        b"SAME-NOT:",
        b"NOT-SAME:",
        b"EMPTY-NOT:",
        b"NOT-EMPTY:",
    ];
    if BAD_NOT.iter().any(|p| rest.starts_with(p)) {
        return (Found::BadNot, Some(r));
    }
    const KINDS: [(&[u8], CheckKind); 6] = [
        (b"NEXT", CheckKind::Next),
        (b"SAME", CheckKind::Same),
        (b"NOT", CheckKind::Not),
        (b"DAG", CheckKind::Dag),
        (b"LABEL", CheckKind::Label),
        (b"EMPTY", CheckKind::Empty),
    ];
    for (word, kind) in KINDS {
        if rest.starts_with(word) {
            return consume_modifiers(text, r + word.len(), CheckType::of(kind));
        }
    }
    (Found::None, Some(r))
}

/// Parses `:` or `{LITERAL[, ...]}:` at `r`.
fn consume_modifiers(text: &[u8], mut r: usize, mut ty: CheckType) -> (Found, Option<usize>) {
    if text[r..].starts_with(b":") {
        return (Found::Check(ty), Some(r + 1));
    }
    if !text[r..].starts_with(b"{") {
        return (Found::None, None);
    }
    r += 1;
    let skip_ws = |mut r: usize| {
        while r < text.len() && text[r].is_ascii_whitespace() {
            r += 1;
        }
        r
    };
    loop {
        r = skip_ws(r);
        if !text[r..].starts_with(b"LITERAL") {
            return (Found::None, Some(r));
        }
        ty.literal = true;
        r = skip_ws(r + 7);
        if !text[r..].starts_with(b",") {
            break;
        }
        r += 1;
    }
    if !text[r..].starts_with(b"}:") {
        return (Found::None, Some(r));
    }
    (Found::Check(ty), Some(r + 2))
}

/// LLVM's `PrefixMatcher`: finds the earliest occurrence of any prefix, preferring longer ones.
struct PrefixMatcher<'t, 'p> {
    text: &'t [u8],
    prefixes: Vec<(&'p str, Option<usize>)>,
}

impl<'t, 'p> PrefixMatcher<'t, 'p> {
    fn new(text: &'t [u8], prefixes: Vec<&'p str>) -> Self {
        let mut prefixes: Vec<(&str, Option<usize>)> = prefixes.into_iter().map(|p| (p, Some(0))).collect();
        prefixes.sort_by_key(|p| std::cmp::Reverse(p.0.len()));
        let mut m = PrefixMatcher { text, prefixes };
        for i in 0..m.prefixes.len() {
            m.prefixes[i].1 = find(text, m.prefixes[i].0.as_bytes(), 0);
        }
        m
    }

    fn next(&mut self, from: usize) -> Option<(&'p str, usize)> {
        let mut best: Option<(&str, usize)> = None;
        for (p, pos) in &mut self.prefixes {
            if pos.is_some_and(|x| x < from) {
                *pos = find(self.text, p.as_bytes(), from);
            }
            if let Some(x) = *pos {
                if best.is_none_or(|(_, b)| x < b) {
                    best = Some((*p, x));
                }
            }
        }
        best
    }
}

fn find(text: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    if needle.is_empty() || from >= text.len() {
        return None;
    }
    text[from..].windows(needle.len()).position(|w| w == needle).map(|p| p + from)
}

/// Reads the check file in buffer `buf`. Errors are printed to `out`; `Err` carries the exit
/// code (2, or 1 for the few errors where LLVM exits with 1).
pub(crate) fn read_check_file(
    sm: &mut SourceMgr,
    buf: BufId,
    opts: &ReadOptions<'_>,
    ctx: &mut Context,
    out: &mut String,
) -> Result<CheckFile, i32> {
    let (implicit, implicit_bufs) = implicit_patterns(sm, opts, ctx, out);
    let mut reader = Reader {
        sm,
        buf,
        opts,
        ctx,
        out,
        checks: Vec::new(),
        dag_not: implicit.clone(),
        implicit,
        not_found: opts.check_prefixes.iter().map(String::as_str).collect(),
    };
    let end = reader.read_directives()?;
    reader.check_prefixes_used()?;
    reader.add_eof_check(end);
    Ok(CheckFile { checks: reader.checks, implicit_bufs })
}

/// Compiles the `--implicit-check-not` patterns, each in its own "command line" buffer.
fn implicit_patterns(
    sm: &mut SourceMgr,
    opts: &ReadOptions<'_>,
    ctx: &mut Context,
    out: &mut String,
) -> (Vec<DagNot>, Vec<BufId>) {
    let mut pats = Vec::new();
    let mut bufs = Vec::new();
    for p in opts.implicit_check_not {
        let prefix = "-implicit-check-not='";
        let text = format!("{prefix}{p}'");
        let id = sm.add("command line", text.into_bytes());
        bufs.push(id);
        let span = Span::new(sm.text(id), id, prefix.len(), prefix.len() + p.len());
        let mut parser = PatternParser { ctx, opts: opts.pattern };
        match parser.parse(span, "IMPLICIT-CHECK", CheckType::of(CheckKind::Not), None) {
            Ok(pat) => pats.push(DagNot { pat, prefix: "IMPLICIT-CHECK".into() }),
            Err(e) => e.print(sm, out),
        }
    }
    (pats, bufs)
}

struct Reader<'a, 'o> {
    sm: &'a mut SourceMgr,
    buf: BufId,
    opts: &'a ReadOptions<'o>,
    ctx: &'a mut Context,
    out: &'a mut String,
    checks: Vec<CheckString>,
    dag_not: Vec<DagNot>,
    implicit: Vec<DagNot>,
    not_found: BTreeSet<&'o str>,
}

/// A directive occurrence found in the check file.
struct Directive<'o> {
    prefix: &'o str,
    start: usize,
    found: Found,
    after: Option<usize>,
}

impl<'o> Reader<'_, 'o> {
    fn fail(&mut self, e: ErrorDiag) -> i32 {
        e.print(self.sm, self.out);
        e.exit_code
    }

    fn loc(&self, off: usize) -> Loc {
        Loc { buf: self.buf, off }
    }

    /// LLVM's `FindFirstMatchingPrefix`.
    fn next_directive(
        &self,
        text: &[u8],
        matcher: &mut PrefixMatcher<'_, 'o>,
        cur: &mut usize,
    ) -> Option<Directive<'o>> {
        while *cur < text.len() {
            let (prefix, pos) = matcher.next(*cur)?;
            let preceded_by_word = pos > *cur && is_part_of_word(text[pos - 1]);
            *cur = pos;
            if !preceded_by_word {
                let is_comment = self.opts.comment_prefixes.iter().any(|c| c == prefix);
                let (found, after) = find_check_type(text, pos, prefix, is_comment);
                if found != Found::None {
                    return Some(Directive { prefix, start: pos, found, after });
                }
            }
            let mut p = pos + prefix.len();
            while p < text.len() && is_part_of_word(text[p]) {
                p += 1;
            }
            *cur = p;
        }
        None
    }

    /// Reads all directives; returns the offset where scanning stopped.
    fn read_directives(&mut self) -> Result<usize, i32> {
        let text = self.sm.text(self.buf).to_vec();
        let text_len = text.len();
        let opts = self.opts;
        let all: Vec<&'o str> = opts.check_prefixes.iter().chain(opts.comment_prefixes).map(String::as_str).collect();
        let mut matcher = PrefixMatcher::new(&text, all);
        let mut cur = 0;
        while let Some(d) = self.next_directive(&text, &mut matcher, &mut cur) {
            if d.found != Found::Comment {
                self.not_found.remove(d.prefix);
            }
            let after = d.after.filter(|&a| a < text_len);
            cur = after.unwrap_or(d.start + d.prefix.len());
            self.reject_bad_directive(&d, cur)?;
            let (pattern, eol) = self.pattern_span(cur);
            cur = eol;
            if let Found::Check(ty) = d.found {
                self.add_directive(&d, ty, pattern)?;
            }
        }
        Ok(cur)
    }

    fn reject_bad_directive(&mut self, d: &Directive<'_>, cur: usize) -> Result<(), i32> {
        let msg = match d.found {
            Found::Misspelled => {
                let end = d.after.unwrap_or(cur);
                let text = String::from_utf8_lossy(&self.sm.text(self.buf)[d.start..end]).into_owned();
                let e = ErrorDiag::new(self.loc(d.start), format!("misspelled directive '{text}'"));
                return Err(self.fail(e));
            }
            Found::BadNot => format!("unsupported -NOT combo on prefix '{}'", d.prefix),
            Found::BadCount => format!("invalid count in -COUNT specification on prefix '{}'", d.prefix),
            _ => return Ok(()),
        };
        Err(self.fail(ErrorDiag::new(self.loc(cur), msg)))
    }

    /// The pattern text starting at `cur` (leading blanks skipped) up to the end of the line.
    fn pattern_span(&self, mut cur: usize) -> ((usize, usize), usize) {
        let text = self.sm.text(self.buf);
        let p = &self.opts.pattern;
        if !(p.strict_whitespace && p.match_full_lines) {
            while cur < text.len() && (text[cur] == b' ' || text[cur] == b'\t') {
                cur += 1;
            }
        }
        let eol = text[cur..].iter().position(|&b| b == b'\n' || b == b'\r').map_or(text.len(), |e| cur + e);
        ((cur, eol), eol)
    }

    fn add_directive(&mut self, d: &Directive<'_>, ty: CheckType, pattern: (usize, usize)) -> Result<(), i32> {
        let line = self.sm.line_col(self.loc(d.start)).0;
        let span = Span::new(self.sm.text(self.buf), self.buf, pattern.0, pattern.1);
        let mut parser = PatternParser { ctx: self.ctx, opts: self.opts.pattern };
        let pat = match parser.parse(span, d.prefix, ty, Some(line)) {
            Ok(p) => p,
            Err(e) => return Err(self.fail(e)),
        };
        let start = self.loc(d.start);
        if ty.kind == CheckKind::Label && pat.has_variable() {
            let msg = format!("found '{}-LABEL:' with variable definition or use", d.prefix);
            return Err(self.fail(ErrorDiag::new(start, msg)));
        }
        let needs_previous = match ty.kind {
            CheckKind::Next => Some("NEXT"),
            CheckKind::Same => Some("SAME"),
            CheckKind::Empty => Some("EMPTY"),
            _ => None,
        };
        if let (Some(kind), true) = (needs_previous, self.checks.is_empty()) {
            let msg = format!("found '{0}-{kind}' without previous '{0}: line", d.prefix);
            return Err(self.fail(ErrorDiag::new(start, msg)));
        }
        let prefix = d.prefix.to_string();
        if matches!(ty.kind, CheckKind::Dag | CheckKind::Not) {
            self.dag_not.push(DagNot { pat, prefix });
            return Ok(());
        }
        let dag_not = std::mem::replace(&mut self.dag_not, self.implicit.clone());
        self.checks.push(CheckString { loc: pat.loc, pat, prefix, dag_not });
        Ok(())
    }

    /// Every check prefix must be used (unless `--allow-unused-prefixes`); with the default
    /// prefix, `--implicit-check-not` alone is enough.
    fn check_prefixes_used(&mut self) -> Result<(), i32> {
        let distinct: BTreeSet<&str> = self.opts.check_prefixes.iter().map(String::as_str).collect();
        let none_found = self.not_found.len() == distinct.len();
        let unused = !self.opts.allow_unused_prefixes && !self.not_found.is_empty();
        let implicit_ok = !self.opts.implicit_check_not.is_empty() && self.opts.default_prefix;
        if !(none_found || unused) || implicit_ok {
            return Ok(());
        }
        let list: Vec<String> = self.not_found.iter().map(|p| format!("'{p}:'")).collect();
        let plural = if self.not_found.len() > 1 { "es" } else { "" };
        self.out.push_str(&format!("error: no check strings found with prefix{plural} {}\n", list.join(", ")));
        Err(2)
    }

    /// Trailing DAG/NOT directives (and implicit NOTs) are checked up to the end of input.
    fn add_eof_check(&mut self, end: usize) {
        if self.dag_not.is_empty() {
            return;
        }
        let text = self.sm.text(self.buf);
        let line = text.iter().filter(|&&b| b == b'\n').count() + 2;
        let loc = self.loc(end.min(text.len()));
        let pat = Pattern::empty(CheckType::of(CheckKind::Eof), loc, Some(line));
        let prefix = self.opts.check_prefixes.first().cloned().unwrap_or_default();
        let dag_not = std::mem::take(&mut self.dag_not);
        self.checks.push(CheckString { pat, prefix, loc, dag_not });
    }
}
