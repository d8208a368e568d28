//! POSIX extended regular expressions as implemented by LLVM's `Regex` (Henry Spencer's
//! `regcomp`): parsing into an AST, the portability lint, and translation to `regex` syntax.
//!
//! The grammar and error messages follow Spencer's `p_ere`/`p_ere_exp`/`p_bracket`: `\X` for a
//! non-digit `X` is the literal `X`, `\1`..`\9` are back-references, a repetition operator after
//! another one (`a**`, lazy `a*?`) or at the start (`(?=…)`) is "repetition-operator operand
//! invalid", empty alternatives are "empty (sub)expression", bracket expressions support POSIX
//! classes (`[[:digit:]]`), equivalence classes and single-character collating elements, and
//! `[[:<:]]`/`[[:>:]]` are word boundaries. The matcher always runs with `REG_NEWLINE`: `.` and
//! negated brackets never match `\n`, `^`/`$` also match around newlines.
//!
//! The lint ([`ParseMode::Lint`]) additionally rejects Perl-style escapes such as `\d`, `\w`,
//! `\s`, `\b` (which LLVM silently treats as the literal letters), so that tests written against
//! this engine stay portable to real LLVM FileCheck.

use std::fmt::Write as _;

/// Index of a node in [`Ere::nodes`].
pub(crate) type NodeId = usize;

/// A set of bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) struct ByteSet([u64; 4]);

impl ByteSet {
    /// Adds `b`.
    pub fn insert(&mut self, b: u8) {
        self.0[(b >> 6) as usize] |= 1 << (b & 63);
    }

    /// Whether `b` is in the set.
    pub fn contains(&self, b: u8) -> bool {
        self.0[(b >> 6) as usize] & (1 << (b & 63)) != 0
    }

    /// Removes `b`.
    pub fn remove(&mut self, b: u8) {
        self.0[(b >> 6) as usize] &= !(1 << (b & 63));
    }

    fn negate(&mut self) {
        for w in &mut self.0 {
            *w = !*w;
        }
    }

    fn single(b: u8) -> Self {
        let mut s = ByteSet::default();
        s.insert(b);
        s
    }

    /// The only member, if the set has exactly one.
    fn as_single(&self) -> Option<u8> {
        let n: u32 = self.0.iter().map(|w| w.count_ones()).sum();
        if n != 1 {
            return None;
        }
        (0..=255u8).find(|&b| self.contains(b))
    }

    /// Adds the other ASCII case of every letter in the set.
    fn add_other_cases(&mut self) {
        for b in b'a'..=b'z' {
            let u = b.to_ascii_uppercase();
            if self.contains(b) || self.contains(u) {
                self.insert(b);
                self.insert(u);
            }
        }
    }

    /// Maximal ranges of members, ascending.
    fn ranges(&self) -> Vec<(u8, u8)> {
        let mut out: Vec<(u8, u8)> = Vec::new();
        for b in 0..=255u8 {
            if !self.contains(b) {
                continue;
            }
            match out.last_mut() {
                Some(r) if r.1 as u16 + 1 == b as u16 => r.1 = b,
                _ => out.push((b, b)),
            }
        }
        out
    }
}

/// A node of the regex AST.
#[derive(Clone, Debug)]
pub(crate) enum Node {
    /// Matches the empty string (the body of `()`).
    Empty,
    /// One byte from the set (literal characters are singleton sets).
    Set(ByteSet),
    /// `^`: start of the searched text or after a newline.
    Bol,
    /// `$`: end of the searched text or before a newline.
    Eol,
    /// `[[:<:]]`: start of a word.
    Bow,
    /// `[[:>:]]`: end of a word.
    Eow,
    /// Capturing group with its 1-based index.
    Group(usize, NodeId),
    /// Sequence.
    Concat(Vec<NodeId>),
    /// Alternation, in source order.
    Alt(Vec<NodeId>),
    /// Bounded or unbounded repetition.
    Repeat { inner: NodeId, min: u32, max: Option<u32> },
    /// Back-reference to a group.
    Backref(usize),
}

/// A parsed regex.
#[derive(Clone, Debug)]
pub(crate) struct Ere {
    /// Node arena.
    pub nodes: Vec<Node>,
    /// The root node.
    pub root: NodeId,
    /// Number of capturing groups (`re_nsub`).
    pub ngroups: usize,
    /// Whether any back-reference occurs.
    pub has_backrefs: bool,
}

/// How strictly to parse.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum ParseMode {
    /// Exactly LLVM's dialect (used for the combined regex built by FileCheck).
    Llvm,
    /// LLVM's dialect plus the portability lint (used for user-written regexes).
    Lint,
}

// Spencer's regerror() messages.
const EMPTY: &str = "empty (sub)expression";
const BADRPT: &str = "repetition-operator operand invalid";
const EPAREN: &str = "parentheses not balanced";
const EBRACK: &str = "brackets ([ ]) not balanced";
const EBRACE: &str = "braces not balanced";
const BADBR: &str = "invalid repetition count(s)";
const ERANGE: &str = "invalid character range";
const ECTYPE: &str = "invalid character class";
const ECOLLATE: &str = "invalid collating element";
const EESCAPE: &str = "trailing backslash (\\)";
const ESUBREG: &str = "invalid backreference number";

const DUP_MAX: u32 = 255;

/// The deepest a regex's parentheses may nest (Spencer's parser recurses on each level).
pub const MAX_REGEX_NESTING: usize = 256;

/// The most nodes (atoms, repetitions, groups) one regex may have, variables substituted: the leftmost-longest
/// matcher keeps end positions per node and position.
pub const MAX_REGEX_NODES: usize = 1 << 14;

/// How the error for a regex past [`MAX_REGEX_NODES`] starts (the one limit that substituting variables can
/// reach, which a matcher tells apart from a regex that is merely invalid).
pub(crate) const TOO_LARGE: &str = "regex is too large";

/// Parses `pat` as an LLVM POSIX ERE. `icase` folds ASCII case; the `REG_NEWLINE` semantics are
/// always on. Errors are Spencer's `regerror` strings (or a lint explanation).
pub(crate) fn parse(pat: &[u8], icase: bool, mode: ParseMode) -> Result<Ere, String> {
    let mut p = Parser {
        s: pat,
        pos: 0,
        nodes: Vec::new(),
        nsub: 0,
        closed: Vec::new(),
        icase,
        mode,
        has_backrefs: false,
        depth: 0,
    };
    let root = p.ere(None)?;
    Ok(Ere { nodes: p.nodes, root, ngroups: p.nsub, has_backrefs: p.has_backrefs })
}

struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
    nodes: Vec<Node>,
    nsub: usize,
    /// `closed[i]` is true once group `i + 1` has been closed.
    closed: Vec<bool>,
    icase: bool,
    mode: ParseMode,
    has_backrefs: bool,
    /// Open parentheses around the current position.
    depth: usize,
}

impl Parser<'_> {
    fn more(&self) -> bool {
        self.pos < self.s.len()
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    fn peek2(&self) -> Option<u8> {
        self.s.get(self.pos + 1).copied()
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            return true;
        }
        false
    }

    fn see_two(&self, a: u8, b: u8) -> bool {
        self.peek() == Some(a) && self.peek2() == Some(b)
    }

    fn eat_two(&mut self, a: u8, b: u8) -> bool {
        if self.see_two(a, b) {
            self.pos += 2;
            return true;
        }
        false
    }

    fn add(&mut self, n: Node) -> NodeId {
        self.nodes.push(n);
        self.nodes.len() - 1
    }

    /// An error once the regex has more than [`MAX_REGEX_NODES`] nodes.
    fn check_size(&self) -> Result<(), String> {
        if self.nodes.len() > MAX_REGEX_NODES {
            return Err(format!("{TOO_LARGE} (more than {MAX_REGEX_NODES} atoms)"));
        }
        Ok(())
    }

    /// `p_ere`: alternatives separated by `|`, up to `stop`.
    fn ere(&mut self, stop: Option<u8>) -> Result<NodeId, String> {
        let mut alts = Vec::new();
        loop {
            let mut seq = Vec::new();
            while let Some(c) = self.peek() {
                if c == b'|' || Some(c) == stop {
                    break;
                }
                seq.push(self.ere_exp()?);
                self.check_size()?;
            }
            if seq.is_empty() {
                return Err(EMPTY.into());
            }
            alts.push(if seq.len() == 1 { seq[0] } else { self.add(Node::Concat(seq)) });
            if !self.eat(b'|') {
                break;
            }
        }
        Ok(if alts.len() == 1 { alts[0] } else { self.add(Node::Alt(alts)) })
    }

    /// `p_ere_exp`: one atom with its optional repetition.
    fn ere_exp(&mut self) -> Result<NodeId, String> {
        let c = self.s[self.pos];
        self.pos += 1;
        let mut was_caret = false;
        let atom = match c {
            b'(' => self.group()?,
            b')' => return Err(EPAREN.into()),
            b'^' => {
                was_caret = true;
                self.add(Node::Bol)
            }
            b'$' => self.add(Node::Eol),
            b'|' => return Err(EMPTY.into()),
            b'*' | b'+' | b'?' => return Err(BADRPT.into()),
            b'.' => {
                let mut set = ByteSet::default();
                set.negate();
                set.remove(b'\n');
                self.add(Node::Set(set))
            }
            b'[' => self.bracket()?,
            b'\\' => self.escape()?,
            b'{' if self.peek().is_some_and(|d| d.is_ascii_digit()) => return Err(BADRPT.into()),
            _ => self.ordinary(c),
        };
        if !self.sees_repetition() {
            return Ok(atom);
        }
        if was_caret {
            return Err(BADRPT.into());
        }
        let node = self.repetition(atom)?;
        if self.sees_repetition() {
            return Err(BADRPT.into());
        }
        Ok(node)
    }

    fn sees_repetition(&self) -> bool {
        match self.peek() {
            Some(b'*' | b'+' | b'?') => true,
            Some(b'{') => self.peek2().is_some_and(|d| d.is_ascii_digit()),
            _ => false,
        }
    }

    fn group(&mut self) -> Result<NodeId, String> {
        if !self.more() {
            return Err(EPAREN.into());
        }
        if self.depth == MAX_REGEX_NESTING {
            return Err(format!("parentheses nest too deep (more than {MAX_REGEX_NESTING} levels)"));
        }
        self.nsub += 1;
        let idx = self.nsub;
        self.closed.push(false);
        self.depth += 1;
        let inner = if self.peek() == Some(b')') { self.add(Node::Empty) } else { self.ere(Some(b')'))? };
        self.depth -= 1;
        if !self.eat(b')') {
            return Err(EPAREN.into());
        }
        self.closed[idx - 1] = true;
        Ok(self.add(Node::Group(idx, inner)))
    }

    fn escape(&mut self) -> Result<NodeId, String> {
        let Some(c) = self.peek() else {
            return Err(EESCAPE.into());
        };
        self.pos += 1;
        if (b'1'..=b'9').contains(&c) {
            return self.backref((c - b'0') as usize);
        }
        if self.mode == ParseMode::Lint && c.is_ascii_alphabetic() {
            return Err(perl_escape_message(c));
        }
        Ok(self.ordinary(c))
    }

    fn backref(&mut self, n: usize) -> Result<NodeId, String> {
        if n == 0 || n > self.closed.len() || !self.closed[n - 1] {
            return Err(ESUBREG.into());
        }
        self.has_backrefs = true;
        Ok(self.add(Node::Backref(n)))
    }

    fn ordinary(&mut self, c: u8) -> NodeId {
        let mut set = ByteSet::single(c);
        if self.icase {
            set.add_other_cases();
        }
        self.add(Node::Set(set))
    }

    fn repetition(&mut self, atom: NodeId) -> Result<NodeId, String> {
        let c = self.s[self.pos];
        self.pos += 1;
        let (min, max) = match c {
            b'*' => (0, None),
            b'+' => (1, None),
            b'?' => (0, Some(1)),
            _ => self.counts()?,
        };
        Ok(self.add(Node::Repeat { inner: atom, min, max }))
    }

    /// `{m}`, `{m,}`, `{m,n}` after the opening brace.
    fn counts(&mut self) -> Result<(u32, Option<u32>), String> {
        let min = self.count()?;
        let max = if self.eat(b',') {
            if self.peek().is_some_and(|d| d.is_ascii_digit()) {
                let max = self.count()?;
                if min > max {
                    return Err(BADBR.into());
                }
                Some(max)
            } else {
                None
            }
        } else {
            Some(min)
        };
        if !self.eat(b'}') {
            while self.more() && self.peek() != Some(b'}') {
                self.pos += 1;
            }
            return Err(if self.more() { BADBR } else { EBRACE }.into());
        }
        Ok((min, max))
    }

    fn count(&mut self) -> Result<u32, String> {
        let mut n: u32 = 0;
        let mut digits = 0;
        while let Some(d) = self.peek().filter(u8::is_ascii_digit) {
            if n > DUP_MAX {
                break;
            }
            n = n * 10 + (d - b'0') as u32;
            digits += 1;
            self.pos += 1;
        }
        if digits == 0 || n > DUP_MAX {
            return Err(BADBR.into());
        }
        Ok(n)
    }

    /// `p_bracket`, called after the opening `[`.
    fn bracket(&mut self) -> Result<NodeId, String> {
        let rest = &self.s[self.pos..];
        if rest.len() > 5 && rest.starts_with(b"[:<:]]") {
            self.pos += 6;
            return Ok(self.add(Node::Bow));
        }
        if rest.len() > 5 && rest.starts_with(b"[:>:]]") {
            self.pos += 6;
            return Ok(self.add(Node::Eow));
        }
        let mut set = ByteSet::default();
        let invert = self.eat(b'^');
        if self.eat(b']') {
            set.insert(b']');
        } else if self.eat(b'-') {
            set.insert(b'-');
        }
        while self.more() && self.peek() != Some(b']') && !self.see_two(b'-', b']') {
            self.bracket_term(&mut set)?;
        }
        if self.eat(b'-') {
            set.insert(b'-');
        }
        if !self.eat(b']') {
            return Err(EBRACK.into());
        }
        if self.icase {
            set.add_other_cases();
        }
        if invert {
            set.negate();
            set.remove(b'\n');
        }
        Ok(self.add(Node::Set(set)))
    }

    /// `p_b_term`: a class, equivalence class, symbol or range inside brackets.
    fn bracket_term(&mut self, set: &mut ByteSet) -> Result<(), String> {
        let c = match self.peek() {
            Some(b'[') => self.peek2(),
            Some(b'-') => return Err(ERANGE.into()),
            _ => None,
        };
        match c {
            Some(b':') => {
                self.pos += 2;
                self.char_class(set)
            }
            Some(b'=') => {
                self.pos += 2;
                if !self.more() {
                    return Err(EBRACK.into());
                }
                if matches!(self.peek(), Some(b'-' | b']')) {
                    return Err(ECOLLATE.into());
                }
                let c = self.collating_element(b'=')?;
                set.insert(c);
                if !self.eat_two(b'=', b']') {
                    return Err(ECOLLATE.into());
                }
                Ok(())
            }
            _ => self.range(set),
        }
    }

    fn range(&mut self, set: &mut ByteSet) -> Result<(), String> {
        self.lint_bracket_escape()?;
        let start = self.symbol()?;
        let finish = if self.peek() == Some(b'-') && self.peek2().is_some_and(|c| c != b']') {
            self.pos += 1;
            if self.eat(b'-') {
                b'-'
            } else {
                self.symbol()?
            }
        } else {
            start
        };
        if start > finish {
            return Err(ERANGE.into());
        }
        for b in start..=finish {
            set.insert(b);
        }
        Ok(())
    }

    /// In lint mode, rejects `[\d]` and friends: POSIX treats the backslash literally.
    fn lint_bracket_escape(&self) -> Result<(), String> {
        if self.mode != ParseMode::Lint || self.peek() != Some(b'\\') {
            return Ok(());
        }
        match self.peek2() {
            Some(c) if c.is_ascii_alphabetic() => Err(format!(
                "'\\{}' inside a bracket expression is a backslash and the letter '{}' in POSIX \
                 regexes; use a POSIX class such as [[:digit:]], [[:space:]] or [[:alnum:]]",
                c as char, c as char
            )),
            _ => Ok(()),
        }
    }

    /// `p_b_symbol`: a single character or a `[.x.]` collating element.
    fn symbol(&mut self) -> Result<u8, String> {
        if !self.eat_two(b'[', b'.') {
            let Some(c) = self.peek() else {
                return Err(EBRACK.into());
            };
            self.pos += 1;
            return Ok(c);
        }
        let c = self.collating_element(b'.')?;
        if !self.eat_two(b'.', b']') {
            return Err(ECOLLATE.into());
        }
        Ok(c)
    }

    fn collating_element(&mut self, end: u8) -> Result<u8, String> {
        let start = self.pos;
        while self.more() && !self.see_two(end, b']') {
            self.pos += 1;
        }
        if !self.more() {
            return Err(EBRACK.into());
        }
        let name = &self.s[start..self.pos];
        match name {
            [c] => Ok(*c),
            _ => collating_name(name).ok_or_else(|| ECOLLATE.to_string()),
        }
    }

    fn char_class(&mut self, set: &mut ByteSet) -> Result<(), String> {
        if !self.more() {
            return Err(EBRACK.into());
        }
        if matches!(self.peek(), Some(b'-' | b']')) {
            return Err(ECTYPE.into());
        }
        let start = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_alphabetic()) {
            self.pos += 1;
        }
        let pred = class_predicate(&self.s[start..self.pos]).ok_or(ECTYPE)?;
        for b in 0..=255u8 {
            if pred(b) {
                set.insert(b);
            }
        }
        if !self.more() {
            return Err(EBRACK.into());
        }
        if !self.eat_two(b':', b']') {
            return Err(ECTYPE.into());
        }
        Ok(())
    }
}

fn perl_escape_message(c: u8) -> String {
    let hint = match c {
        b'd' => "; use [0-9] or [[:digit:]]",
        b'D' => "; use [^0-9]",
        b'w' => "; use [[:alnum:]_]",
        b'W' => "; use [^[:alnum:]_]",
        b's' => "; use [[:space:]] or a literal space",
        b'S' => "; use [^[:space:]]",
        b'b' | b'B' => "; word boundaries are not supported",
        b'n' | b't' | b'r' => "; patterns never span lines, match whitespace with [[:space:]]",
        _ => "",
    };
    format!(
        "'\\{}' is not supported: LLVM FileCheck regexes are POSIX ERE, where it matches the \
         literal letter '{}'{hint}",
        c as char, c as char
    )
}

fn collating_name(name: &[u8]) -> Option<u8> {
    const NAMES: &[(&str, u8)] = &[
        ("NUL", 0),
        ("tab", b'\t'),
        ("newline", b'\n'),
        ("space", b' '),
        ("hyphen", b'-'),
        ("hyphen-minus", b'-'),
        ("period", b'.'),
        ("full-stop", b'.'),
        ("slash", b'/'),
        ("backslash", b'\\'),
        ("underscore", b'_'),
        ("left-square-bracket", b'['),
        ("right-square-bracket", b']'),
    ];
    NAMES.iter().find(|(n, _)| n.as_bytes() == name).map(|&(_, c)| c)
}

fn class_predicate(name: &[u8]) -> Option<fn(u8) -> bool> {
    Some(match name {
        b"alnum" => |b: u8| b.is_ascii_alphanumeric(),
        b"alpha" => |b: u8| b.is_ascii_alphabetic(),
        b"blank" => |b: u8| b == b' ' || b == b'\t',
        b"cntrl" => |b: u8| b.is_ascii_control(),
        b"digit" => |b: u8| b.is_ascii_digit(),
        b"graph" => |b: u8| b.is_ascii_graphic(),
        b"lower" => |b: u8| b.is_ascii_lowercase(),
        b"print" => |b: u8| b.is_ascii_graphic() || b == b' ',
        b"punct" => |b: u8| b.is_ascii_punctuation(),
        b"space" => |b: u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c),
        b"upper" => |b: u8| b.is_ascii_uppercase(),
        b"xdigit" => |b: u8| b.is_ascii_hexdigit(),
        _ => return None,
    })
}

/// Escapes the POSIX metacharacters of `text` (LLVM's `Regex::escape`).
pub(crate) fn escape(text: &[u8], out: &mut Vec<u8>) {
    for &b in text {
        if b"()^$|*+?.[]\\{}".contains(&b) {
            out.push(b'\\');
        }
        out.push(b);
    }
}

/// Translates the AST into `regex` crate syntax (bytes mode, no Unicode) that matches a superset
/// of the ERE's language with the same leftmost start: used as a fast prefilter to find where a
/// match starts. Back-references become "anything".
pub(crate) fn to_regex_syntax(ere: &Ere) -> String {
    let mut out = String::from("(?-u)");
    emit(ere, ere.root, &mut out);
    out
}

fn emit(ere: &Ere, id: NodeId, out: &mut String) {
    match &ere.nodes[id] {
        Node::Empty => out.push_str("(?:)"),
        Node::Set(set) => emit_set(set, out),
        Node::Bol => out.push_str("(?m:^)"),
        Node::Eol => out.push_str("(?m:$)"),
        Node::Bow | Node::Eow => out.push_str("\\b"),
        Node::Group(_, inner) => {
            out.push_str("(?:");
            emit(ere, *inner, out);
            out.push(')');
        }
        Node::Concat(children) => children.iter().for_each(|&c| emit(ere, c, out)),
        Node::Alt(alts) => {
            out.push_str("(?:");
            for (i, &a) in alts.iter().enumerate() {
                if i > 0 {
                    out.push('|');
                }
                emit(ere, a, out);
            }
            out.push(')');
        }
        Node::Repeat { inner, min, max } => {
            out.push_str("(?:");
            emit(ere, *inner, out);
            out.push(')');
            match max {
                Some(max) => {
                    let _ = write!(out, "{{{min},{max}}}");
                }
                None => {
                    let _ = write!(out, "{{{min},}}");
                }
            }
        }
        Node::Backref(_) => out.push_str("(?s:.)*"),
    }
}

fn emit_set(set: &ByteSet, out: &mut String) {
    if let Some(b) = set.as_single() {
        let _ = write!(out, "\\x{b:02X}");
        return;
    }
    let ranges = set.ranges();
    if ranges.is_empty() {
        out.push_str("[^\\x00-\\xFF]");
        return;
    }
    out.push('[');
    for (lo, hi) in ranges {
        let _ = write!(out, "\\x{lo:02X}");
        if hi != lo {
            let _ = write!(out, "-\\x{hi:02X}");
        }
    }
    out.push(']');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(p: &str) -> String {
        parse(p.as_bytes(), false, ParseMode::Lint).unwrap_err()
    }

    #[test]
    fn spencer_errors() {
        assert_eq!(err("a**"), BADRPT);
        assert_eq!(err("a*?"), BADRPT);
        assert_eq!(err("(?=a)"), BADRPT);
        assert_eq!(err(""), EMPTY);
        assert_eq!(err("a|"), EMPTY);
        assert_eq!(err("(a"), EPAREN);
        assert_eq!(err("a)"), EPAREN);
        assert_eq!(err("[a"), EBRACK);
        assert_eq!(err("[[:foo:]]"), ECTYPE);
        assert_eq!(err("[z-a]"), ERANGE);
        assert_eq!(err("a{3,1}"), BADBR);
        assert_eq!(err("a{256}"), BADBR);
        assert_eq!(err("\\1"), ESUBREG);
        assert_eq!(err("^*"), BADRPT);
        assert_eq!(err("a\\"), EESCAPE);
    }

    #[test]
    fn lint_rejects_perl_escapes() {
        for p in ["\\d+", "\\w", "\\s", "\\b", "[\\d]"] {
            assert!(parse(p.as_bytes(), false, ParseMode::Lint).is_err(), "{p}");
            assert!(parse(p.as_bytes(), false, ParseMode::Llvm).is_ok(), "{p}");
        }
        assert!(parse(b"\\.\\[\\]\\{", false, ParseMode::Lint).is_ok());
    }

    #[test]
    fn groups_and_classes() {
        let e = parse(b"(a|b)([[:digit:]]+)\\2{a,", false, ParseMode::Llvm).unwrap();
        assert_eq!(e.ngroups, 2);
        assert!(e.has_backrefs);
        let e = parse(b"()", false, ParseMode::Llvm).unwrap();
        assert_eq!(e.ngroups, 1);
    }

    #[test]
    fn translation_compiles() {
        for p in ["a|ab", "[^a]*x{2,3}", "^foo$", "[[:<:]]w", "(a)\\1", "()"] {
            let e = parse(p.as_bytes(), true, ParseMode::Llvm).unwrap();
            let s = to_regex_syntax(&e);
            assert!(regex::bytes::Regex::new(&s).is_ok(), "{p} -> {s}");
        }
    }
}
