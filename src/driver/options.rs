//! `tap-opt`'s command line: MLIR's flags (without the `mlir-` prefix, which is accepted as an alias).

/// How `--verify-diagnostics` treats diagnostics without an annotation.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum VerifyMode {
    /// Every diagnostic must be expected.
    All,
    /// Unexpected diagnostics are ignored.
    OnlyExpected,
}

/// Parsed `tap-opt` options.
#[derive(Clone, Debug)]
pub struct Options {
    /// Input path, `-` for stdin.
    pub input: String,
    /// Output path, `-` for stdout.
    pub output: String,
    /// `--pass-pipeline=`.
    pub pipeline: Option<String>,
    /// `--split-input-file[=marker]`.
    pub split_marker: Option<String>,
    /// `--output-split-marker=`.
    pub output_split_marker: String,
    /// `--verify-diagnostics[=mode]`.
    pub verify_diagnostics: Option<VerifyMode>,
    /// `--print-op-generic`.
    pub print_generic: bool,
    /// `--print-debuginfo`.
    pub print_debuginfo: bool,
    /// `--allow-unregistered-dialect`.
    pub allow_unregistered: bool,
    /// `--print-ir-before-all`.
    pub print_before_all: bool,
    /// `--print-ir-after-all`.
    pub print_after_all: bool,
    /// `--print-ir-before=PASS` (repeatable, comma lists allowed).
    pub print_before: Vec<String>,
    /// `--print-ir-after=PASS`.
    pub print_after: Vec<String>,
    /// `--print-ir-after-change`.
    pub print_after_change: bool,
    /// `--print-ir-after-failure`.
    pub print_after_failure: bool,
    /// `--print-ir-module-scope`: dumps show the whole top-level op, not only the op the pass ran on.
    pub print_module_scope: bool,
    /// `--timing`.
    pub timing: bool,
    /// `--pass-statistics`.
    pub pass_statistics: bool,
    /// `--list-passes`.
    pub list_passes: bool,
    /// `--show-dialects`.
    pub show_dialects: bool,
    /// `--dump-pass-pipeline`.
    pub dump_pass_pipeline: bool,
    /// `--verify-each` (default on).
    pub verify_each: bool,
    /// `--diagnostic-style=mlir|rich`.
    pub rich_diagnostics: bool,
    /// Passes given as individual flags (`--symbol-dce`, `--canonicalize=max-iterations=3`), in order.
    pub pass_flags: Vec<(String, String)>,
    /// `--help`.
    pub help: bool,
    /// `--version`.
    pub version: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            input: "-".into(),
            output: "-".into(),
            pipeline: None,
            split_marker: None,
            output_split_marker: "// -----".into(),
            verify_diagnostics: None,
            print_generic: false,
            print_debuginfo: false,
            allow_unregistered: false,
            print_before_all: false,
            print_after_all: false,
            print_before: Vec::new(),
            print_after: Vec::new(),
            print_after_change: false,
            print_after_failure: false,
            print_module_scope: false,
            timing: false,
            pass_statistics: false,
            list_passes: false,
            show_dialects: false,
            dump_pass_pipeline: false,
            verify_each: true,
            rich_diagnostics: false,
            pass_flags: Vec::new(),
            help: false,
            version: false,
        }
    }
}

/// The `--help` text.
pub const HELP: &str = "OVERVIEW: Tapestry modular optimizer driver

USAGE: tap-opt [options] <input file>

OPTIONS:
  -o <filename>                      Output filename (default: stdout)
  --pass-pipeline=<pipeline>         A textual pass pipeline, e.g. 'builtin.module(func.func(cse))' (alias -p)
  --split-input-file[=<marker>]      Split the input on '// -----' and process each chunk independently
  --output-split-marker=<marker>     Marker written between output chunks (default '// -----')
  --verify-diagnostics[=all|only-expected]
                                     Check emitted diagnostics against expected-* comments
  --print-op-generic                 Print every op in the generic form
  --print-debuginfo                  Print locations as loc(...)
  --allow-unregistered-dialect       Accept ops, types and attributes of unregistered dialects
  --print-ir-before-all / --print-ir-after-all
  --print-ir-before=<pass> / --print-ir-after=<pass>
  --print-ir-after-change / --print-ir-after-failure
                                     Dump the IR around passes (to stderr)
  --print-ir-module-scope            Dumps show the whole top-level op
  --timing                           Report execution times (to stderr)
  --pass-statistics                  Report pass statistics (to stderr)
  --list-passes                      List registered passes and pipelines
  --show-dialects                    List registered dialects and their ops
  --dump-pass-pipeline               Print the pipeline that will run (to stderr)
  --verify-each[=true|false]         Verify the IR after each pass (default true)
  --diagnostic-style=mlir|rich       Diagnostic layout (default mlir)
  --help, --version
The mlir-opt spellings with the 'mlir-' prefix (e.g. --mlir-print-op-generic) are accepted too.
";

fn bool_value(flag: &str, value: Option<&str>) -> Result<bool, String> {
    match value {
        None | Some("true") | Some("1") => Ok(true),
        Some("false") | Some("0") => Ok(false),
        Some(v) => {
            Err(format!("tap-opt: for the --{flag} option: '{v}' is invalid value for boolean argument! Try 0 or 1"))
        }
    }
}

/// Parses the arguments (without the program name); flags naming a registered pass or pipeline become passes.
pub fn parse_args(args: &[String], passes: &crate::passes::PassRegistry) -> Result<Options, String> {
    let mut o = Options::default();
    let mut positional = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        if arg == "-" || !arg.starts_with('-') {
            positional.push(arg.clone());
            continue;
        }
        let body = arg.trim_start_matches('-');
        let (flag, value) = match body.split_once('=') {
            Some((f, v)) => (f, Some(v)),
            None => (body, None),
        };
        let flag = flag.strip_prefix("mlir-").unwrap_or(flag);
        let mut take = |name: &str| -> Result<String, String> {
            if let Some(v) = value {
                return Ok(v.to_string());
            }
            let v = args.get(i).ok_or(format!("tap-opt: option '--{name}' requires a value"))?;
            i += 1;
            Ok(v.clone())
        };
        match flag {
            "o" => o.output = take("o")?,
            "pass-pipeline" | "p" => o.pipeline = Some(take("pass-pipeline")?),
            "split-input-file" => o.split_marker = Some(value.unwrap_or("// -----").to_string()),
            "output-split-marker" => o.output_split_marker = take("output-split-marker")?,
            "verify-diagnostics" => {
                o.verify_diagnostics = Some(match value {
                    None | Some("all") => VerifyMode::All,
                    Some("only-expected") => VerifyMode::OnlyExpected,
                    Some(v) => {
                        return Err(format!(
                            "tap-opt: for the --verify-diagnostics option: Cannot find option named '{v}'!"
                        ))
                    }
                })
            }
            "print-op-generic" => o.print_generic = bool_value(flag, value)?,
            "print-debuginfo" | "pretty-debuginfo" => o.print_debuginfo = bool_value(flag, value)?,
            "allow-unregistered-dialect" => o.allow_unregistered = bool_value(flag, value)?,
            "print-ir-before-all" => o.print_before_all = bool_value(flag, value)?,
            "print-ir-after-all" => o.print_after_all = bool_value(flag, value)?,
            "print-ir-before" => o.print_before.extend(take(flag)?.split(',').map(str::to_string)),
            "print-ir-after" => o.print_after.extend(take(flag)?.split(',').map(str::to_string)),
            "print-ir-after-change" => o.print_after_change = bool_value(flag, value)?,
            "print-ir-after-failure" => o.print_after_failure = bool_value(flag, value)?,
            "print-ir-module-scope" => o.print_module_scope = bool_value(flag, value)?,
            "timing" => o.timing = bool_value(flag, value)?,
            "pass-statistics" => o.pass_statistics = bool_value(flag, value)?,
            "list-passes" => o.list_passes = true,
            "show-dialects" => o.show_dialects = true,
            "dump-pass-pipeline" => o.dump_pass_pipeline = true,
            "verify-each" => o.verify_each = bool_value(flag, value)?,
            "diagnostic-style" => {
                o.rich_diagnostics = match take(flag)?.as_str() {
                    "mlir" => false,
                    "rich" => true,
                    v => {
                        return Err(format!(
                            "tap-opt: for the --diagnostic-style option: Cannot find option named '{v}'!"
                        ))
                    }
                }
            }
            "disable-threading" | "print-local-scope" => {}
            "help" | "h" => o.help = true,
            "version" => o.version = true,
            name if passes.knows(name) => o.pass_flags.push((name.to_string(), value.unwrap_or("").to_string())),
            _ => return Err(format!("tap-opt: Unknown command line argument '{arg}'.  Try: 'tap-opt --help'")),
        }
    }
    match positional.len() {
        0 => {}
        1 => o.input = positional.remove(0),
        _ => return Err("tap-opt: Too many positional arguments specified!\nCan specify at most 1 positional arguments: See: tap-opt --help".into()),
    }
    Ok(o)
}
