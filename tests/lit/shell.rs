//! Syntax of lit's internal shell: a lexer and parser for one RUN line (words with quotes and escapes,
//! pipelines, `&&` / `||` / `;` lists and redirections), modeled on lit's `ShUtil.py`.

use std::fmt;

/// A lexical token of a RUN line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Token {
    /// A word with quotes removed and escapes applied.
    Word(String),
    /// `;`, `|`, `||`, `&`, `&&`.
    Op(&'static str),
    /// A redirection operator (`>`, `>>`, `<`, `>&`, `<&`, `&>`) with its explicit file descriptor (`2>`).
    Redir(Option<u32>, &'static str),
}

/// How a redirection treats its target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedirOp {
    /// `N> file` (N defaults to 1).
    Write,
    /// `N>> file`.
    Append,
    /// `N< file` (N defaults to 0).
    Read,
    /// `N>&M`: descriptor N becomes a copy of descriptor M.
    Dup,
    /// `&> file`: stdout and stderr both go to the file.
    Both,
}

/// One redirection of a simple command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    pub fd: Option<u32>,
    pub op: RedirOp,
    pub target: String,
}

/// A simple command: words and redirections.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    pub args: Vec<String>,
    pub redirects: Vec<Redirect>,
}

/// Commands joined by `|`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pipeline {
    pub commands: Vec<Command>,
}

/// The operator joining two pipelines of a list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListOp {
    /// `;`: run the right side unconditionally.
    Seq,
    /// `&&`: run the right side iff the left side succeeded.
    And,
    /// `||`: run the right side iff the left side failed.
    Or,
}

/// A whole RUN line. Like lit (and unlike POSIX sh), `&&`, `||` and `;` have equal precedence and associate
/// to the left: `a && b || c` is `(a && b) || c`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct List {
    pub first: Pipeline,
    pub rest: Vec<(ListOp, Pipeline)>,
}

/// Splits a RUN line into tokens. Outside quotes `\` escapes any character; inside `'…'` nothing is special;
/// inside `"…"` only `\"` and `\\` are escapes (other backslashes are kept), as in lit's `ShLexer`.
pub fn lex(line: &str) -> Result<Vec<Token>, String> {
    let chars: Vec<char> = line.chars().collect();
    let mut pos = 0;
    let mut out = Vec::new();
    while pos < chars.len() {
        let c = chars[pos];
        if c.is_whitespace() {
            pos += 1;
            continue;
        }
        if let Some((tok, len)) = operator_at(&chars, pos) {
            out.push(tok);
            pos += len;
            continue;
        }
        // A word (possibly a redirection's descriptor number).
        let mut word = String::new();
        let mut quoted = false;
        while pos < chars.len() {
            let c = chars[pos];
            if c.is_whitespace() || matches!(c, '|' | '&' | ';') {
                break;
            }
            if matches!(c, '<' | '>') {
                if !quoted && !word.is_empty() && word.chars().all(|d| d.is_ascii_digit()) {
                    let fd = word.parse::<u32>().map_err(|_| format!("bad file descriptor '{word}'"))?;
                    let (tok, len) = operator_at(&chars, pos).expect("redirection operator");
                    let Token::Redir(None, op) = tok else { unreachable!() };
                    pos += len;
                    word.clear();
                    out.push(Token::Redir(Some(fd), op));
                    break;
                }
                break;
            }
            match c {
                '\'' => {
                    quoted = true;
                    pos += 1;
                    loop {
                        match chars.get(pos) {
                            None => return Err(format!("missing closing ' in: {line}")),
                            Some('\'') => break,
                            Some(&ch) => word.push(ch),
                        }
                        pos += 1;
                    }
                    pos += 1;
                }
                '"' => {
                    quoted = true;
                    pos += 1;
                    loop {
                        match chars.get(pos) {
                            None => return Err(format!("missing closing \" in: {line}")),
                            Some('"') => break,
                            Some('\\') => {
                                pos += 1;
                                match chars.get(pos) {
                                    None => return Err(format!("missing closing \" in: {line}")),
                                    Some(&ch @ ('"' | '\\')) => word.push(ch),
                                    Some(&ch) => {
                                        word.push('\\');
                                        word.push(ch);
                                    }
                                }
                            }
                            Some(&ch) => word.push(ch),
                        }
                        pos += 1;
                    }
                    pos += 1;
                }
                '\\' => {
                    quoted = true;
                    pos += 1;
                    match chars.get(pos) {
                        Some(&ch) => word.push(ch),
                        None => return Err(format!("escape at end of line: {line}")),
                    }
                    pos += 1;
                }
                _ => {
                    word.push(c);
                    pos += 1;
                }
            }
        }
        if !word.is_empty() || quoted {
            out.push(Token::Word(word));
        }
    }
    Ok(out)
}

/// The operator token starting at `pos`, with its length in characters.
fn operator_at(chars: &[char], pos: usize) -> Option<(Token, usize)> {
    let next = chars.get(pos + 1).copied();
    Some(match (chars[pos], next) {
        (';', _) => (Token::Op(";"), 1),
        ('|', Some('|')) => (Token::Op("||"), 2),
        ('|', _) => (Token::Op("|"), 1),
        ('&', Some('&')) => (Token::Op("&&"), 2),
        ('&', Some('>')) => (Token::Redir(None, "&>"), 2),
        ('&', _) => (Token::Op("&"), 1),
        ('>', Some('&')) => (Token::Redir(None, ">&"), 2),
        ('>', Some('>')) => (Token::Redir(None, ">>"), 2),
        ('>', _) => (Token::Redir(None, ">"), 1),
        ('<', Some('&')) => (Token::Redir(None, "<&"), 2),
        ('<', _) => (Token::Redir(None, "<"), 1),
        _ => return None,
    })
}

/// Parses a RUN line into a list of pipelines.
pub fn parse(line: &str) -> Result<List, String> {
    let tokens = lex(line)?;
    let mut p = Parser { tokens, pos: 0 };
    let first = p.pipeline()?;
    let mut rest = Vec::new();
    while let Some(tok) = p.next() {
        let op = match tok {
            Token::Op(";") => ListOp::Seq,
            Token::Op("&&") => ListOp::And,
            Token::Op("||") => ListOp::Or,
            Token::Op("&") => return Err("unsupported shell operator: '&'".into()),
            other => return Err(format!("syntax error near unexpected token {}", other)),
        };
        if p.peek().is_none() {
            if op == ListOp::Seq {
                break; // a trailing `;` is harmless
            }
            return Err(format!("missing command after operator '{}'", tok_text(&tok)));
        }
        rest.push((op, p.pipeline()?));
    }
    Ok(List { first, rest })
}

fn tok_text(t: &Token) -> String {
    t.to_string()
}

struct Parser {
    tokens: Vec<Token>,
    pos: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.pos)
    }

    fn next(&mut self) -> Option<Token> {
        let t = self.tokens.get(self.pos).cloned();
        self.pos += 1;
        t
    }

    fn pipeline(&mut self) -> Result<Pipeline, String> {
        let mut commands = vec![self.command()?];
        while self.peek() == Some(&Token::Op("|")) {
            self.pos += 1;
            commands.push(self.command()?);
        }
        Ok(Pipeline { commands })
    }

    fn command(&mut self) -> Result<Command, String> {
        let mut args = Vec::new();
        let mut redirects = Vec::new();
        loop {
            match self.peek() {
                None | Some(Token::Op(_)) => break,
                Some(Token::Word(w)) => {
                    args.push(w.clone());
                    self.pos += 1;
                }
                Some(&Token::Redir(fd, op)) => {
                    self.pos += 1;
                    let Some(Token::Word(target)) = self.next() else {
                        return Err(format!("syntax error: redirection '{op}' without a target"));
                    };
                    let op = match op {
                        ">" => RedirOp::Write,
                        ">>" => RedirOp::Append,
                        "<" => RedirOp::Read,
                        ">&" => RedirOp::Dup,
                        "&>" => RedirOp::Both,
                        other => return Err(format!("unsupported redirection '{other}'")),
                    };
                    redirects.push(Redirect { fd, op, target });
                }
            }
        }
        if args.is_empty() {
            return Err(match self.peek() {
                Some(t) => format!("syntax error near unexpected token {t}"),
                None => "empty command".into(),
            });
        }
        Ok(Command { args, redirects })
    }
}

impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Token::Word(w) => write!(f, "{}", quote(w)),
            Token::Op(o) => write!(f, "'{o}'"),
            Token::Redir(Some(fd), o) => write!(f, "'{fd}{o}'"),
            Token::Redir(None, o) => write!(f, "'{o}'"),
        }
    }
}

/// Quotes `word` for display so that it lexes back to itself.
pub fn quote(word: &str) -> String {
    let plain = !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%^{}[]#~".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

impl fmt::Display for Redirect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(fd) = self.fd {
            write!(f, "{fd}")?;
        }
        let op = match self.op {
            RedirOp::Write => ">",
            RedirOp::Append => ">>",
            RedirOp::Read => "<",
            RedirOp::Dup => ">&",
            RedirOp::Both => "&>",
        };
        write!(f, "{op}{}", quote(&self.target))
    }
}
