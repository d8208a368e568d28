//! Source buffers (check file, input, synthetic "command line" buffers), locations and
//! LLVM `SourceMgr`-style message printing.

use std::fmt::Write as _;

/// Index of a buffer inside a [`SourceMgr`].
pub(crate) type BufId = usize;

/// A position inside one of the buffers of a [`SourceMgr`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Loc {
    /// The buffer holding the position.
    pub buf: BufId,
    /// Byte offset inside the buffer.
    pub off: usize,
}

/// Severity of a printed message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Severity {
    Error,
    Note,
    Remark,
}

impl Severity {
    fn label(self) -> &'static str {
        match self {
            Severity::Error => "error: ",
            Severity::Note => "note: ",
            Severity::Remark => "remark: ",
        }
    }
}

/// One named text buffer.
pub(crate) struct SourceBuf {
    /// Name shown in diagnostics (`t.chk`, `<stdin>`, `command line`).
    pub name: String,
    /// The (canonicalized) text.
    pub text: Vec<u8>,
    /// Where its lines start, for line and column lookups.
    lines: LineIndex,
}

/// The offsets of a text's newlines: a line and column lookup is a binary search, so a report with an
/// annotation per line of a long input stays linear.
#[derive(Clone, Debug, Default)]
pub(crate) struct LineIndex(Vec<usize>);

impl LineIndex {
    /// The index of `text`.
    pub fn new(text: &[u8]) -> Self {
        LineIndex(newlines(text))
    }

    /// 1-based line and column of byte `off` (clamped to the text).
    pub fn line_col(&self, text: &[u8], off: usize) -> (usize, usize) {
        let off = off.min(text.len());
        let before = self.0.partition_point(|&nl| nl < off);
        let line_start = if before == 0 { 0 } else { self.0[before - 1] + 1 };
        (before + 1, off - line_start + 1)
    }
}

fn newlines(text: &[u8]) -> Vec<usize> {
    text.iter().enumerate().filter(|&(_, &b)| b == b'\n').map(|(i, _)| i).collect()
}

/// A set of buffers, like LLVM's `SourceMgr`.
#[derive(Default)]
pub(crate) struct SourceMgr {
    bufs: Vec<SourceBuf>,
}

impl SourceMgr {
    /// Adds a buffer and returns its id.
    pub fn add(&mut self, name: &str, text: Vec<u8>) -> BufId {
        let lines = LineIndex::new(&text);
        self.bufs.push(SourceBuf { name: name.to_string(), text, lines });
        self.bufs.len() - 1
    }

    /// The buffer with id `id`.
    pub fn buf(&self, id: BufId) -> &SourceBuf {
        &self.bufs[id]
    }

    /// The text of buffer `id`.
    pub fn text(&self, id: BufId) -> &[u8] {
        &self.bufs[id].text
    }

    /// 1-based line and column of `loc` (lines counted by `\n`).
    pub fn line_col(&self, loc: Loc) -> (usize, usize) {
        let buf = &self.bufs[loc.buf];
        buf.lines.line_col(&buf.text, loc.off)
    }

    /// Prints a message in LLVM's `SMDiagnostic::print` format: location header, the source line
    /// and a caret line (with `~` under `ranges`, given as byte offsets in the same buffer).
    pub fn print(&self, out: &mut String, loc: Loc, sev: Severity, msg: &str, ranges: &[(usize, usize)]) {
        let text = self.text(loc.buf);
        let (line, col) = self.line_col(loc);
        let name = &self.buf(loc.buf).name;
        let _ = writeln!(out, "{name}:{line}:{col}: {}{msg}", sev.label());
        let (ls, le) = line_bounds(text, loc.off);
        let contents = &text[ls..le];
        if contents.iter().any(|&b| b >= 0x80) {
            print_source_line(out, contents);
            return;
        }
        let caret = caret_line(contents, loc.off - ls, ls, le, ranges);
        print_source_line(out, contents);
        print_caret_line(out, contents, &caret);
    }
}

/// Start and end offsets of the line containing `off` (lines end at `\n` or `\r`).
pub(crate) fn line_bounds(text: &[u8], off: usize) -> (usize, usize) {
    let off = off.min(text.len());
    let mut start = off;
    while start > 0 && text[start - 1] != b'\n' && text[start - 1] != b'\r' {
        start -= 1;
    }
    let mut end = off;
    while end < text.len() && text[end] != b'\n' && text[end] != b'\r' {
        end += 1;
    }
    (start, end)
}

fn caret_line(contents: &[u8], col: usize, ls: usize, le: usize, ranges: &[(usize, usize)]) -> Vec<u8> {
    let n = contents.len();
    let mut caret = vec![b' '; n + 1];
    for &(rs, re) in ranges {
        if rs > le || re < ls {
            continue;
        }
        let (a, b) = (rs.max(ls) - ls, re.min(le) - ls);
        for c in caret.iter_mut().take(b.min(n + 1)).skip(a) {
            *c = b'~';
        }
    }
    caret[col.min(n)] = b'^';
    while caret.last() == Some(&b' ') {
        caret.pop();
    }
    caret
}

const TAB_STOP: usize = 8;

fn print_source_line(out: &mut String, contents: &[u8]) {
    let mut col = 0;
    let mut line = Vec::with_capacity(contents.len());
    for &b in contents {
        if b == b'\t' {
            loop {
                line.push(b' ');
                col += 1;
                if col % TAB_STOP == 0 {
                    break;
                }
            }
        } else {
            line.push(b);
            col += 1;
        }
    }
    out.push_str(&String::from_utf8_lossy(&line));
    out.push('\n');
}

fn print_caret_line(out: &mut String, contents: &[u8], caret: &[u8]) {
    let mut col = 0;
    for (i, &c) in caret.iter().enumerate() {
        if i >= contents.len() || contents[i] != b'\t' {
            out.push(c as char);
            col += 1;
            continue;
        }
        loop {
            out.push(c as char);
            col += 1;
            if col % TAB_STOP == 0 {
                break;
            }
        }
    }
    out.push('\n');
}

/// An error located in a buffer, produced while parsing the check file or matching.
#[derive(Clone, Debug)]
pub(crate) struct ErrorDiag {
    /// Where the error points.
    pub loc: Loc,
    /// The message (without the `error: ` label).
    pub msg: String,
    /// Printed through LLVM's `logAllUnhandledErrors`, which adds an empty line.
    pub logged: bool,
    /// Exit code when this error aborts the run (LLVM exits 1 for a few parse errors).
    pub exit_code: i32,
}

impl ErrorDiag {
    /// An error printed directly with `SourceMgr::PrintMessage`.
    pub fn new(loc: Loc, msg: impl Into<String>) -> Self {
        ErrorDiag { loc, msg: msg.into(), logged: false, exit_code: 2 }
    }

    /// An error printed through `logAllUnhandledErrors`.
    pub fn logged(loc: Loc, msg: impl Into<String>) -> Self {
        ErrorDiag { logged: true, ..ErrorDiag::new(loc, msg) }
    }

    /// Prints the error like LLVM does.
    pub fn print(&self, sm: &SourceMgr, out: &mut String) {
        sm.print(out, self.loc, Severity::Error, &self.msg, &[]);
        if self.logged {
            out.push('\n');
        }
    }
}

/// A view of part of a buffer, like LLVM's `StringRef` but remembering where it lives so that
/// diagnostics can point at it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Span<'a> {
    text: &'a [u8],
    buf: BufId,
    start: usize,
    end: usize,
}

/// Horizontal whitespace as trimmed by FileCheck.
pub(crate) const SPACE_CHARS: &[u8] = b" \t";

impl<'a> Span<'a> {
    /// The span `[start, end)` of buffer `buf` whose text is `text`.
    pub fn new(text: &'a [u8], buf: BufId, start: usize, end: usize) -> Self {
        Span { text, buf, start, end }
    }

    /// The bytes of the span.
    pub fn bytes(&self) -> &'a [u8] {
        &self.text[self.start..self.end]
    }

    /// The span as (lossy) UTF-8.
    pub fn string(&self) -> String {
        String::from_utf8_lossy(self.bytes()).into_owned()
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.end - self.start
    }

    /// Whether the span is empty.
    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }

    /// Location of the first byte.
    pub fn loc(&self) -> Loc {
        Loc { buf: self.buf, off: self.start }
    }

    /// Location `n` bytes into the span.
    pub fn loc_at(&self, n: usize) -> Loc {
        Loc { buf: self.buf, off: (self.start + n).min(self.end) }
    }

    /// First byte.
    pub fn front(&self) -> Option<u8> {
        self.bytes().first().copied()
    }

    /// Whether the span starts with `p`.
    pub fn starts_with(&self, p: &[u8]) -> bool {
        self.bytes().starts_with(p)
    }

    /// Drops `p` from the front if present.
    pub fn consume_front(&mut self, p: &[u8]) -> bool {
        if self.starts_with(p) {
            self.start += p.len();
            return true;
        }
        false
    }

    /// Removes and returns the first byte.
    pub fn pop_front(&mut self) -> Option<u8> {
        let c = self.front()?;
        self.start += 1;
        Some(c)
    }

    /// Offset of the first occurrence of `needle` at or after `from`.
    pub fn find_from(&self, needle: &[u8], from: usize) -> Option<usize> {
        let b = self.bytes();
        if from > b.len() || needle.len() > b.len() - from {
            return None;
        }
        (from..=b.len() - needle.len()).find(|&i| b[i..].starts_with(needle))
    }

    /// Offset of the first occurrence of `needle`.
    pub fn find(&self, needle: &[u8]) -> Option<usize> {
        self.find_from(needle, 0)
    }

    /// Offset of the first byte contained in `set`.
    pub fn find_first_of(&self, set: &[u8]) -> Option<usize> {
        self.bytes().iter().position(|b| set.contains(b))
    }

    /// Whether `needle` occurs.
    pub fn contains(&self, needle: &[u8]) -> bool {
        self.find(needle).is_some()
    }

    /// The span without its first `n` bytes (clamped).
    pub fn drop_front(&self, n: usize) -> Self {
        Span { start: (self.start + n).min(self.end), ..*self }
    }

    /// The first `n` bytes (clamped).
    pub fn take_front(&self, n: usize) -> Self {
        Span { end: (self.start + n).min(self.end), ..*self }
    }

    /// The span without its last `n` bytes (clamped).
    pub fn drop_back(&self, n: usize) -> Self {
        Span { end: self.end.saturating_sub(n).max(self.start), ..*self }
    }

    /// Drops leading bytes contained in `set`.
    pub fn ltrim(&self, set: &[u8]) -> Self {
        let n = self.bytes().iter().take_while(|b| set.contains(b)).count();
        self.drop_front(n)
    }

    /// Drops trailing bytes contained in `set`.
    pub fn rtrim(&self, set: &[u8]) -> Self {
        let n = self.bytes().iter().rev().take_while(|b| set.contains(b)).count();
        self.drop_back(n)
    }

    /// Drops leading and trailing bytes contained in `set`.
    pub fn trim(&self, set: &[u8]) -> Self {
        self.ltrim(set).rtrim(set)
    }
}

/// LLVM's `FileCheck::CanonicalizeFile`: drops the `\r` of `\r\n` and, unless `strict`, folds
/// every run of spaces and tabs into a single space.
pub(crate) fn canonicalize(input: &[u8], strict: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(input.len());
    let mut i = 0;
    while i < input.len() {
        let b = input[i];
        if b == b'\r' && input.get(i + 1) == Some(&b'\n') {
            i += 1;
            continue;
        }
        if strict || (b != b' ' && b != b'\t') {
            out.push(b);
            i += 1;
            continue;
        }
        out.push(b' ');
        while i + 1 < input.len() && (input[i + 1] == b' ' || input[i + 1] == b'\t') {
            i += 1;
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonicalize_folds_whitespace_and_crlf() {
        assert_eq!(canonicalize(b"a \t  b\r\nc", false), b"a b\nc");
        assert_eq!(canonicalize(b"a \t b\r\n", true), b"a \t b\n");
    }

    #[test]
    fn prints_llvm_style_message() {
        let mut sm = SourceMgr::default();
        let id = sm.add("t.in", b"foo\nbar\n".to_vec());
        let mut out = String::new();
        sm.print(&mut out, Loc { buf: id, off: 4 }, Severity::Note, "found here", &[(4, 7)]);
        assert_eq!(out, "t.in:2:1: note: found here\nbar\n^~~\n");
    }
}
