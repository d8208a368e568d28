//! Typed pass options: declarations, parsing of `{key=value key2=a,b}` text, and the canonical dump
//! (`--dump-pass-pipeline` prints every option with its current value, in name order).

use indexmap::IndexMap;

/// The type of an option.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum OptionKind {
    /// `true`/`false` (also `1`/`0`); a bare key means `true`.
    Bool,
    /// A signed integer.
    Int,
    /// An unsigned integer.
    UInt,
    /// Any text.
    String,
    /// One of the listed words.
    Enum(&'static [&'static str]),
    /// A comma-separated list of text items.
    List,
}

/// One declared option.
#[derive(Copy, Clone, Debug)]
pub struct OptionSpec {
    /// The key.
    pub name: &'static str,
    /// Its type.
    pub kind: OptionKind,
    /// The default, as text.
    pub default: &'static str,
    /// One line for `--list-passes`.
    pub description: &'static str,
}

/// Parsed option values, all declared options present.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OptionValues {
    values: IndexMap<&'static str, String>,
}

impl OptionValues {
    /// The value of a bool option.
    pub fn bool(&self, name: &str) -> bool {
        matches!(self.text(name), "true" | "1")
    }

    /// The value of an integer option.
    pub fn int(&self, name: &str) -> i64 {
        self.text(name).parse().expect("validated when parsed")
    }

    /// The value of a text or enum option.
    pub fn text(&self, name: &str) -> &str {
        self.values.get(name).map(String::as_str).unwrap_or_else(|| panic!("undeclared option '{name}'"))
    }

    /// The items of a list option.
    pub fn list(&self, name: &str) -> Vec<String> {
        self.text(name).split(',').filter(|s| !s.is_empty()).map(str::to_string).collect()
    }

    /// `key=value key2=value2` in name order, as `--dump-pass-pipeline` prints them.
    pub fn dump(&self) -> String {
        self.values.iter().map(|(k, v)| format!(" {k}={v}")).collect()
    }
}

/// Parses option text for a pass that declares `specs`; errors are mlir-opt's messages.
pub fn parse_options(specs: &[OptionSpec], text: &str) -> Result<OptionValues, String> {
    let mut values: IndexMap<&'static str, String> = IndexMap::new();
    let mut sorted: Vec<&OptionSpec> = specs.iter().collect();
    sorted.sort_by_key(|s| s.name);
    for spec in &sorted {
        values.insert(spec.name, spec.default.to_string());
    }
    for entry in split_entries(text) {
        let (key, value) = match entry.split_once('=') {
            Some((k, v)) => (k, Some(v)),
            None => (entry.as_str(), None),
        };
        let spec = specs.iter().find(|s| s.name == key).ok_or_else(|| format!("no such option {key}"))?;
        let value = check_value(spec, value)?;
        values.insert(spec.name, value);
    }
    Ok(OptionValues { values })
}

/// Splits on spaces outside braces, brackets and quotes.
fn split_entries(text: &str) -> Vec<String> {
    let mut entries = Vec::new();
    let mut current = String::new();
    let mut depth = 0i32;
    let mut quoted = false;
    for c in text.chars() {
        match c {
            '"' | '\'' => quoted = !quoted,
            '{' | '(' | '[' if !quoted => depth += 1,
            '}' | ')' | ']' if !quoted => depth -= 1,
            c if c.is_whitespace() && depth == 0 && !quoted => {
                if !current.is_empty() {
                    entries.push(std::mem::take(&mut current));
                }
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    if !current.is_empty() {
        entries.push(current);
    }
    entries
}

fn check_value(spec: &OptionSpec, value: Option<&str>) -> Result<String, String> {
    let invalid =
        |v: &str, what: &str| format!("for the --{} option: '{v}' value invalid for {what} argument!", spec.name);
    match (spec.kind, value) {
        (OptionKind::Bool, None) => Ok("true".into()),
        (OptionKind::Bool, Some(v @ ("true" | "false"))) => Ok(v.into()),
        (OptionKind::Bool, Some("1")) => Ok("true".into()),
        (OptionKind::Bool, Some("0")) => Ok("false".into()),
        (OptionKind::Bool, Some(v)) => Err(invalid(v, "boolean")),
        (_, None) => Err(format!("for the --{} option: requires a value", spec.name)),
        (OptionKind::Int, Some(v)) => v.parse::<i64>().map(|n| n.to_string()).map_err(|_| invalid(v, "long")),
        (OptionKind::UInt, Some(v)) => v.parse::<u64>().map(|n| n.to_string()).map_err(|_| invalid(v, "uint")),
        (OptionKind::Enum(words), Some(v)) if words.contains(&v) => Ok(v.into()),
        (OptionKind::Enum(_), Some(v)) => {
            Err(format!("for the --{} option: Cannot find option named '{v}'!", spec.name))
        }
        (OptionKind::String | OptionKind::List, Some(v)) => {
            Ok(unquoted(v.trim_matches(|c| c == '{' || c == '}')).into())
        }
    }
}

/// `v` without one pair of matching surrounding quotes (`"a b"` or `'a b'`), as MLIR reads quoted option values.
fn unquoted(v: &str) -> &str {
    for q in ['"', '\''] {
        if let Some(inner) = v.strip_prefix(q).and_then(|rest| rest.strip_suffix(q)) {
            return inner;
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPECS: &[OptionSpec] = &[
        OptionSpec { name: "max-iterations", kind: OptionKind::Int, default: "10", description: "" },
        OptionSpec { name: "top-down", kind: OptionKind::Bool, default: "true", description: "" },
        OptionSpec {
            name: "mode",
            kind: OptionKind::Enum(&["normal", "aggressive"]),
            default: "normal",
            description: "",
        },
    ];

    #[test]
    fn options_parse_with_defaults_and_types() {
        let v = parse_options(SPECS, " max-iterations=3 top-down=false ").unwrap();
        assert_eq!((v.int("max-iterations"), v.bool("top-down"), v.text("mode")), (3, false, "normal"));
        assert_eq!(v.dump(), " max-iterations=3 mode=normal top-down=false");
    }

    #[test]
    fn bad_options_are_mlir_messages() {
        assert_eq!(parse_options(SPECS, "bogus=1").unwrap_err(), "no such option bogus");
        assert_eq!(
            parse_options(SPECS, "max-iterations=x").unwrap_err(),
            "for the --max-iterations option: 'x' value invalid for long argument!"
        );
        assert!(parse_options(SPECS, "mode=wild").unwrap_err().contains("Cannot find option named 'wild'"));
    }
}
