//! Parsing layout attribute bodies: the logos lexer feeding the lalrpop grammar `grammar/layout.lalrpop`, with
//! errors carrying their byte offset in the body.

use super::lexer::lex;
use lalrpop_util::ParseError;

lalrpop_util::lalrpop_mod!(
    #[allow(clippy::all, unused_parens, missing_docs)]
    grammar,
    "/layout.rs"
);

/// A syntax or admissibility error in a body, at a byte offset in it when one is known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BodyError {
    /// Byte offset in the body.
    pub offset: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl BodyError {
    /// An error at `offset`.
    pub fn at(offset: usize, message: impl Into<String>) -> BodyError {
        BodyError { offset: Some(offset), message: message.into() }
    }
}

impl From<BodyError> for crate::ir::registry::ItemError {
    fn from(e: BodyError) -> Self {
        crate::ir::registry::ItemError { message: e.message, offset: e.offset }
    }
}

/// Parses a decimal integer token (negated if `neg`), at `offset` for errors.
pub fn int(text: &str, neg: bool, offset: usize) -> Result<i64, ParseError<usize, super::lexer::Tok<'_>, BodyError>> {
    let value: i128 = text.parse().unwrap_or(i128::MAX);
    let value = if neg { -value } else { value };
    i64::try_from(value).map_err(|_| ParseError::User { error: BodyError::at(offset, "integer out of range") })
}

/// Parses a non-negative decimal integer token, at `offset` for errors.
pub fn nat(text: &str, offset: usize) -> Result<u64, ParseError<usize, super::lexer::Tok<'_>, BodyError>> {
    text.parse().map_err(|_| ParseError::User { error: BodyError::at(offset, "integer out of range") })
}

/// Runs one entry point of the grammar on `body`.
pub fn parse_with<'s, T>(
    body: &'s str,
    run: impl FnOnce(Vec<super::lexer::Spanned<'s>>) -> Result<T, ParseError<usize, super::lexer::Tok<'s>, BodyError>>,
) -> Result<T, BodyError> {
    let tokens = lex(body).map_err(|(offset, msg)| BodyError::at(offset, msg))?;
    run(tokens).map_err(|e| convert(e, body.len()))
}

fn convert(e: ParseError<usize, super::lexer::Tok<'_>, BodyError>, end: usize) -> BodyError {
    match e {
        ParseError::InvalidToken { location } => BodyError::at(location, "invalid token"),
        ParseError::UnrecognizedEof { expected, .. } => {
            BodyError::at(end, format!("unexpected end of layout, expected {}", expected.join(" or ")))
        }
        ParseError::UnrecognizedToken { token: (start, tok, _), expected } => {
            BodyError::at(start, format!("unexpected {}, expected {}", describe(tok), expected.join(" or ")))
        }
        ParseError::ExtraToken { token: (start, tok, _) } => {
            BodyError::at(start, format!("unexpected {} after the layout", describe(tok)))
        }
        ParseError::User { error } => error,
    }
}

fn describe(tok: super::lexer::Tok<'_>) -> String {
    format!("'{}'", tok.text())
}

/// Parses the body of `#layout.furiosa<...>`.
pub fn parse_furiosa(body: &str) -> Result<crate::layout::notation::furiosa::FuriosaLayout, BodyError> {
    parse_with(body, |tokens| grammar::FuriosaParser::new().parse(tokens))
}

/// Parses the body of `#layout.ck<...>`.
pub fn parse_ck(body: &str) -> Result<crate::layout::notation::ck::CkLayout, BodyError> {
    parse_with(body, |tokens| grammar::CkParser::new().parse(tokens))
}

/// Parses the body of `#layout.xla<...>`.
pub fn parse_xla(body: &str) -> Result<crate::layout::notation::xla::XlaLayout, BodyError> {
    parse_with(body, |tokens| grammar::XlaParser::new().parse(tokens))
}

/// Parses the body of `#layout.cute<...>`.
pub fn parse_cute(body: &str) -> Result<super::attr::CuteAttr, BodyError> {
    parse_with(body, |tokens| grammar::CuteParser::new().parse(tokens))
}
