//! Command-line options of LLVM FileCheck and a parser mimicking LLVM's `cl` library:
//! `-opt`, `--opt`, `-opt=value`, `-opt value`, boolean `-opt=false`, comma-separated list
//! options, `-DNAME=VALUE` (always-prefix), `--` and the `FILECHECK_OPTS` environment variable.

/// `--dump-input` modes, in increasing precedence.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum DumpInput {
    /// Never dump the input.
    Never,
    /// Dump the input when a check fails (the default).
    Fail,
    /// Always dump the input.
    Always,
    /// Print an explanation of the dump format and exit.
    Help,
}

/// `--dump-input-filter` modes, in increasing precedence.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum DumpInputFilter {
    /// Only lines with the start of an error annotation.
    Error,
    /// Only lines with the start of an annotation.
    Annotation,
    /// Only lines with annotations.
    AnnotationFull,
    /// All lines.
    All,
}

/// FileCheck options (the fields of LLVM's `FileCheckRequest` plus the driver's options).
#[derive(Clone, Debug)]
pub struct Options {
    /// `--check-prefix`/`--check-prefixes` (empty means `CHECK`).
    pub check_prefixes: Vec<String>,
    /// `--comment-prefixes` (empty means `COM,RUN`).
    pub comment_prefixes: Vec<String>,
    /// `--input-file` (`-` is stdin).
    pub input_file: String,
    /// `--match-full-lines`
    pub match_full_lines: bool,
    /// `--strict-whitespace`
    pub strict_whitespace: bool,
    /// `--implicit-check-not` patterns.
    pub implicit_check_not: Vec<String>,
    /// `--ignore-case`
    pub ignore_case: bool,
    /// `--allow-empty`
    pub allow_empty: bool,
    /// `--enable-var-scope`
    pub enable_var_scope: bool,
    /// `--allow-unused-prefixes`
    pub allow_unused_prefixes: bool,
    /// `--allow-deprecated-dag-overlap`
    pub allow_deprecated_dag_overlap: bool,
    /// `-v`
    pub verbose: bool,
    /// `-vv`
    pub verbose_verbose: bool,
    /// `--dump-input` (highest precedence of all occurrences).
    pub dump_input: DumpInput,
    /// `--dump-input-filter`, if given.
    pub dump_input_filter: Option<DumpInputFilter>,
    /// `--dump-input-context` (largest of all occurrences, default 5).
    pub dump_input_context: usize,
    /// `-D` definitions, verbatim (`NAME=VALUE` or `#FMT,NAME=EXPR`).
    pub defines: Vec<String>,
    /// The full command line, echoed by the "input is empty" error.
    pub command_line: Vec<String>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            check_prefixes: Vec::new(),
            comment_prefixes: Vec::new(),
            input_file: "-".into(),
            match_full_lines: false,
            strict_whitespace: false,
            implicit_check_not: Vec::new(),
            ignore_case: false,
            allow_empty: false,
            enable_var_scope: false,
            allow_unused_prefixes: false,
            allow_deprecated_dag_overlap: false,
            verbose: false,
            verbose_verbose: false,
            dump_input: DumpInput::Fail,
            dump_input_filter: None,
            dump_input_context: 5,
            defines: Vec::new(),
            command_line: Vec::new(),
        }
    }
}

/// The kinds of options the parser knows.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Flag,
    Value,
}

const OPTIONS: &[(&str, Kind)] = &[
    ("input-file", Kind::Value),
    ("check-prefixes", Kind::Value),
    ("check-prefix", Kind::Value),
    ("comment-prefixes", Kind::Value),
    ("implicit-check-not", Kind::Value),
    ("dump-input", Kind::Value),
    ("dump-input-filter", Kind::Value),
    ("dump-input-context", Kind::Value),
    ("dump-input-label-width", Kind::Value),
    ("strict-whitespace", Kind::Flag),
    ("ignore-case", Kind::Flag),
    ("allow-empty", Kind::Flag),
    ("allow-unused-prefixes", Kind::Flag),
    ("match-full-lines", Kind::Flag),
    ("enable-var-scope", Kind::Flag),
    ("allow-deprecated-dag-overlap", Kind::Flag),
    ("v", Kind::Flag),
    ("vv", Kind::Flag),
    ("color", Kind::Flag),
];

/// Parser state: option values that are resolved after all arguments are seen.
#[derive(Default)]
struct Collected {
    dump_inputs: Vec<DumpInput>,
    dump_filters: Vec<DumpInputFilter>,
    dump_contexts: Vec<usize>,
    positional: Vec<String>,
}

/// Parses FileCheck's arguments (without the program name), LLVM `cl` style. Returns the options
/// and the check-file path (empty if none was given; the driver then reports
/// `<check-file> not specified` and exits 2). An `Err` is a command-line syntax error, for which
/// LLVM's option parser exits with status 1.
pub fn parse_args(args: &[String]) -> Result<(Options, String), String> {
    let mut opts = Options::default();
    let mut c = Collected::default();
    let mut i = 0;
    let mut only_positional = false;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        if only_positional || arg == "-" || !arg.starts_with('-') {
            c.positional.push(arg.clone());
            continue;
        }
        if arg == "--" {
            only_positional = true;
            continue;
        }
        let body = arg.strip_prefix("--").unwrap_or(&arg[1..]);
        let (name, inline) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (body, None),
        };
        let Some(&(name, kind)) = OPTIONS.iter().find(|(n, _)| *n == name) else {
            if let Some(value) = body.strip_prefix('D') {
                if value.is_empty() {
                    return Err("for the -D option: requires a value!".into());
                }
                opts.defines.push(value.to_string());
                continue;
            }
            return Err(format!("Unknown command line argument '{arg}'."));
        };
        let value = match (kind, inline) {
            (Kind::Flag, v) => v,
            (Kind::Value, Some(v)) => Some(v),
            (Kind::Value, None) => {
                let Some(v) = args.get(i) else {
                    return Err(format!("for the --{name} option: requires a value!"));
                };
                i += 1;
                Some(v.clone())
            }
        };
        apply(&mut opts, &mut c, name, value)?;
    }
    finish(opts, c)
}

fn finish(mut opts: Options, c: Collected) -> Result<(Options, String), String> {
    if c.positional.len() > 1 {
        return Err("Too many positional arguments specified!\nCan specify at most 1 positional arguments: See: FileCheck --help".into());
    }
    if let Some(&d) = c.dump_inputs.iter().max() {
        opts.dump_input = d;
    }
    opts.dump_input_filter = c.dump_filters.iter().max().copied();
    if let Some(&n) = c.dump_contexts.iter().max() {
        opts.dump_input_context = n;
    }
    let check = c.positional.into_iter().next().unwrap_or_default();
    Ok((opts, check))
}

fn parse_bool(name: &str, v: Option<String>) -> Result<bool, String> {
    match v.as_deref() {
        None | Some("true" | "TRUE" | "True" | "1") => Ok(true),
        Some("false" | "FALSE" | "False" | "0") => Ok(false),
        Some(other) => {
            Err(format!("for the --{name} option: '{other}' is invalid value for boolean argument! Try 0 or 1"))
        }
    }
}

fn apply(opts: &mut Options, c: &mut Collected, name: &str, value: Option<String>) -> Result<(), String> {
    let v = || value.clone().unwrap_or_default();
    let split = |s: String| s.split(',').map(str::to_string).collect::<Vec<_>>();
    match name {
        "input-file" => opts.input_file = v(),
        "check-prefixes" | "check-prefix" => opts.check_prefixes.extend(split(v())),
        "comment-prefixes" => opts.comment_prefixes.extend(split(v())),
        "implicit-check-not" => opts.implicit_check_not.push(v()),
        "dump-input" => c.dump_inputs.push(parse_dump_input(&v())?),
        "dump-input-filter" => c.dump_filters.push(parse_dump_filter(&v())?),
        "dump-input-context" => c.dump_contexts.push(parse_uint(name, &v())?),
        "dump-input-label-width" => {
            parse_uint(name, &v())?;
        }
        _ => set_flag(opts, name, parse_bool(name, value)?),
    }
    Ok(())
}

fn set_flag(opts: &mut Options, name: &str, on: bool) {
    match name {
        "strict-whitespace" => opts.strict_whitespace = on,
        "ignore-case" => opts.ignore_case = on,
        "allow-empty" => opts.allow_empty = on,
        "allow-unused-prefixes" => opts.allow_unused_prefixes = on,
        "match-full-lines" => opts.match_full_lines = on,
        "enable-var-scope" => opts.enable_var_scope = on,
        "allow-deprecated-dag-overlap" => opts.allow_deprecated_dag_overlap = on,
        "v" => opts.verbose = on,
        "vv" => opts.verbose_verbose = on,
        _ => {}
    }
}

fn parse_uint(name: &str, s: &str) -> Result<usize, String> {
    s.parse().map_err(|_| format!("for the --{name} option: '{s}' value invalid for uint argument!"))
}

fn parse_dump_input(s: &str) -> Result<DumpInput, String> {
    Ok(match s {
        "help" => DumpInput::Help,
        "always" => DumpInput::Always,
        "fail" => DumpInput::Fail,
        "never" => DumpInput::Never,
        _ => return Err(format!("for the --dump-input option: Cannot find option named '{s}'!")),
    })
}

fn parse_dump_filter(s: &str) -> Result<DumpInputFilter, String> {
    Ok(match s {
        "all" => DumpInputFilter::All,
        "annotation-full" => DumpInputFilter::AnnotationFull,
        "annotation" => DumpInputFilter::Annotation,
        "error" => DumpInputFilter::Error,
        _ => return Err(format!("for the --dump-input-filter option: Cannot find option named '{s}'!")),
    })
}

/// Splits `FILECHECK_OPTS` like LLVM's `TokenizeGNUCommandLine`: whitespace-separated words,
/// single and double quotes, backslash escapes.
pub fn tokenize_env(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            '\\' => {
                in_word = true;
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            '\'' | '"' => {
                in_word = true;
                while let Some(n) = chars.next() {
                    if n == c {
                        break;
                    }
                    if n == '\\' && c == '"' && chars.peek().is_some_and(|&p| p == '"' || p == '\\') {
                        cur.push(chars.next().unwrap_or('\\'));
                        continue;
                    }
                    cur.push(n);
                }
            }
            _ => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        out.push(cur);
    }
    out
}

/// Prepends the `FILECHECK_OPTS` words to the arguments, as LLVM's `cl` does.
pub fn with_env_options(args: &[String], filecheck_opts: Option<&str>) -> Vec<String> {
    let mut all = filecheck_opts.map(tokenize_env).unwrap_or_default();
    all.extend(args.iter().cloned());
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<(Options, String), String> {
        let args: Vec<String> = s.split_whitespace().map(str::to_string).collect();
        parse_args(&args)
    }

    #[test]
    fn spellings() {
        let (o, chk) =
            parse("t.chk --check-prefix A -check-prefixes=B,C --input-file=x -strict-whitespace -DX=1 --D#N=2")
                .unwrap();
        assert_eq!(chk, "t.chk");
        assert_eq!(o.check_prefixes, ["A", "B", "C"]);
        assert_eq!(o.input_file, "x");
        assert!(o.strict_whitespace);
        assert_eq!(o.defines, ["X=1", "#N=2"]);
        let (o, _) = parse("a --match-full-lines=false -v --dump-input=never --dump-input always").unwrap();
        assert!(!o.match_full_lines && o.verbose);
        assert_eq!(o.dump_input, DumpInput::Always);
    }

    #[test]
    fn errors() {
        assert!(parse("--bogus a").is_err());
        assert!(parse("a b").is_err());
        assert!(parse("a -D").is_err());
        assert!(parse("a --input-file").is_err());
        assert!(parse("a --dump-input=sometimes").is_err());
        assert_eq!(parse("").unwrap().1, "");
    }

    #[test]
    fn env_tokens() {
        assert_eq!(tokenize_env(" --a  'b c' \"d\\\"e\" f\\ g"), ["--a", "b c", "d\"e", "f g"]);
    }
}
