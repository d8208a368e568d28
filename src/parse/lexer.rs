//! The logos lexer: MLIR's tokens (sigiled identifiers, numbers, strings, punctuation, type and attribute
//! keywords). Dialect attribute and type bodies (`#d.name<...>`, `!d.name<...>`) are lexed as one token whose
//! body the dialect parses itself.

use logos::Logos;

/// A token of the textual IR.
#[derive(Logos, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Token<'s> {
    /// Whitespace or a `//` comment. A token, not a logos `skip`: logos skips by calling its lexer again, one
    /// nested call per skipped run, so 30k comment lines overflowed the stack; the token adapter drops these in a
    /// loop instead.
    #[regex(r"[ \t\r\n\f]+")]
    #[regex(r"//[^\n]*", allow_greedy = true)]
    Trivia,
    /// `%name`, `%0`, `%r#1`.
    #[regex(r"%[a-zA-Z0-9_$.\-]+(#[0-9]+)?")]
    ValueId(&'s str),
    /// `^bb0`.
    #[regex(r"\^[a-zA-Z0-9_$.\-]+")]
    CaretId(&'s str),
    /// `@name` or `@"quoted name"`.
    #[regex(r"@[a-zA-Z_$.\-][a-zA-Z0-9_$.\-]*")]
    #[regex(r#"@"([^"\\\n]|\\[^\n])*""#)]
    AtId(&'s str),
    /// `#alias` or `#dialect.name` (no body).
    #[regex(r"#[a-zA-Z_$.][a-zA-Z0-9_$.\-]*")]
    HashId(&'s str),
    /// `#dialect.name<body>`: the slice is the whole token.
    #[regex(r"#[a-zA-Z_][a-zA-Z0-9_$]*\.[a-zA-Z0-9_$.]*<", dialect_body)]
    HashBody(&'s str),
    /// `!alias` or `!dialect.name` (no body).
    #[regex(r"![a-zA-Z_$.][a-zA-Z0-9_$.\-]*")]
    BangId(&'s str),
    /// `!dialect.name<body>`: the slice is the whole token.
    #[regex(r"![a-zA-Z_][a-zA-Z0-9_$]*\.[a-zA-Z0-9_$.]*<", dialect_body)]
    BangBody(&'s str),
    /// A bare identifier (possibly dotted).
    #[regex(r"[a-zA-Z_][a-zA-Z0-9_$.]*")]
    BareId(&'s str),
    /// A dotted identifier that starts a pretty-form op (set by the token adapter, never by the lexer).
    OpName(&'s str),
    /// `i1`, `i32`, ...
    #[regex(r"i[0-9]+", priority = 3)]
    IntType(&'s str),
    /// `bf16`, `f16`, `f32`, `f64`.
    #[regex(r"bf16|f16|f32|f64", priority = 3)]
    FloatType(&'s str),
    /// A decimal integer.
    #[regex(r"[0-9]+")]
    Int(&'s str),
    /// A hexadecimal integer `0x1F`.
    #[regex(r"0x[0-9a-fA-F]+")]
    HexInt(&'s str),
    /// A float literal `1.5`, `2.0e-3`.
    #[regex(r"[0-9]+\.[0-9]*([eE][-+]?[0-9]+)?")]
    Float(&'s str),
    /// A static dimension list prefix `4x8x` (as in `tensor<4x8xf32>`).
    #[regex(r"([0-9]+x)+")]
    Dims(&'s str),
    /// A string literal, quotes included.
    #[regex(r#""([^"\\\n]|\\[^\n])*""#)]
    String(&'s str),
    /// `loc`.
    #[token("loc")]
    Loc,
    /// `true`.
    #[token("true")]
    True,
    /// `false`.
    #[token("false")]
    False,
    /// `unit`.
    #[token("unit")]
    Unit,
    /// `dense`.
    #[token("dense")]
    Dense,
    /// `affine_map`.
    #[token("affine_map")]
    AffineMap,
    /// `tensor`.
    #[token("tensor")]
    Tensor,
    /// `tuple`.
    #[token("tuple")]
    Tuple,
    /// `none`.
    #[token("none")]
    NoneType,
    /// `index`.
    #[token("index")]
    Index,
    /// `floordiv`.
    #[token("floordiv")]
    FloorDiv,
    /// `ceildiv`.
    #[token("ceildiv")]
    CeilDiv,
    /// `mod`.
    #[token("mod")]
    Mod,
    /// `attributes`.
    #[token("attributes")]
    Attributes,
    /// `(`.
    #[token("(")]
    LParen,
    /// `)`.
    #[token(")")]
    RParen,
    /// `[`.
    #[token("[")]
    LSquare,
    /// `]`.
    #[token("]")]
    RSquare,
    /// `{`.
    #[token("{")]
    LBrace,
    /// `}`.
    #[token("}")]
    RBrace,
    /// `<`.
    #[token("<")]
    Less,
    /// `>`.
    #[token(">")]
    Greater,
    /// `,`.
    #[token(",")]
    Comma,
    /// `:`.
    #[token(":")]
    Colon,
    /// `::`.
    #[token("::")]
    ColonColon,
    /// `=`.
    #[token("=")]
    Equal,
    /// `->`.
    #[token("->")]
    Arrow,
    /// `+`.
    #[token("+")]
    Plus,
    /// `-`.
    #[token("-")]
    Minus,
    /// `*`.
    #[token("*")]
    Star,
    /// `?`.
    #[token("?")]
    Question,
    /// `...`.
    #[token("...")]
    Ellipsis,
    /// The end of a pretty-form op (inserted by the token adapter).
    EndOp,
    /// A character that starts no token (inserted by the adapter so the parser can recover).
    Error,
}

/// Consumes a dialect body up to its matching `>`, skipping nested brackets, strings and `->`.
fn dialect_body<'s>(lex: &mut logos::Lexer<'s, Token<'s>>) -> Option<&'s str> {
    let rest = lex.remainder().as_bytes();
    let mut depth = 1usize;
    let mut i = 0;
    while i < rest.len() {
        match rest[i] {
            b'"' => i = skip_string(rest, i)?,
            b'-' if rest.get(i + 1) == Some(&b'>') => i += 1,
            b'<' | b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth = depth.checked_sub(1).filter(|&d| d > 0)?,
            b'>' => {
                depth -= 1;
                if depth == 0 {
                    lex.bump(i + 1);
                    return Some(lex.slice());
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

fn skip_string(bytes: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 1,
            b'"' => return Some(i),
            b'\n' => return None,
            _ => {}
        }
        i += 1;
    }
    None
}

impl Token<'_> {
    /// How the token is spelled in messages.
    pub fn describe(&self) -> String {
        match self {
            Token::ValueId(s)
            | Token::CaretId(s)
            | Token::AtId(s)
            | Token::HashId(s)
            | Token::HashBody(s)
            | Token::BangId(s)
            | Token::BangBody(s)
            | Token::BareId(s)
            | Token::OpName(s)
            | Token::IntType(s)
            | Token::FloatType(s)
            | Token::Int(s)
            | Token::HexInt(s)
            | Token::Float(s)
            | Token::Dims(s)
            | Token::String(s) => format!("'{s}'"),
            Token::EndOp => "end of line".into(),
            Token::Error => "invalid character".into(),
            other => format!("'{}'", other.fixed_text()),
        }
    }

    fn fixed_text(&self) -> &'static str {
        match self {
            Token::Loc => "loc",
            Token::True => "true",
            Token::False => "false",
            Token::Unit => "unit",
            Token::Dense => "dense",
            Token::AffineMap => "affine_map",
            Token::Tensor => "tensor",
            Token::Tuple => "tuple",
            Token::NoneType => "none",
            Token::Index => "index",
            Token::FloorDiv => "floordiv",
            Token::CeilDiv => "ceildiv",
            Token::Mod => "mod",
            Token::Attributes => "attributes",
            Token::LParen => "(",
            Token::RParen => ")",
            Token::LSquare => "[",
            Token::RSquare => "]",
            Token::LBrace => "{",
            Token::RBrace => "}",
            Token::Less => "<",
            Token::Greater => ">",
            Token::Comma => ",",
            Token::Colon => ":",
            Token::ColonColon => "::",
            Token::Equal => "=",
            Token::Arrow => "->",
            Token::Plus => "+",
            Token::Minus => "-",
            Token::Star => "*",
            Token::Question => "?",
            Token::Ellipsis => "...",
            _ => "",
        }
    }

    /// True for `(`, `[`, `{`.
    pub fn is_opener(&self) -> bool {
        matches!(self, Token::LParen | Token::LSquare | Token::LBrace)
    }

    /// True for `)`, `]`, `}`.
    pub fn is_closer(&self) -> bool {
        matches!(self, Token::RParen | Token::RSquare | Token::RBrace)
    }
}
