//! lit's integrated-test directives of a test file (`RUN:` with `\` continuation, `XFAIL:`, `REQUIRES:`,
//! `UNSUPPORTED:`, `ALLOW_RETRIES:`, `END.`) and the boolean feature expressions they take.

use std::collections::BTreeSet;

/// One RUN pipeline (possibly joined from several `RUN:` lines).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunLine {
    /// 1-based line of the first `RUN:` line.
    pub line: usize,
    pub command: String,
}

/// Everything lit reads from a test file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Script {
    pub runs: Vec<RunLine>,
    pub xfail: Vec<String>,
    pub requires: Vec<String>,
    pub unsupported: Vec<String>,
    pub allow_retries: u32,
}

/// The keywords, in the order lit's pattern lists them. As in lit, a keyword is recognized anywhere on a line
/// (`// FOO-RUN:` counts as `RUN:`), and the leftmost one wins.
const KEYWORDS: [&str; 8] =
    ["RUN:", "XFAIL:", "REQUIRES:", "UNSUPPORTED:", "ALLOW_RETRIES:", "END.", "DEFINE:", "REDEFINE:"];

/// Reads the directives of a test file.
pub fn parse(text: &str) -> Result<Script, String> {
    let mut s = Script::default();
    // Whether the last RUN line ended with `\` and so continues on the next `RUN:` line (other directives may
    // come in between, as in lit).
    let mut continues = false;
    for (idx, line) in text.lines().enumerate() {
        let number = idx + 1;
        let Some((pos, kw)) = KEYWORDS
            .iter()
            .filter_map(|k| line.find(k).map(|p| (p, *k)))
            .min_by_key(|&(p, k)| (p, KEYWORDS.iter().position(|x| *x == k)))
        else {
            continue;
        };
        let body = &line[pos + kw.len()..];
        match kw {
            "RUN:" => {
                let cmd = expand_line_numbers(body.trim_end(), number)?;
                if continues {
                    let last = s.runs.last_mut().expect("a RUN line to continue");
                    last.command.pop(); // the `\`
                    last.command.push_str(&cmd);
                } else {
                    s.runs.push(RunLine { line: number, command: cmd });
                }
                continues = s.runs.last().is_some_and(|r| r.command.ends_with('\\'));
            }
            "XFAIL:" => s.xfail.extend(list(body, number)?),
            "REQUIRES:" => s.requires.extend(list(body, number)?),
            "UNSUPPORTED:" => s.unsupported.extend(list(body, number)?),
            "ALLOW_RETRIES:" => {
                s.allow_retries =
                    body.trim().parse().map_err(|_| format!("line {number}: ALLOW_RETRIES: expects a number"))?
            }
            "END." => {
                if body.trim().is_empty() {
                    break;
                }
            }
            other => {
                return Err(format!("line {number}: {other} is not supported by this runner (it is lit ≥ 19 only)"))
            }
        }
    }
    if continues {
        return Err("the last RUN line ends with '\\' but no RUN line follows".into());
    }
    Ok(s)
}

/// A comma-separated list of boolean expressions; each one is checked for syntax now.
fn list(body: &str, number: usize) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for item in body.split(',').map(str::trim) {
        if item.is_empty() {
            return Err(format!("line {number}: empty item in list '{}'", body.trim()));
        }
        if item != "*" {
            eval(item, &BTreeSet::new()).map_err(|e| format!("line {number}: {e}"))?;
        }
        out.push(item.to_string());
    }
    Ok(out)
}

/// lit's `%(line)`, `%(line+N)` and `%(line-N)`: the number of the physical line the RUN text is on.
fn expand_line_numbers(text: &str, number: usize) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("%(line") {
        out.push_str(&rest[..i]);
        let tail = &rest[i + 6..];
        let Some(close) = tail.find(')') else {
            out.push_str("%(line");
            rest = tail;
            continue;
        };
        let expr: String = tail[..close].chars().filter(|c| !c.is_whitespace()).collect();
        let value = if expr.is_empty() {
            number as i64
        } else {
            let (sign, digits) = expr.split_at(1);
            let n: i64 = digits.parse().map_err(|_| format!("bad line expression '%(line{})'", &tail[..close]))?;
            match sign {
                "+" => number as i64 + n,
                "-" => number as i64 - n,
                _ => return Err(format!("bad line expression '%(line{})'", &tail[..close])),
            }
        };
        out.push_str(&value.to_string());
        rest = &tail[close + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// How a test's feature directives resolve against the available features.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Run it; `xfail` says whether a failure is expected.
    Run { xfail: bool },
    /// Do not run it, for this reason.
    Skip(String),
}

impl Script {
    pub fn verdict(&self, features: &BTreeSet<String>) -> Result<Verdict, String> {
        let missing: Vec<&String> = self.requires.iter().filter(|e| !eval(e, features).unwrap_or(false)).collect();
        if !missing.is_empty() {
            let list: Vec<&str> = missing.iter().map(|s| s.as_str()).collect();
            return Ok(Verdict::Skip(format!("missing required features: {}", list.join(", "))));
        }
        for e in &self.unsupported {
            if e == "*" || eval(e, features)? {
                return Ok(Verdict::Skip(format!("UNSUPPORTED: {e}")));
            }
        }
        let mut xfail = false;
        for e in &self.xfail {
            if e == "*" || eval(e, features)? {
                xfail = true;
            }
        }
        Ok(Verdict::Run { xfail })
    }
}

/// Evaluates a lit boolean expression: `||`, `&&`, `!`, parentheses, `true`, and feature names
/// (`[-+=._a-zA-Z0-9]+`), which are true iff available. lit's `{{regex}}` feature patterns are not supported.
pub fn eval(expr: &str, features: &BTreeSet<String>) -> Result<bool, String> {
    let tokens = tokenize(expr)?;
    let mut p = Expr { tokens: &tokens, pos: 0, features };
    let v = p.or()?;
    if p.pos != tokens.len() {
        return Err(format!("unexpected '{}' in expression '{expr}'", tokens[p.pos]));
    }
    Ok(v)
}

fn tokenize(expr: &str) -> Result<Vec<String>, String> {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || "-+=._".contains(c);
    let mut out = Vec::new();
    let mut rest = expr.trim_start();
    while !rest.is_empty() {
        let len = if rest.starts_with("&&") || rest.starts_with("||") {
            2
        } else if rest.starts_with(['!', '(', ')']) {
            1
        } else {
            let n = rest.find(|c: char| !is_ident(c)).unwrap_or(rest.len());
            if n == 0 {
                return Err(format!("couldn't parse text '{rest}' in expression '{expr}'"));
            }
            n
        };
        out.push(rest[..len].to_string());
        rest = rest[len..].trim_start();
    }
    Ok(out)
}

struct Expr<'a> {
    tokens: &'a [String],
    pos: usize,
    features: &'a BTreeSet<String>,
}

impl Expr<'_> {
    fn peek(&self) -> Option<&str> {
        self.tokens.get(self.pos).map(String::as_str)
    }

    fn or(&mut self) -> Result<bool, String> {
        let mut v = self.and()?;
        while self.peek() == Some("||") {
            self.pos += 1;
            v |= self.and()?;
        }
        Ok(v)
    }

    fn and(&mut self) -> Result<bool, String> {
        let mut v = self.not()?;
        while self.peek() == Some("&&") {
            self.pos += 1;
            v &= self.not()?;
        }
        Ok(v)
    }

    fn not(&mut self) -> Result<bool, String> {
        let tok = self.peek().ok_or("expected an expression, found the end")?.to_string();
        self.pos += 1;
        match tok.as_str() {
            "!" => Ok(!self.not()?),
            "(" => {
                let v = self.or()?;
                if self.peek() != Some(")") {
                    return Err("expected ')'".into());
                }
                self.pos += 1;
                Ok(v)
            }
            "&&" | "||" | ")" => Err(format!("unexpected '{tok}'")),
            name => Ok(name == "true" || self.features.contains(name)),
        }
    }
}
