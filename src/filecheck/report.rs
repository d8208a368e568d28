//! Reporting: LLVM's `printMatch`/`printNoMatch` diagnostics (with "scanning from here",
//! "with X equal to ...", "possible intended match here" notes), the list of match results
//! recorded for the input dump, and the annotated `--dump-input` rendering itself.

use std::fmt::Write as _;

/// The most "with X equal to ..." notes one failed pattern gets (LLVM writes one per substitution, so a line of
/// 100k uses of a long variable would write gigabytes).
pub const MAX_SUBSTITUTION_NOTES: usize = 256;

use super::options::DumpInputFilter;
use super::pattern::{CheckKind, CheckType, Match, MatchError, Pattern};
use super::source::{BufId, LineIndex, Loc, Severity, SourceMgr};
use super::vars::Context;

/// Outcome of one match attempt, as shown in the input dump.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MatchType {
    FoundAndExpected,
    FoundButExcluded,
    FoundButWrongLine,
    FoundButDiscarded,
    NoneAndExcluded,
    NoneButExpected,
    NoneForInvalidPattern,
    Fuzzy,
}

/// One recorded match result or note (LLVM's `FileCheckDiag`).
#[derive(Clone, Debug)]
pub(crate) struct FcDiag {
    check_ty: CheckType,
    check_loc: Loc,
    match_ty: MatchType,
    range: (usize, usize),
    note: Option<String>,
}

/// The directive a diagnostic is about.
#[derive(Clone, Copy)]
pub(crate) struct Who<'a> {
    /// The prefix it was written with (`IMPLICIT-CHECK` for `--implicit-check-not`).
    pub prefix: &'a str,
    /// Where errors about it point.
    pub loc: Loc,
    /// Its pattern.
    pub pat: &'a Pattern,
}

/// Collects stderr text and dump annotations while checking.
pub(crate) struct Reporter<'a> {
    sm: &'a SourceMgr,
    input: BufId,
    /// Text written to stderr so far.
    pub out: String,
    diags: Option<Vec<FcDiag>>,
    verbose: bool,
    vv: bool,
}

impl<'a> Reporter<'a> {
    /// A reporter for input buffer `input`; `record` enables collecting dump annotations.
    pub fn new(sm: &'a SourceMgr, input: BufId, record: bool, verbose: bool, vv: bool) -> Self {
        Reporter { sm, input, out: String::new(), diags: record.then(Vec::new), verbose: verbose || vv, vv }
    }

    /// Whether `-vv` is on.
    pub fn very_verbose(&self) -> bool {
        self.vv
    }

    fn input_loc(&self, off: usize) -> Loc {
        Loc { buf: self.input, off }
    }

    /// Prints an error at `loc`.
    pub fn error(&mut self, loc: Loc, msg: &str) {
        self.sm.print(&mut self.out, loc, Severity::Error, msg, &[]);
    }

    /// Prints a note at input offset `off`.
    pub fn note(&mut self, off: usize, msg: &str) {
        let loc = self.input_loc(off);
        self.sm.print(&mut self.out, loc, Severity::Note, msg, &[]);
    }

    fn push_diag(&mut self, who: &Who<'_>, match_ty: MatchType, range: (usize, usize), note: Option<String>) {
        if let Some(d) = &mut self.diags {
            d.push(FcDiag { check_ty: who.pat.ty, check_loc: who.pat.loc, match_ty, range, note });
        }
    }

    /// LLVM's `reportMatchResult`; `res` is relative to `search.0`. Returns whether an error was
    /// reported.
    pub fn report(
        &mut self,
        expected: bool,
        who: &Who<'_>,
        count: usize,
        search: (usize, usize),
        res: &Result<Match, MatchError>,
        ctx: &Context,
    ) -> bool {
        match res {
            Ok(m) => {
                let range = (search.0 + m.pos, search.0 + m.pos + m.len);
                self.print_match(expected, who, count, range, ctx)
            }
            Err(e) => self.print_no_match(expected, who, count, search, e, ctx),
        }
    }

    /// LLVM's `printMatch` for the absolute match `range`.
    pub fn print_match(
        &mut self,
        expected: bool,
        who: &Who<'_>,
        count: usize,
        range: (usize, usize),
        ctx: &Context,
    ) -> bool {
        let has_error = !expected;
        if !has_error && (!self.verbose || (!self.vv && who.pat.ty.kind == CheckKind::Eof)) {
            return false;
        }
        let print_diag = has_error || self.diags.is_none();
        let match_ty = if expected { MatchType::FoundAndExpected } else { MatchType::FoundButExcluded };
        if self.diags.is_some() {
            self.push_diag(who, match_ty, range, None);
            self.substitution_diags(who, range.0, match_ty, ctx);
            self.capture_diags(who, match_ty, ctx);
        }
        if !print_diag {
            return has_error;
        }
        let what = if expected { "expected" } else { "excluded" };
        let msg = format!(
            "{}: {what} string found in input{}",
            who.pat.ty.description(who.prefix),
            count_suffix(who.pat, count)
        );
        let sev = if expected { Severity::Remark } else { Severity::Error };
        self.sm.print(&mut self.out, who.loc, sev, &msg, &[]);
        let start = self.input_loc(range.0);
        self.sm.print(&mut self.out, start, Severity::Note, "found here", &[range]);
        self.substitution_notes(who, range.0, ctx);
        self.capture_notes(who, ctx);
        has_error
    }

    /// LLVM's `printNoMatch` for the absolute search range `search`.
    pub fn print_no_match(
        &mut self,
        expected: bool,
        who: &Who<'_>,
        count: usize,
        search: (usize, usize),
        err: &MatchError,
        ctx: &Context,
    ) -> bool {
        let mut has_error = expected;
        let mut match_ty = if expected { MatchType::NoneButExpected } else { MatchType::NoneAndExcluded };
        let mut error_msgs = Vec::new();
        if let MatchError::Errors(errors) = err {
            has_error = true;
            match_ty = MatchType::NoneForInvalidPattern;
            for e in errors {
                e.print(self.sm, &mut self.out);
                error_msgs.push(e.msg.clone());
            }
        }
        if !has_error && !self.vv {
            return false;
        }
        let print_diag = has_error || self.diags.is_none();
        self.record_no_match(who, match_ty, search, &error_msgs, ctx);
        if !print_diag {
            return has_error;
        }
        if error_msgs.is_empty() {
            let what = if expected { "expected" } else { "excluded" };
            let msg = format!(
                "{}: {what} string not found in input{}",
                who.pat.ty.description(who.prefix),
                count_suffix(who.pat, count)
            );
            let sev = if expected { Severity::Error } else { Severity::Remark };
            self.sm.print(&mut self.out, who.loc, sev, &msg, &[]);
            self.note(search.0, "scanning from here");
        }
        self.substitution_notes(who, search.0, ctx);
        if expected {
            self.fuzzy_match(who, search);
        }
        has_error
    }

    /// Adds the "not found" result, pattern errors and substitutions to the dump annotations.
    fn record_no_match(
        &mut self,
        who: &Who<'_>,
        match_ty: MatchType,
        search: (usize, usize),
        errors: &[String],
        ctx: &Context,
    ) {
        if self.diags.is_none() {
            return;
        }
        self.push_diag(who, match_ty, search, None);
        for m in errors {
            self.push_diag(who, match_ty, (search.0, search.0), Some(m.clone()));
        }
        self.substitution_diags(who, search.0, match_ty, ctx);
    }

    /// Records a "match on wrong line" result (CHECK-NEXT/SAME/EMPTY); with `-v` the preceding
    /// "found" results of the same directive are relabelled instead.
    pub fn wrong_line(&mut self, who: &Who<'_>, range: (usize, usize)) {
        let adjust = self.verbose;
        let Some(diags) = &mut self.diags else { return };
        if adjust {
            let loc = diags.last().map(|d| d.check_loc);
            for d in diags.iter_mut().rev().take_while(|d| Some(d.check_loc) == loc) {
                d.match_ty = MatchType::FoundButWrongLine;
            }
            return;
        }
        self.push_diag(who, MatchType::FoundButWrongLine, range, None);
    }

    /// `-vv`: a CHECK-DAG match overlapping an earlier one is discarded.
    pub fn discarded(&mut self, earlier: (usize, usize)) {
        match &mut self.diags {
            None => {
                let loc = self.input_loc(earlier.0);
                let msg = "match discarded, overlaps earlier DAG match here";
                self.sm.print(&mut self.out, loc, Severity::Note, msg, &[earlier]);
            }
            Some(diags) => {
                let loc = diags.last().map(|d| d.check_loc);
                for d in diags.iter_mut().rev().take_while(|d| Some(d.check_loc) == loc) {
                    d.match_ty = MatchType::FoundButDiscarded;
                }
            }
        }
    }

    /// "with X equal to ..." for the pattern's substitutions, the first [`MAX_SUBSTITUTION_NOTES`] of them.
    fn substitution_texts(who: &Who<'_>, ctx: &Context) -> Vec<String> {
        who.pat
            .substitutions()
            .iter()
            .filter_map(|s| {
                let v = s.value_for_diagnostics(ctx)?;
                Some(format!("with \"{}\" equal to {v}", super::pattern::write_escaped(s.from.as_bytes())))
            })
            .take(MAX_SUBSTITUTION_NOTES)
            .collect()
    }

    fn substitution_notes(&mut self, who: &Who<'_>, at: usize, ctx: &Context) {
        for msg in Self::substitution_texts(who, ctx) {
            self.note(at, &msg);
        }
    }

    fn substitution_diags(&mut self, who: &Who<'_>, at: usize, match_ty: MatchType, ctx: &Context) {
        for msg in Self::substitution_texts(who, ctx) {
            self.push_diag(who, match_ty, (at, at), Some(msg));
        }
    }

    fn capture_notes(&mut self, who: &Who<'_>, ctx: &Context) {
        for (name, range) in who.pat.variable_captures(ctx) {
            let loc = self.input_loc(range.0);
            let msg = format!("captured var \"{name}\"");
            self.sm.print(&mut self.out, loc, Severity::Note, &msg, &[range]);
        }
    }

    fn capture_diags(&mut self, who: &Who<'_>, match_ty: MatchType, ctx: &Context) {
        for (name, range) in who.pat.variable_captures(ctx) {
            self.push_diag(who, match_ty, range, Some(format!("captured var \"{name}\"")));
        }
    }

    /// LLVM's `printFuzzyMatch`: points at the most similar text in the first 4 KiB.
    fn fuzzy_match(&mut self, who: &Who<'_>, search: (usize, usize)) {
        let buf = &self.sm.text(self.input)[search.0..search.1];
        let (fixed, regex) = who.pat.text_sizes();
        let limit = buf.len().min(4096);
        if 4096 * 2048 < limit * fixed.max(regex) {
            return;
        }
        let example = who.pat.example_text();
        let mut lines = 0usize;
        let mut best: Option<(usize, f64)> = None;
        for i in 0..limit {
            if buf[i] == b'\n' {
                lines += 1;
            }
            if buf[i] == b' ' || buf[i] == b'\t' {
                continue;
            }
            let quality = match_distance(&buf[i..], example) as f64 + lines as f64 / 100.0;
            if best.is_none_or(|(_, q)| quality < q) {
                best = Some((i, quality));
            }
        }
        if let Some((b, q)) = best {
            if b != 0 && q < 50.0 {
                let at = search.0 + b;
                self.push_diag(who, MatchType::Fuzzy, (at, at), None);
                self.note(at, "possible intended match here");
            }
        }
    }

    /// The recorded dump annotations.
    pub fn into_parts(self) -> (String, Vec<FcDiag>) {
        (self.out, self.diags.unwrap_or_default())
    }
}

fn count_suffix(pat: &Pattern, count: usize) -> String {
    if pat.ty.count > 1 {
        format!(" ({count} out of {})", pat.ty.count)
    } else {
        String::new()
    }
}

/// LLVM's `computeMatchDistance`: edit distance between the example and the start of `buf`
/// (limited to its first line), or [`FUZZY_DISTANCE`] when it is at least that: only a closer match is reported.
fn match_distance(buf: &[u8], example: &[u8]) -> usize {
    let prefix = &buf[..buf.len().min(example.len())];
    let prefix = prefix.split(|&b| b == b'\n').next().unwrap_or(&[]);
    edit_distance_below(prefix, example, FUZZY_DISTANCE)
}

/// A match at this edit distance or more is not "a possible intended match".
const FUZZY_DISTANCE: usize = 50;

/// The edit distance of `a` and `b` if it is below `bound`, else `bound`. Only the cells within `bound` of the
/// diagonal can hold a smaller distance, so a row costs `2 * bound + 1` cells, not `b.len()`.
fn edit_distance_below(a: &[u8], b: &[u8], bound: usize) -> usize {
    if a.len().abs_diff(b.len()) >= bound {
        return bound;
    }
    // `row[j]` is min(D[r][j], bound) for the row `r` done last; cells outside the band hold `bound`.
    let mut row: Vec<usize> = (0..=b.len()).map(|j| j.min(bound)).collect();
    for (i, &ca) in a.iter().enumerate() {
        let r = i + 1;
        let start = (r + 1).saturating_sub(bound).max(1);
        let hi = (r + bound - 1).min(b.len());
        let mut diag = row[start - 1];
        row[start - 1] = if start == 1 { r.min(bound) } else { bound };
        for j in start..=hi {
            let up = row[j];
            let d = if ca == b[j - 1] { diag } else { 1 + diag.min(up).min(row[j - 1]) };
            row[j] = d.min(bound);
            diag = up;
        }
    }
    row[b.len()].min(bound)
}

/// How the input dump names check locations.
pub(crate) struct DumpLabels<'a> {
    /// The check file buffer.
    pub check_buf: BufId,
    /// Buffers of the `--implicit-check-not` patterns, in order.
    pub implicit_bufs: &'a [BufId],
}

struct Marker {
    lead: char,
    note: String,
    filters_as_error: bool,
}

fn marker(t: MatchType) -> Marker {
    let (lead, note, err) = match t {
        MatchType::FoundAndExpected => ('^', "", false),
        MatchType::FoundButExcluded => ('!', "error: no match expected", true),
        MatchType::FoundButWrongLine => ('!', "error: match on wrong line", true),
        MatchType::FoundButDiscarded => ('!', "discard: overlaps earlier match", false),
        MatchType::NoneAndExcluded => ('X', "", false),
        MatchType::NoneButExpected => ('X', "error: no match found", true),
        MatchType::NoneForInvalidPattern => ('X', "error: match failed for invalid pattern", true),
        MatchType::Fuzzy => ('?', "possible intended match", true),
    };
    Marker { lead, note: note.to_string(), filters_as_error: err }
}

struct Annotation {
    index: usize,
    label: String,
    first_line: bool,
    line: usize,
    start_col: usize,
    end_col: usize,
    marker: Marker,
}

/// Options for [`dump_input`].
pub(crate) struct DumpOptions {
    /// Which lines to show.
    pub filter: DumpInputFilter,
    /// Context lines around shown lines.
    pub context: usize,
}

/// Renders LLVM's annotated input dump (`Input was:` ... `>>>>>>`).
pub(crate) fn dump_input(
    sm: &SourceMgr,
    labels: &DumpLabels<'_>,
    diags: &[FcDiag],
    input: &[u8],
    opts: &DumpOptions,
) -> String {
    let (mut anns, label_width) = build_annotations(sm, labels, diags, input);
    anns.sort_by_key(|a| (a.line, a.index));
    let mut line_count = input.iter().filter(|&&b| b == b'\n').count();
    if input.last().is_some_and(|&b| b != b'\n') {
        line_count += 1;
    }
    let width = label_width.max(digits(line_count)) + 3;
    let mut out = String::from("Input was:\n<<<<<<\n");
    let mut elided = String::new();
    let (mut prev_in_filter, mut next_in_filter) = (0usize, 0usize);
    let mut pos = 0usize;
    let mut ai = 0usize;
    let mut line = 1usize;
    while pos < input.len() || ai < anns.len() {
        if next_in_filter < line {
            next_in_filter = find_line_in_filter(opts.filter, line, &anns[ai..]);
        }
        if next_in_filter == line {
            prev_in_filter = line;
        }
        let elide = (prev_in_filter == 0 || prev_in_filter + opts.context < line)
            && (next_in_filter == usize::MAX || line + opts.context < next_in_filter);
        let line_start = pos;
        let mut text = render_input_line(input, &mut pos, line, width);
        let line_width = pos - line_start;
        while ai < anns.len() && anns[ai].line == line {
            render_annotation(&mut text, &anns[ai], width, line_width);
            ai += 1;
        }
        if elide {
            elided.push_str(&text);
        } else {
            flush_elided(&mut out, &mut elided, width);
            out.push_str(&text);
        }
        line += 1;
    }
    flush_elided(&mut out, &mut elided, width);
    out.push_str(">>>>>>\n");
    out
}

/// Renders input line `line` starting at `*pos` (the newline shown as a space) and advances
/// `*pos` past it.
fn render_input_line(input: &[u8], pos: &mut usize, line: usize, width: usize) -> String {
    let start = *pos;
    let end = input[start..].iter().position(|&b| b == b'\n').map_or(input.len(), |i| start + i + 1);
    *pos = end;
    let mut bytes = input[start..end].to_vec();
    if bytes.last() == Some(&b'\n') {
        *bytes.last_mut().expect("non-empty") = b' ';
    }
    format!("{line:>width$}: {}\n", String::from_utf8_lossy(&bytes))
}

fn digits(n: usize) -> usize {
    n.max(1).to_string().len()
}

fn find_line_in_filter(filter: DumpInputFilter, line: usize, anns: &[Annotation]) -> usize {
    let found = match filter {
        DumpInputFilter::All => return line,
        DumpInputFilter::AnnotationFull => anns.first(),
        DumpInputFilter::Annotation => anns.iter().find(|a| a.first_line),
        DumpInputFilter::Error => anns.iter().find(|a| a.first_line && a.marker.filters_as_error),
    };
    found.map_or(usize::MAX, |a| a.line)
}

fn flush_elided(out: &mut String, elided: &mut String, width: usize) {
    if elided.is_empty() {
        return;
    }
    if elided.matches('\n').count() > 3 {
        for _ in 0..3 {
            let _ = writeln!(out, "{:>width$}", ".");
        }
    } else {
        out.push_str(elided);
    }
    elided.clear();
}

fn render_annotation(out: &mut String, a: &Annotation, width: usize, line_width: usize) {
    let _ = write!(out, "{:<width$}  ", a.label);
    let mut col = 1;
    while col < a.start_col {
        out.push(' ');
        col += 1;
    }
    out.push(a.marker.lead);
    col += 1;
    while col < a.end_col && col <= line_width {
        out.push('~');
        col += 1;
    }
    if !a.marker.note.is_empty() {
        while col <= line_width {
            out.push(' ');
            col += 1;
        }
        out.push(' ');
        out.push_str(&a.marker.note);
    }
    out.push('\n');
}

fn build_annotations(
    sm: &SourceMgr,
    labels: &DumpLabels<'_>,
    diags: &[FcDiag],
    input: &[u8],
) -> (Vec<Annotation>, usize) {
    let lines = LineIndex::new(input);
    let mut per_pattern: std::collections::BTreeMap<Loc, (usize, usize)> = Default::default();
    for d in diags {
        per_pattern.entry(d.check_loc).or_default().0 += 1;
    }
    let mut anns = Vec::new();
    let mut label_width = 0;
    for (index, d) in diags.iter().enumerate() {
        let counts = per_pattern.get_mut(&d.check_loc).expect("counted above");
        let mut label = format!("{}:{}", d.check_ty.abbreviation(), check_label(sm, labels, d.check_loc));
        if counts.0 > 1 {
            let _ = write!(label, "'{}", counts.1);
            counts.1 += 1;
        }
        label_width = label_width.max(label.len());
        let mut m = marker(d.match_ty);
        let (sl, sc) = lines.line_col(input, d.range.0);
        let (el, ec) = lines.line_col(input, d.range.1);
        if let Some(note) = &d.note {
            m.note = note.clone();
            if sl == el && sc == ec {
                m.lead = ' ';
            }
        }
        push_annotation(&mut anns, index, label, m, (sl, sc), (el, ec));
    }
    (anns, label_width)
}

fn push_annotation(
    anns: &mut Vec<Annotation>,
    index: usize,
    label: String,
    m: Marker,
    start: (usize, usize),
    end: (usize, usize),
) {
    let (sl, sc) = start;
    let (el, ec) = end;
    if sl == el {
        anns.push(Annotation {
            index,
            label,
            first_line: true,
            line: sl,
            start_col: sc,
            end_col: ec.max(sc + 1),
            marker: m,
        });
        return;
    }
    let filters_as_error = m.filters_as_error;
    anns.push(Annotation {
        index,
        label: label.clone(),
        first_line: true,
        line: sl,
        start_col: sc,
        end_col: usize::MAX,
        marker: m,
    });
    for l in sl + 1..=el {
        if ec == 1 && l == el {
            break;
        }
        anns.push(Annotation {
            index,
            label: label.clone(),
            first_line: false,
            line: l,
            start_col: 1,
            end_col: if l != el { usize::MAX } else { ec },
            marker: Marker { lead: '~', note: String::new(), filters_as_error },
        });
    }
}

fn check_label(sm: &SourceMgr, labels: &DumpLabels<'_>, loc: Loc) -> String {
    if loc.buf == labels.check_buf {
        return sm.line_col(loc).0.to_string();
    }
    match labels.implicit_bufs.iter().position(|&b| b == loc.buf) {
        Some(i) => format!("imp{}", i + 1),
        None => sm.line_col(loc).0.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plain dynamic program.
    fn edit_distance(a: &[u8], b: &[u8]) -> usize {
        let mut row: Vec<usize> = (0..=b.len()).collect();
        for (i, &ca) in a.iter().enumerate() {
            let mut prev = row[0];
            row[0] = i + 1;
            for (j, &cb) in b.iter().enumerate() {
                let cur = row[j + 1];
                row[j + 1] = if ca == cb { prev } else { 1 + prev.min(row[j]).min(row[j + 1]) };
                prev = cur;
            }
        }
        row[b.len()]
    }

    proptest::proptest! {
        #[test]
        fn banded_distance_agrees_below_the_bound(
            a in proptest::collection::vec(0u8..3, 0..24),
            b in proptest::collection::vec(0u8..3, 0..24),
            bound in 1usize..13,
        ) {
            proptest::prop_assert_eq!(edit_distance_below(&a, &b, bound), edit_distance(&a, &b).min(bound));
        }
    }

    #[test]
    fn edit_distance_basics() {
        assert_eq!(edit_distance(b"abc", b"abc"), 0);
        assert_eq!(edit_distance(b"abc", b"abd"), 1);
        assert_eq!(edit_distance(b"", b"abc"), 3);
        assert_eq!(edit_distance(b"kitten", b"sitting"), 3);
    }

    #[test]
    fn elides_long_runs() {
        let mut out = String::new();
        let mut elided = "a\nb\nc\nd\n".to_string();
        flush_elided(&mut out, &mut elided, 4);
        assert_eq!(out, "   .\n   .\n   .\n");
    }
}
