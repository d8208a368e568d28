//! LLVM-compatible FileCheck engine: the library behind `tap-filecheck`.
//!
//! It reproduces LLVM FileCheck 19 semantics, exit codes and diagnostics: directives `CHECK`,
//! `-NEXT`, `-SAME`, `-NOT`, `-DAG` (non-overlapping, the next directive starts after the
//! furthest match, NOTs between DAG groups), two-phase `-LABEL` blocks, `-EMPTY`, `-COUNT-n`,
//! the `{LITERAL}` modifier, comment prefixes; patterns with whitespace folding, `{{regex}}`
//! (POSIX ERE), string and numeric variables, `@LINE`, `-D` definitions and
//! `--enable-var-scope`; the options `--check-prefix(es)`, `--comment-prefixes`, `--input-file`,
//! `--match-full-lines`, `--strict-whitespace`, `--implicit-check-not`, `--ignore-case`,
//! `--allow-empty`, `--allow-unused-prefixes`, `--allow-deprecated-dag-overlap`, `-v`, `-vv`,
//! `--dump-input[-filter|-context]` and `FILECHECK_OPTS`. Exit codes: 0 all checks passed,
//! 1 a check failed (also LLVM `cl` command-line syntax errors), 2 usage or check-file errors.
//!
//! ```
//! use tapestry::filecheck::{run, Options};
//! let out = run(&Options::default(), "t.chk", "CHECK: foo\nCHECK-NEXT: bar\n", "-", "foo\nbar\n");
//! assert_eq!(out.exit_code, 0);
//! ```
//!
//! Module map: `options` (command line), `directive` (reading the check file),
//! `pattern` (compiling and matching one pattern), `expr` (numeric expressions), `vars`
//! (variable tables), `regex_posix` (POSIX ERE parsing, lint, translation), `regex_match`
//! (leftmost-longest matching), `matcher` (the DAG/NOT/LABEL algorithm), `report`
//! (diagnostics and the input dump), `source` (buffers and message printing).
//!
//! # Regex dialect and known divergences from LLVM
//!
//! Verified against LLVM FileCheck 19.1.7: the conformance corpus (`test/filecheck-conformance`,
//! exit codes; stderr byte-identical except the items below) and randomized differential runs.
//!
//! * Regexes are POSIX ERE as in LLVM's `Regex`, matched leftmost-longest (`[[X:a|ab]]` on
//!   `ab` captures `ab`). The `regex` crate is leftmost-first only, so it serves as a prefilter
//!   for the match start and a small POSIX engine computes the longest match and the captures
//!   (see `regex_match`); sub-match assignment follows Spencer's rules in all common cases but is
//!   not guaranteed identical for exotic nested groups.
//! * **Intentional:** Perl escapes such as `\d`, `\w`, `\s`, `\b` (any backslash-letter, also
//!   inside brackets) are rejected with exit 2 and an explanation. LLVM accepts them as the plain
//!   letters (so `{{\d+}}` silently fails to match digits); rejecting keeps tests portable.
//!   Lazy quantifiers and look-around are errors in both (LLVM: "repetition-operator operand
//!   invalid").
//! * Numeric values are `i128` instead of arbitrary precision; a captured value that does not
//!   fit leaves the variable undefined.
//! * Back-reference matching (a variable used on its defining line) is exhaustive backtracking
//!   with a step budget; pathological patterns may give up early. As in LLVM 19 at most 9
//!   variables can be back-referenced (LLVM 22 allows 20).
//! * With `--enable-var-scope`, a numeric variable redefined after a `CHECK-LABEL` is cleared
//!   again at the next label (LLVM 22 behaviour; LLVM 19 forgets to clear it).
//! * Non-UTF-8 input bytes echoed in diagnostics are shown as U+FFFD (the output is a `String`).
//! * Command-line handling mirrors LLVM's `cl`: `FILECHECK_OPTS` words come before the command
//!   line (so the command line wins), `-D` takes its value attached (`-DNAME=VALUE`), syntax
//!   errors exit 1. `--color` and `--dump-input-label-width` are accepted and ignored.

mod directive;
mod expr;
mod literals;
mod matcher;
mod options;
mod pattern;
mod regex_match;
mod regex_posix;
mod report;
mod source;
mod vars;

use std::io::Read;

pub use options::{parse_args, tokenize_env, with_env_options, DumpInput, DumpInputFilter, Options};

use directive::ReadOptions;
use matcher::{MatchOptions, Matcher};
use pattern::PatternOptions;
use report::{DumpLabels, DumpOptions, Reporter};
use source::SourceMgr;
use vars::Context;

/// Result of a FileCheck run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// 0: all checks passed; 1: a check failed; 2: usage or check-file error.
    pub exit_code: i32,
    /// Text for standard output (only `--dump-input=help` writes there).
    pub stdout: String,
    /// Text for standard error: diagnostics and the input dump.
    pub stderr: String,
}

impl Outcome {
    fn err(exit_code: i32, stderr: String) -> Self {
        Outcome { exit_code, stdout: String::new(), stderr }
    }
}

/// Checks `input` against the directives in `check_text`. `check_file_name` and `input_name`
/// are used in diagnostics (`-` is shown as `<stdin>`).
pub fn run(opts: &Options, check_file_name: &str, check_text: &str, input_name: &str, input: &str) -> Outcome {
    run_bytes(opts, check_file_name, check_text.as_bytes(), input_name, input.as_bytes())
}

/// Like [`run`] for arbitrary bytes.
pub fn run_bytes(opts: &Options, check_file_name: &str, check_text: &[u8], input_name: &str, input: &[u8]) -> Outcome {
    run_inner(opts, check_file_name, check_text, input_name, Ok(input))
}

/// Runs FileCheck as the command-line tool does: `argv` includes the program name,
/// `filecheck_opts` is the value of `FILECHECK_OPTS`, files are read from disk and `-` from
/// `stdin`.
pub fn run_command(argv: &[String], filecheck_opts: Option<&str>, stdin: &mut dyn Read) -> Outcome {
    let prog =
        argv.first().map(|p| p.rsplit('/').next().unwrap_or(p).to_string()).unwrap_or_else(|| "FileCheck".into());
    let args = with_env_options(argv.get(1..).unwrap_or(&[]), filecheck_opts);
    let (mut opts, check_file) = match parse_args(&args) {
        Ok(r) => r,
        Err(msg) => return Outcome::err(1, cl_error(&prog, argv.first().map_or("FileCheck", |s| s), &msg)),
    };
    opts.command_line = argv.to_vec();
    if opts.dump_input == DumpInput::Help {
        return Outcome { exit_code: 0, stdout: DUMP_INPUT_HELP.into(), stderr: String::new() };
    }
    if check_file.is_empty() {
        return Outcome::err(2, "<check-file> not specified\n".into());
    }
    if let Err(msg) = validate(&opts) {
        return Outcome::err(2, msg);
    }
    let check_text = match read_source(&check_file, stdin) {
        Ok(t) => t,
        Err(e) => return Outcome::err(2, format!("Could not open check file '{check_file}': {e}\n")),
    };
    let input = read_source(&opts.input_file, stdin);
    let input_name = opts.input_file.clone();
    run_inner(&opts, &check_file, &check_text, &input_name, input.as_deref().map_err(String::clone))
}

/// Formats a command-line syntax error like LLVM's `cl` library.
fn cl_error(prog: &str, argv0: &str, msg: &str) -> String {
    let msg = msg.replace("See: FileCheck --help", &format!("See: {argv0} --help"));
    if msg.starts_with("Unknown command line argument") {
        return format!("{prog}: {msg}  Try: '{argv0} --help'\n");
    }
    format!("{prog}: {msg}\n")
}

fn read_source(path: &str, stdin: &mut dyn Read) -> Result<Vec<u8>, String> {
    let mut buf = Vec::new();
    let res = if path == "-" { stdin.read_to_end(&mut buf).map(|_| buf) } else { std::fs::read(path) };
    res.map_err(|e| {
        let msg = e.to_string();
        match msg.find(" (os error") {
            Some(i) => msg[..i].to_string(),
            None => msg,
        }
    })
}

/// The checks LLVM's driver does before reading files: `-D` syntax and prefix validity.
fn validate(opts: &Options) -> Result<(), String> {
    let mut err = String::new();
    for d in &opts.defines {
        match d.find('=') {
            None => err.push_str(&format!("Missing equal sign in command-line definition '-D{d}'\n")),
            Some(0) => err.push_str(&format!("Missing variable name in command-line definition '-D{d}'\n")),
            Some(_) => {}
        }
    }
    if !err.is_empty() {
        return Err(err);
    }
    let mut unique = std::collections::BTreeSet::new();
    if opts.check_prefixes.is_empty() {
        unique.insert("CHECK");
    }
    if opts.comment_prefixes.is_empty() {
        unique.extend(["COM", "RUN"]);
    }
    validate_prefixes("check", &opts.check_prefixes, &mut unique)?;
    validate_prefixes("comment", &opts.comment_prefixes, &mut unique)
}

fn validate_prefixes<'a>(
    kind: &str,
    prefixes: &'a [String],
    unique: &mut std::collections::BTreeSet<&'a str>,
) -> Result<(), String> {
    for p in prefixes {
        if p.is_empty() {
            return Err(format!("error: supplied {kind} prefix must not be the empty string\n"));
        }
        if !p.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-') {
            return Err(format!(
                "error: supplied {kind} prefix must start with a letter and contain only \
                 alphanumeric characters, hyphens, and underscores: '{p}'\n"
            ));
        }
        if !unique.insert(p) {
            return Err(format!(
                "error: supplied {kind} prefix must be unique among check and comment prefixes: '{p}'\n"
            ));
        }
    }
    Ok(())
}

fn display_name(name: &str) -> &str {
    if name == "-" {
        "<stdin>"
    } else {
        name
    }
}

fn default_list(given: &[String], default: &[&str]) -> Vec<String> {
    if given.is_empty() {
        default.iter().map(|s| s.to_string()).collect()
    } else {
        given.to_vec()
    }
}

fn run_inner(
    opts: &Options,
    check_name: &str,
    check_text: &[u8],
    input_name: &str,
    input: Result<&[u8], String>,
) -> Outcome {
    if let Err(msg) = validate(opts) {
        return Outcome::err(2, msg);
    }
    let mut stderr = String::new();
    let mut sm = SourceMgr::default();
    let check_buf = sm.add(check_name, source::canonicalize(check_text, opts.strict_whitespace));
    let mut ctx = Context::default();
    let file = match read_checks(opts, &mut sm, check_buf, &mut ctx, &mut stderr) {
        Ok(f) => f,
        Err(code) => return Outcome::err(code, stderr),
    };
    let shown_input = display_name(input_name);
    let input = match usable_input(opts, input, shown_input) {
        Ok(i) => i,
        Err(msg) => return Outcome::err(2, stderr + &msg),
    };
    let input_buf = sm.add(shown_input, source::canonicalize(input, opts.strict_whitespace));
    let (passed, out, diags) = check_input(opts, &sm, input_buf, &file, &mut ctx);
    stderr.push_str(&out);
    let exit_code = if passed { 0 } else { 1 };
    let dump = opts.dump_input == DumpInput::Always || (exit_code == 1 && opts.dump_input == DumpInput::Fail);
    if dump {
        let labels = DumpLabels { check_buf, implicit_bufs: &file.implicit_bufs };
        stderr.push_str(&render_dump(opts, &sm, &labels, &diags, input_buf, check_name));
    }
    Outcome { exit_code, stdout: String::new(), stderr }
}

/// Applies `-D` definitions and reads the check file.
fn read_checks(
    opts: &Options,
    sm: &mut SourceMgr,
    check_buf: source::BufId,
    ctx: &mut Context,
    stderr: &mut String,
) -> Result<directive::CheckFile, i32> {
    if !ctx.define_cmdline(&opts.defines, sm, stderr) {
        return Err(2);
    }
    ctx.create_line_var();
    let check_prefixes = default_list(&opts.check_prefixes, &["CHECK"]);
    let comment_prefixes = default_list(&opts.comment_prefixes, &["COM", "RUN"]);
    let read_opts = ReadOptions {
        check_prefixes: &check_prefixes,
        comment_prefixes: &comment_prefixes,
        default_prefix: opts.check_prefixes.is_empty(),
        implicit_check_not: &opts.implicit_check_not,
        allow_unused_prefixes: opts.allow_unused_prefixes,
        pattern: PatternOptions {
            strict_whitespace: opts.strict_whitespace,
            match_full_lines: opts.match_full_lines,
            ignore_case: opts.ignore_case,
        },
    };
    directive::read_check_file(sm, check_buf, &read_opts, ctx, stderr)
}

/// The input text, or the error LLVM reports for an unreadable or empty input.
fn usable_input<'a>(opts: &Options, input: Result<&'a [u8], String>, shown: &str) -> Result<&'a [u8], String> {
    let input = input.map_err(|e| format!("Could not open input file '{shown}': {e}\n"))?;
    if input.is_empty() && !opts.allow_empty {
        let cmd: String = opts.command_line.iter().map(|a| format!(" {a}")).collect();
        return Err(format!("FileCheck error: '{shown}' is empty.\nFileCheck command line: {cmd}\n"));
    }
    Ok(input)
}

/// Runs the checks; returns whether they passed, the diagnostics text and the dump annotations.
fn check_input(
    opts: &Options,
    sm: &SourceMgr,
    input_buf: source::BufId,
    file: &directive::CheckFile,
    ctx: &mut Context,
) -> (bool, String, Vec<report::FcDiag>) {
    let record = opts.dump_input != DumpInput::Never;
    let mut rep = Reporter::new(sm, input_buf, record, opts.verbose, opts.verbose_verbose);
    let passed = Matcher {
        checks: &file.checks,
        input: sm.text(input_buf),
        ctx,
        rep: &mut rep,
        opts: MatchOptions {
            enable_var_scope: opts.enable_var_scope,
            allow_dag_overlap: opts.allow_deprecated_dag_overlap,
        },
    }
    .check_input();
    let (out, diags) = rep.into_parts();
    (passed, out, diags)
}

/// The `--dump-input` block: header and annotated input.
fn render_dump(
    opts: &Options,
    sm: &SourceMgr,
    labels: &DumpLabels<'_>,
    diags: &[report::FcDiag],
    input_buf: source::BufId,
    check_name: &str,
) -> String {
    let default_filter =
        if opts.dump_input == DumpInput::Always { DumpInputFilter::All } else { DumpInputFilter::Error };
    let dump_opts =
        DumpOptions { filter: opts.dump_input_filter.unwrap_or(default_filter), context: opts.dump_input_context };
    let input_name = &sm.buf(input_buf).name;
    let mut out = format!(
        "\nInput file: {input_name}\nCheck file: {check_name}\n\n-dump-input=help explains the following input dump.\n\n"
    );
    out.push_str(&report::dump_input(sm, labels, diags, sm.text(input_buf), &dump_opts));
    out
}

const DUMP_INPUT_HELP: &str = "\
The following description was requested by -dump-input=help to
explain the input dump printed by FileCheck.

Related command-line options:

  - -dump-input=<value> enables or disables the input dump
  - -dump-input-filter=<value> filters the input lines
  - -dump-input-context=<N> adjusts the context of filtered lines
  - -v and -vv add more annotations
  - -color forces colors to be enabled both in the dump and below
  - -help documents the above options in more detail

These options can also be set via FILECHECK_OPTS.  For example, for
maximum debugging output on failures:

  $ FILECHECK_OPTS='-dump-input-filter=all -vv -color' ninja check

Input dump annotation format:

  - L:     labels line number L of the input file
           An extra space is added after each input line to represent the
           newline character
  - T:L    labels the only match result for either (1) a pattern of type T from
           line L of the check file if L is an integer or (2) the I-th implicit
           pattern if L is \"imp\" followed by an integer I (index origin one)
  - T:L'N  labels the Nth match result for such a pattern
  - ^~~    marks good match (reported if -v)
  - !~~    marks bad match, such as:
           - CHECK-NEXT on same line as previous match (error)
           - CHECK-NOT found (error)
           - CHECK-DAG overlapping match (discarded, reported if -vv)
  - X~~    marks search range when no match is found, such as:
           - CHECK-NEXT not found (error)
           - CHECK-NOT not found (success, reported if -vv)
           - CHECK-DAG not found after discarded matches (error)
  - ?      marks fuzzy match when no match is found
  - ...    indicates elided input lines and annotations, as specified by
           -dump-input-filter and -dump-input-context
  - colors success, error, fuzzy match, discarded match, unmatched input
";

#[cfg(test)]
mod tests;
