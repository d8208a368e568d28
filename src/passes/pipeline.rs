//! MLIR's textual pass-pipeline syntax: `builtin.module(func.func(cse, canonicalize{max-iterations=3}), p)`.
//!
//! Parsing checks the structure and that every name is a registered pass or a nested anchor; errors carry the
//! column of the offending text, and render as `mlir-opt` renders them.

use super::registry::PassRegistry;

/// A parsed pipeline: an anchor op name (or `any`) and its elements.
#[derive(Clone, Debug, PartialEq)]
pub struct Pipeline {
    /// The op name the pipeline runs on.
    pub anchor: String,
    /// Passes and nested pipelines, in order.
    pub elements: Vec<PipelineElement>,
}

/// One element of a pipeline.
#[derive(Clone, Debug, PartialEq)]
pub enum PipelineElement {
    /// A pass with its option text (`key=value` entries separated by spaces).
    Pass {
        /// The pass argument.
        name: String,
        /// Options as written between the braces.
        options: String,
    },
    /// A nested pipeline anchored on an op name.
    Nested(Pipeline),
}

/// A pipeline syntax error: a message and the 0-based column it points at.
#[derive(Clone, Debug, PartialEq)]
pub struct PipelineError {
    /// What is wrong.
    pub message: String,
    /// Column in the pipeline text (0-based), if the error points into it.
    pub column: Option<usize>,
    /// The pipeline text.
    pub text: String,
}

impl PipelineError {
    /// MLIR's rendering: a located header, then the text and a caret line when there is a column.
    pub fn render(&self) -> String {
        match self.column {
            Some(col) => format!(
                "<unknown>:0: error: MLIR Textual PassPipeline Parser:1:{}: error: {}\n{}\n{}^\n",
                col + 1,
                self.message,
                self.text,
                " ".repeat(col)
            ),
            None => format!("<unknown>:0: error: {}\n", self.message),
        }
    }
}

/// The deepest a pipeline may nest (`builtin.module(func.func(...))` is 2): the parser, the pass manager and the
/// printer of a pipeline recurse on its nesting, which ops bound in practice to a handful of levels.
pub const MAX_PIPELINE_NESTING: usize = 64;

/// Parses a pipeline string.
pub fn parse_pipeline(text: &str, registry: &PassRegistry) -> Result<Pipeline, PipelineError> {
    let trimmed = text.trim();
    let mut p = Parser { text, pos: text.len() - text.trim_start().len(), registry, depth: 0 };
    if trimmed.is_empty() {
        return Ok(Pipeline { anchor: "builtin.module".into(), elements: Vec::new() });
    }
    let name_start = p.pos;
    let name = p.name();
    p.skip_ws();
    if !p.eat('(') {
        let _ = name_start;
        return Err(PipelineError {
            message: "expected pass pipeline to be wrapped with the anchor operation type, e.g. 'builtin.module(...)'"
                .into(),
            column: None,
            text: text.into(),
        });
    }
    let inner_start = p.pos;
    let pipeline = p.nested(name, inner_start).map_err(|e| relative_to_inner(e, text, inner_start))?;
    p.skip_ws();
    if p.pos < text.len() {
        return Err(p.error("unexpected text after the pipeline", p.pos));
    }
    Ok(pipeline)
}

/// MLIR reports errors relative to the text inside the outermost anchor's parentheses.
fn relative_to_inner(mut e: PipelineError, text: &str, inner_start: usize) -> PipelineError {
    let end = match text.rfind(')') {
        Some(i) if i >= inner_start && text[i + 1..].trim().is_empty() && balanced(&text[inner_start..i]) => i,
        _ => text.len(),
    };
    e.text = text[inner_start..end].to_string();
    e.column = e.column.map(|c| c.saturating_sub(inner_start));
    e
}

fn balanced(s: &str) -> bool {
    let mut depth = 0i32;
    for c in s.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ => {}
        }
        if depth < 0 {
            return false;
        }
    }
    depth == 0
}

struct Parser<'a> {
    text: &'a str,
    pos: usize,
    registry: &'a PassRegistry,
    /// How many anchors enclose the position.
    depth: usize,
}

impl Parser<'_> {
    fn error(&self, message: impl Into<String>, column: usize) -> PipelineError {
        PipelineError { message: message.into(), column: Some(column), text: self.text.into() }
    }

    fn peek(&self) -> Option<char> {
        self.text[self.pos..].chars().next()
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += c.len_utf8();
            true
        } else {
            false
        }
    }

    fn skip_ws(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.pos += 1;
        }
    }

    fn name(&mut self) -> String {
        let start = self.pos;
        while self.peek().is_some_and(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '$')) {
            self.pos += 1;
        }
        self.text[start..self.pos].to_string()
    }

    /// Parses the elements after `anchor(` up to the matching `)`.
    fn nested(&mut self, anchor: String, open_at: usize) -> Result<Pipeline, PipelineError> {
        self.depth += 1;
        if self.depth > MAX_PIPELINE_NESTING {
            return Err(self.error(format!("pass pipelines nest at most {MAX_PIPELINE_NESTING} deep"), open_at));
        }
        let pipeline = self.elements(anchor, open_at);
        self.depth -= 1;
        pipeline
    }

    /// The elements of [`Parser::nested`].
    fn elements(&mut self, anchor: String, open_at: usize) -> Result<Pipeline, PipelineError> {
        let mut elements = Vec::new();
        self.skip_ws();
        if self.eat(')') {
            return Ok(Pipeline { anchor, elements });
        }
        loop {
            self.skip_ws();
            let start = self.pos;
            let name = self.name();
            if name.is_empty() {
                return Err(self.error("expected pass or pipeline name", self.pos));
            }
            self.skip_ws();
            if self.eat('(') {
                let inner = self.pos;
                elements.push(PipelineElement::Nested(self.nested(name, inner)?));
            } else {
                let options = if self.eat('{') { self.options(start)? } else { String::new() };
                if !self.registry.knows(&name) {
                    return Err(
                        self.error(format!("'{name}' does not refer to a registered pass or pass pipeline"), start)
                    );
                }
                elements.push(PipelineElement::Pass { name, options });
            }
            self.skip_ws();
            if self.eat(',') {
                continue;
            }
            if self.eat(')') {
                return Ok(Pipeline { anchor, elements });
            }
            return Err(self.error("encountered unbalanced parentheses while parsing pipeline", open_at));
        }
    }

    /// Reads option text up to the matching `}` (nested braces and parentheses allowed).
    fn options(&mut self, start: usize) -> Result<String, PipelineError> {
        let begin = self.pos;
        let mut depth = 1;
        while let Some(c) = self.peek() {
            self.pos += c.len_utf8();
            match c {
                '{' | '(' => depth += 1,
                '}' | ')' => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(self.text[begin..self.pos - 1].trim().to_string());
                    }
                }
                _ => {}
            }
        }
        Err(self.error("missing closing '}' while processing pass options", start))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_pipeline(text: &str) -> Result<Pipeline, PipelineError> {
        super::parse_pipeline(text, &PassRegistry::new())
    }

    #[test]
    fn empty_and_nested_pipelines_parse() {
        let p = parse_pipeline("builtin.module(func.func())").unwrap();
        assert_eq!(p.anchor, "builtin.module");
        let nested = Pipeline { anchor: "func.func".into(), elements: Vec::new() };
        assert_eq!(p.elements, vec![PipelineElement::Nested(nested)]);
    }

    #[test]
    fn unknown_pass_points_at_its_name() {
        let e = parse_pipeline("builtin.module(func.func(csee))").unwrap_err();
        assert_eq!((e.column, e.text.as_str()), (Some(10), "func.func(csee)"));
        assert!(e.render().contains("'csee' does not refer to a registered pass"));
    }

    #[test]
    fn unbalanced_and_unanchored_pipelines_fail() {
        let e = parse_pipeline("builtin.module(func.func(any()").unwrap_err();
        assert_eq!(e.column, Some(10));
        assert!(e.message.contains("unbalanced parentheses"));
        assert!(parse_pipeline("cse").unwrap_err().column.is_none());
    }
}
