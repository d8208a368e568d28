//! The logos lexer for layout attribute bodies, shared by the four notations (CuTe, Furiosa, XLA, CK).

use logos::Logos;

/// A token of a layout attribute body.
#[derive(Logos, Clone, Copy, Debug, PartialEq, Eq)]
#[logos(skip r"[ \t\r\n\f]+")]
pub enum Tok<'s> {
    /// A decimal integer (unsigned; `-` is its own token).
    #[regex(r"[0-9]+")]
    Int(&'s str),
    /// An identifier.
    #[regex(r"[A-Za-z_][A-Za-z0-9_]*")]
    Ident(&'s str),
    /// `Sw`, CuTe's swizzle functor.
    #[token("Sw", priority = 3)]
    Sw,
    /// `o`, CuTe's composition when printing composed layouts.
    #[token("o", priority = 3)]
    O,
    /// `axes`, Furiosa's axis declarations.
    #[token("axes", priority = 3)]
    Axes,
    /// `m`, a Furiosa mapping.
    #[token("m", priority = 3)]
    M,
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
    /// `-`.
    #[token("-")]
    Minus,
    /// `->`.
    #[token("->")]
    Arrow,
    /// `=`.
    #[token("=")]
    Equal,
    /// `/`.
    #[token("/")]
    Slash,
    /// `%`.
    #[token("%")]
    Percent,
    /// `#`.
    #[token("#")]
    Hash,
    /// `*`.
    #[token("*")]
    Star,
    /// `$`.
    #[token("$")]
    Dollar,
    /// `'`.
    #[token("'")]
    Quote,
    /// `!`.
    #[token("!")]
    Bang,
}

impl Tok<'_> {
    /// The token as written.
    pub fn text(&self) -> &str {
        match self {
            Tok::Int(t) | Tok::Ident(t) => t,
            Tok::Sw => "Sw",
            Tok::O => "o",
            Tok::Axes => "axes",
            Tok::M => "m",
            Tok::LParen => "(",
            Tok::RParen => ")",
            Tok::LSquare => "[",
            Tok::RSquare => "]",
            Tok::LBrace => "{",
            Tok::RBrace => "}",
            Tok::Less => "<",
            Tok::Greater => ">",
            Tok::Comma => ",",
            Tok::Colon => ":",
            Tok::Minus => "-",
            Tok::Arrow => "->",
            Tok::Equal => "=",
            Tok::Slash => "/",
            Tok::Percent => "%",
            Tok::Hash => "#",
            Tok::Star => "*",
            Tok::Dollar => "$",
            Tok::Quote => "'",
            Tok::Bang => "!",
        }
    }
}

/// A token with its byte span in the body.
pub type Spanned<'s> = (usize, Tok<'s>, usize);

/// The most tokens a layout attribute body may hold. It bounds every notation's expression trees, which the
/// layout code walks recursively (a rank-8 XLA layout with tiles is about 60 tokens).
pub const MAX_LAYOUT_TOKENS: usize = 4096;

/// Lexes `body`; a character that starts no token, or a token past [`MAX_LAYOUT_TOKENS`], is an error at its
/// offset.
pub fn lex(body: &str) -> Result<Vec<Spanned<'_>>, (usize, String)> {
    let mut lexer = Tok::lexer(body);
    let mut out = Vec::new();
    while let Some(t) = lexer.next() {
        let span = lexer.span();
        if out.len() == MAX_LAYOUT_TOKENS {
            return Err((span.start, format!("layout is too long (more than {MAX_LAYOUT_TOKENS} tokens)")));
        }
        match t {
            Ok(tok) => out.push((span.start, tok, span.end)),
            Err(()) => return Err((span.start, format!("unexpected character '{}'", &body[span.clone()]))),
        }
    }
    Ok(out)
}
