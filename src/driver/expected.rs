//! `--verify-diagnostics`: reads `// expected-error@+1 {{...}}` annotations and checks the emitted diagnostics
//! against them, producing MLIR's "unexpected error" / "was not produced" reports.

use super::options::VerifyMode;
use crate::ir::{Context, Diagnostic, FileId, Loc, LocData, Severity};
use regex::Regex;
use std::collections::HashMap;
use std::ops::Range;
use std::sync::OnceLock;

/// What the message must look like.
#[derive(Debug)]
enum Pattern {
    Substring(String),
    Regex(Regex, String),
}

/// One `expected-*` annotation.
#[derive(Debug)]
pub struct Expectation {
    severity: Severity,
    /// The 1-based line the diagnostic must be on; `None` for `@unknown`.
    line: Option<u32>,
    pattern: Pattern,
    offset: usize,
    matched: bool,
}

fn annotation_regex() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"expected-(error|note|remark|warning)(-re)? *(@([+-][0-9]+|above|below|unknown))? *\{\{(.*)\}\}")
            .unwrap()
    })
}

/// Reads the annotations in the chunk `range` of `text`; malformed ones are reported as diagnostics.
pub fn collect(text: &str, range: Range<usize>, file: FileId) -> (Vec<Expectation>, Vec<Diagnostic>) {
    let mut out = Vec::new();
    let mut errors = Vec::new();
    let chunk = &text[range.clone()];
    let first_line = text[..range.start].matches('\n').count() as u32 + 1;
    let lines: Vec<(usize, &str)> = line_offsets(chunk);
    let (above, below) = code_lines(&lines);
    for (i, &(off, line)) in lines.iter().enumerate() {
        for caps in annotation_regex().captures_iter(line) {
            let offset = range.start + off + caps.get(0).unwrap().start();
            let severity = match &caps[1] {
                "error" => Severity::Error,
                "warning" => Severity::Warning,
                "note" => Severity::Note,
                _ => Severity::Remark,
            };
            let this_line = first_line + i as u32;
            let line_no = match caps.get(4).map(|m| m.as_str()) {
                None => Some(this_line),
                Some("unknown") => None,
                Some("above") => above[i].map(|j| first_line + j as u32),
                Some("below") => below[i].map(|j| first_line + j as u32),
                Some(rel) => rel.parse::<i64>().ok().map(|d| (this_line as i64 + d) as u32),
            };
            let message = caps[5].to_string();
            let pattern = if caps.get(2).is_some() {
                match build_regex(&message) {
                    Ok(re) => Pattern::Regex(re, message),
                    Err(e) => {
                        errors.push(Diagnostic::error(Loc::Source { file, offset: offset as u32 }, e));
                        continue;
                    }
                }
            } else {
                Pattern::Substring(message)
            };
            out.push(Expectation { severity, line: line_no, pattern, offset, matched: false });
        }
    }
    (out, errors)
}

/// For each line, the nearest line above and the nearest line below it that carries no annotation (what `@above`
/// and `@below` refer to), in two passes.
fn code_lines(lines: &[(usize, &str)]) -> (Vec<Option<usize>>, Vec<Option<usize>>) {
    let code: Vec<bool> = lines.iter().map(|l| !annotation_regex().is_match(l.1)).collect();
    let mut above = vec![None; lines.len()];
    for j in 1..lines.len() {
        above[j] = if code[j - 1] { Some(j - 1) } else { above[j - 1] };
    }
    let mut below = vec![None; lines.len()];
    for j in (0..lines.len().saturating_sub(1)).rev() {
        below[j] = if code[j + 1] { Some(j + 1) } else { below[j + 1] };
    }
    (above, below)
}

fn line_offsets(chunk: &str) -> Vec<(usize, &str)> {
    let mut off = 0;
    chunk
        .split_inclusive('\n')
        .map(|l| {
            let r = (off, l);
            off += l.len();
            r
        })
        .collect()
}

/// `-re` messages: literal text outside `{{...}}`, regexes inside.
fn build_regex(message: &str) -> Result<Regex, String> {
    let mut pattern = String::new();
    let mut rest = message;
    while let Some(start) = rest.find("{{") {
        pattern.push_str(&regex::escape(&rest[..start]));
        let end = rest[start + 2..].find("}}").ok_or("found start of regex with no end '}}'")? + start + 2;
        pattern.push_str(&format!("(?:{})", &rest[start + 2..end]));
        rest = &rest[end + 2..];
    }
    pattern.push_str(&regex::escape(rest));
    Regex::new(&pattern).map_err(|e| format!("invalid regex: {e}"))
}

fn diag_line(ctx: &Context, loc: Loc, file: FileId) -> Option<u32> {
    match loc {
        Loc::Source { file: f, offset } if f == file => Some(ctx.sources.file(f).line_col(offset).line),
        Loc::Id(id) => match &ctx.locs[id] {
            LocData::FileLineCol { file: name, line, .. } if ctx.str(*name) == ctx.sources.file(file).name => {
                Some(*line)
            }
            LocData::Name { child: Some(c), .. } => diag_line(ctx, *c, file),
            LocData::CallSite { callee, .. } => diag_line(ctx, *callee, file),
            LocData::Fused { locs, .. } => locs.iter().find_map(|l| diag_line(ctx, *l, file)),
            _ => None,
        },
        _ => None,
    }
}

/// Matches `diags` (with their notes) against `expected`; returns the failures to report.
pub fn check(
    ctx: &Context,
    file: FileId,
    expected: &mut [Expectation],
    diags: &[Diagnostic],
    mode: VerifyMode,
) -> Vec<Diagnostic> {
    let mut failures = Vec::new();
    // The expectations by severity and line, in order, with how many at the front are already matched: a
    // diagnostic looks only at its own line's, so that many of them cost time linear in their number.
    let mut by_line: HashMap<(Severity, Option<u32>), (usize, Vec<usize>)> = HashMap::new();
    for (i, e) in expected.iter().enumerate() {
        by_line.entry((e.severity, e.line)).or_default().1.push(i);
    }
    let flat = diags.iter().flat_map(|d| std::iter::once(d).chain(d.notes.iter()));
    for d in flat {
        let line = diag_line(ctx, d.loc, file);
        let found = by_line.get_mut(&(d.severity, line)).and_then(|(done, list)| {
            while list.get(*done).is_some_and(|&i| expected[i].matched) {
                *done += 1;
            }
            list[*done..].iter().copied().find(|&i| {
                !expected[i].matched
                    && match &expected[i].pattern {
                        Pattern::Substring(s) => d.message.contains(s.as_str()),
                        Pattern::Regex(re, _) => re.is_match(&d.message),
                    }
            })
        });
        match found {
            Some(i) => expected[i].matched = true,
            None if mode == VerifyMode::All => {
                let msg = format!("unexpected {}: {}", d.severity, d.message);
                failures.push(Diagnostic::error(d.loc, msg));
            }
            None => {}
        }
    }
    for e in expected.iter().filter(|e| !e.matched) {
        let text = match &e.pattern {
            Pattern::Substring(s) => s.clone(),
            Pattern::Regex(_, s) => s.clone(),
        };
        let msg = format!("expected {} \"{text}\" was not produced", e.severity);
        failures.push(Diagnostic::error(Loc::Source { file, offset: e.offset as u32 }, msg));
    }
    failures
}
