//! Turns lalrpop's parse errors into diagnostics with readable token names.

use super::lexer::Token;
use super::state::ParseState;
use crate::ir::Diagnostic;
use lalrpop_util::{ErrorRecovery, ParseError};

/// The most errors reported for one input; past that the rest are likely cascades.
pub const MAX_ERRORS: usize = 100;

impl<'s> ParseState<'s, '_> {
    /// Records a syntax error the grammar recovered from.
    pub fn recover(&mut self, e: ErrorRecovery<usize, Token<'s>, Diagnostic>) {
        self.syntax_error(e.error);
    }

    /// Records a syntax error.
    pub fn syntax_error(&mut self, e: ParseError<usize, Token<'s>, Diagnostic>) {
        self.syntax_errors += 1;
        if self.diags.len() >= MAX_ERRORS {
            return;
        }
        let (offset, msg) = match e {
            ParseError::UnrecognizedToken { token: (_, Token::Error, _), .. } => return,
            ParseError::UnrecognizedToken { token: (l, tok, _), expected } => {
                (l, unexpected(&tok.describe(), &expected))
            }
            ParseError::UnrecognizedEof { location, expected } => (location, unexpected("end of input", &expected)),
            ParseError::ExtraToken { token: (l, tok, _) } => (l, format!("unexpected {}", tok.describe())),
            ParseError::InvalidToken { location } => (location, "invalid token".to_string()),
            ParseError::User { error } => {
                self.diags.push(error);
                return;
            }
        };
        let loc = self.loc_at(offset);
        if self.diags.last().is_some_and(|d| d.loc == loc) {
            return;
        }
        self.diags.push(Diagnostic::error(loc, msg));
    }
}

fn unexpected(found: &str, expected: &[String]) -> String {
    let mut names: Vec<String> = expected.iter().map(|t| friendly(t)).collect();
    names.dedup();
    match names.len() {
        0 => format!("unexpected {found}"),
        1 => format!("expected {}, found {found}", names[0]),
        n if n <= 8 => format!("expected one of {}, found {found}", names.join(", ")),
        _ => format!("unexpected {found}"),
    }
}

fn friendly(terminal: &str) -> String {
    let t = terminal.trim_matches('"');
    match t {
        "%id" => "SSA value".into(),
        "^id" => "block name".into(),
        "@id" => "symbol name".into(),
        "#id" | "#body" => "attribute".into(),
        "!id" | "!body" => "type".into(),
        "bareid" => "identifier".into(),
        "opname" => "operation name".into(),
        "inttype" | "floattype" => "type".into(),
        "int" | "hex" => "integer".into(),
        "float" => "float".into(),
        "dims" => "dimension list".into(),
        "string" => "string".into(),
        "endop" => "end of line".into(),
        "error" => "valid token".into(),
        other => format!("'{other}'"),
    }
}
