//! Diagnostics: what every stage (lexer, parser, verifier, passes) reports, before anything renders it.
//!
//! A diagnostic has one location, a severity and a message, plus attached notes (themselves diagnostics),
//! exactly as MLIR's. Rendering lives in `crate::render`; nothing here formats source lines.

use super::location::Loc;
use std::fmt;

/// How serious a diagnostic is.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// Supplementary information attached to another diagnostic.
    Note,
    /// Informational remark.
    Remark,
    /// Suspicious but not fatal.
    Warning,
    /// The input or the IR is invalid.
    Error,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Note => "note",
            Severity::Remark => "remark",
            Severity::Warning => "warning",
            Severity::Error => "error",
        })
    }
}

/// A message about a location, with notes.
#[derive(Clone, Debug, PartialEq)]
pub struct Diagnostic {
    /// How serious it is.
    pub severity: Severity,
    /// Where it points.
    pub loc: Loc,
    /// The message, without location or severity.
    pub message: String,
    /// Notes attached to this diagnostic, in order.
    pub notes: Vec<Diagnostic>,
}

impl Diagnostic {
    /// A diagnostic of the given severity.
    pub fn new(severity: Severity, loc: Loc, message: impl Into<String>) -> Self {
        Diagnostic { severity, loc, message: message.into(), notes: Vec::new() }
    }

    /// An error.
    pub fn error(loc: Loc, message: impl Into<String>) -> Self {
        Self::new(Severity::Error, loc, message)
    }

    /// A warning.
    pub fn warning(loc: Loc, message: impl Into<String>) -> Self {
        Self::new(Severity::Warning, loc, message)
    }

    /// A remark.
    pub fn remark(loc: Loc, message: impl Into<String>) -> Self {
        Self::new(Severity::Remark, loc, message)
    }

    /// Attaches a note at `loc`.
    pub fn with_note(mut self, loc: Loc, message: impl Into<String>) -> Self {
        self.notes.push(Diagnostic::new(Severity::Note, loc, message));
        self
    }
}

/// True if any diagnostic in the list is an error.
pub fn has_errors(diags: &[Diagnostic]) -> bool {
    diags.iter().any(|d| d.severity == Severity::Error)
}
