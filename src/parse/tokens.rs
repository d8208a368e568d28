//! The token adapter between the lexer and the grammar: turns lexer errors into `Error` tokens (so the parser
//! can recover), marks dotted identifiers that begin a pretty-form op as `OpName`, inserts `EndOp` where such an
//! op ends, and stops at a nesting limit so that no input can exhaust the stack later on.
//!
//! **Pretty-op extent rule:** a pretty op ends at the first line break (or closing bracket) at the bracket depth
//! where its name stood. Brackets opened on its line (a region `{`) extend it across lines.

use super::lexer::Token;
use crate::ir::{Diagnostic, FileId, Loc};
use logos::Logos;
use std::collections::VecDeque;

/// Deepest bracket nesting accepted.
pub const MAX_NESTING: usize = 256;

/// A token with its byte span.
pub type Spanned<'s> = (usize, Token<'s>, usize);

/// The adapter: an iterator of spanned tokens for the lalrpop parser.
pub struct Tokens<'s> {
    lexer: logos::Lexer<'s, Token<'s>>,
    source: &'s str,
    file: FileId,
    base: usize,
    lookahead: VecDeque<Spanned<'s>>,
    out: VecDeque<Spanned<'s>>,
    prev_end: usize,
    depth: usize,
    /// Angle brackets open at the position.
    angles: usize,
    open_ops: Vec<usize>,
    /// Lexical problems found so far.
    pub diags: Vec<Diagnostic>,
    /// Offset where lexing stopped early (nesting limit); parse errors after it are consequences.
    pub fatal_at: Option<usize>,
    done: bool,
}

impl<'s> Tokens<'s> {
    /// Tokens of `source`, whose first byte is at offset `base` of `file`.
    pub fn new(source: &'s str, file: FileId, base: usize) -> Self {
        Tokens {
            lexer: Token::lexer(source),
            source,
            file,
            base,
            lookahead: VecDeque::new(),
            out: VecDeque::new(),
            prev_end: 0,
            depth: 0,
            angles: 0,
            open_ops: Vec::new(),
            diags: Vec::new(),
            fatal_at: None,
            done: false,
        }
    }

    fn loc(&self, offset: usize) -> Loc {
        Loc::Source { file: self.file, offset: (self.base + offset) as u32 }
    }

    fn lex_one(&mut self) -> Option<Spanned<'s>> {
        if let Some(t) = self.lookahead.pop_front() {
            return Some(t);
        }
        let mut tok = self.lexer.next()?;
        while tok == Ok(Token::Trivia) {
            tok = self.lexer.next()?;
        }
        let span = self.lexer.span();
        let tok = match tok {
            Ok(t) => t,
            Err(()) => {
                let msg = self.lex_error_message(span.start);
                self.diags.push(Diagnostic::error(self.loc(span.start), msg));
                Token::Error
            }
        };
        Some((span.start, tok, span.end))
    }

    fn lex_error_message(&self, at: usize) -> String {
        let rest = &self.source[at..];
        match rest.chars().next() {
            Some('"') => "expected '\"' in string literal".into(),
            Some('#') | Some('!') if rest.contains('<') => "unbalanced '<' in dialect attribute or type body".into(),
            Some(c) => format!("unexpected character '{}'", c.escape_default()),
            None => "unexpected end of input".into(),
        }
    }

    fn peek(&mut self) -> Option<Token<'s>> {
        if self.lookahead.is_empty() {
            let t = self.lex_one()?;
            self.lookahead.push_back(t);
        }
        self.lookahead.front().map(|t| t.1)
    }

    /// A dotted bare identifier starts a pretty op unless it reads as a dictionary key.
    fn classify(&mut self, tok: Spanned<'s>) -> Spanned<'s> {
        let (start, t, end) = tok;
        let Token::BareId(word) = t else { return tok };
        if !word.contains('.') {
            return tok;
        }
        let next_start = self.lookahead_start();
        let key = match self.peek() {
            Some(Token::Equal | Token::Comma | Token::Greater) => true,
            Some(Token::RBrace) => !self.source[end..next_start].contains('\n'),
            _ => false,
        };
        if key {
            tok
        } else {
            (start, Token::OpName(word), end)
        }
    }

    fn lookahead_start(&mut self) -> usize {
        self.peek();
        self.lookahead.front().map_or(self.source.len(), |t| t.0)
    }

    fn produce(&mut self) {
        let Some(tok) = self.lex_one() else {
            while self.open_ops.pop().is_some() {
                self.out.push_back((self.source.len(), Token::EndOp, self.source.len()));
            }
            self.done = true;
            return;
        };
        let tok = self.classify(tok);
        self.close_ops_before(&tok);
        self.track_depth(&tok);
        if self.done {
            return;
        }
        if let Token::OpName(_) = tok.1 {
            self.open_ops.push(self.depth);
        }
        self.prev_end = tok.2;
        self.out.push_back(tok);
    }

    fn close_ops_before(&mut self, tok: &Spanned<'s>) {
        let newline = self.source[self.prev_end..tok.0].contains('\n');
        while let Some(&d) = self.open_ops.last() {
            let ends = d == self.depth && (newline || tok.1.is_closer());
            if !ends {
                break;
            }
            self.open_ops.pop();
            self.out.push_back((self.prev_end, Token::EndOp, self.prev_end));
        }
    }

    fn track_depth(&mut self, tok: &Spanned<'s>) {
        // A dialect body is one token: its own brackets count too (the dialect's parser recurses on them).
        let inner = match tok.1 {
            Token::HashBody(body) | Token::BangBody(body) => deepest_bracket(body),
            _ => 0,
        };
        // Angle brackets (`tuple<tuple<...>>`) nest too; they are counted apart, as they do not extend a pretty op.
        match tok.1 {
            Token::Less => self.angles += 1,
            Token::Greater => self.angles = self.angles.saturating_sub(1),
            _ => {}
        }
        let inner = inner + self.angles;
        if tok.1.is_opener() || self.depth + inner > MAX_NESTING {
            self.depth += usize::from(tok.1.is_opener());
            if self.depth + inner > MAX_NESTING {
                let msg = format!("nesting is too deep (more than {MAX_NESTING} levels of brackets)");
                self.diags.push(Diagnostic::error(self.loc(tok.0), msg));
                self.done = true;
                // Errors the parser reports from here on (from the end of the previous token) are its cut-off.
                self.fatal_at = Some(self.base + self.prev_end.min(tok.0));
                self.out.clear();
            }
        } else if tok.1.is_closer() {
            self.depth = self.depth.saturating_sub(1);
        }
    }
}

/// The deepest bracket nesting inside `text` (`(`, `[`, `{`, `<` against their closers).
fn deepest_bracket(text: &str) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    for b in text.bytes() {
        match b {
            b'(' | b'[' | b'{' | b'<' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b')' | b']' | b'}' | b'>' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

impl<'s> Iterator for Tokens<'s> {
    type Item = Result<Spanned<'s>, Diagnostic>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(t) = self.out.pop_front() {
            return Some(Ok(t));
        }
        if let Some(t) = self.fast_path() {
            return Some(Ok(t));
        }
        while self.out.is_empty() && !self.done {
            self.produce();
        }
        self.out.pop_front().map(Ok)
    }
}

impl<'s> Tokens<'s> {
    /// Outside pretty ops, most tokens need no look-ahead or bookkeeping beyond the bracket depth.
    fn fast_path(&mut self) -> Option<Spanned<'s>> {
        if self.done || !self.open_ops.is_empty() || !self.lookahead.is_empty() {
            return None;
        }
        let tok = self.lex_one()?;
        let simple = match tok.1 {
            Token::BareId(w) => !w.contains('.'),
            Token::HashBody(_) | Token::BangBody(_) | Token::Less | Token::Greater => false,
            t => !t.is_opener() && !t.is_closer(),
        };
        if simple {
            self.prev_end = tok.2;
            return Some(tok);
        }
        self.lookahead.push_front(tok);
        None
    }
}
