//! The lit test runner: every `test/lit/**/*.tap` file (outside `Inputs/` directories) is one libtest trial
//! whose RUN lines are executed by an internal shell, without bash, lit or any LLVM tool installed.
//!
//! * Trials are named by their path under `test/lit` (`cargo test --test lit -- filecheck/` filters).
//! * Directives: `RUN:` (trailing `\` continues on the next `RUN:` line), `XFAIL:`, `REQUIRES:`, `UNSUPPORTED:`,
//!   `ALLOW_RETRIES:`, `END.`. Features: `interpreter`, `npu-device` if `TAP_HAS_NPU_DEVICE` is set, and any listed
//!   in `TAP_LIT_FEATURES` (comma- or space-separated). Unmet `REQUIRES` / matched `UNSUPPORTED` ignore the
//!   trial with a reason; a passing `XFAIL` test fails (XPASS). A file without RUN lines fails.
//! * Substitutions: `%s`, `%S`/`%p`, `%t` = `<exec root>/<dir>/Output/<file>.tmp`, `%T` (its directory),
//!   `%basename_t`, `%{pathsep}`, `%%`, and `%(line)` — the layout real lit uses with `test/lit/lit.cfg.py`.
//!   The exec root is `<cargo target dir>/lit`, or `TAP_LIT_EXEC_ROOT`. `%t` is not deleted between runs (as
//!   in lit): a test that needs a fresh directory runs `rm -rf %t && mkdir -p %t`.
//! * Commands run with the working directory `<exec root>/<dir>` (lit's choice), so stray relative outputs
//!   never land in the source tree. Tests should still name files through `%t` / `%S` only.
//! * Tools: the first word of each command (after `not` / `env`) is resolved as `tap-opt` → the crate's
//!   binary (override: `TAP_LIT_TAP_OPT`), `FileCheck` → `tap-filecheck` (override: `TAP_LIT_FILECHECK`, e.g.
//!   `/usr/bin/FileCheck-19`), and any other name that exists next to `tap-opt` in the cargo target directory
//!   (`tap-filecheck`, `tap-run`, …); anything else is looked up on `PATH`.
//! * Shell (`tests/lit/shell.rs`, `tests/lit/exec.rs`): quotes and `\` escapes like lit's, `|` (pipefail: every
//!   stage must succeed; stages run one after the other on buffered data), `&&` `||` `;` (equal precedence, left
//!   to right, as in lit), `>` `>>` `<` `2>` `2>>` `2>&1` `>&2` `&>`, prefixes `not` / `not --crash` / `env`, and
//!   built-ins `echo` (`-n`, `-e`) `cat` `diff` `rm` `mkdir` `cd` `export` `true` `false` `:`. No globbing, no `&`.
//! * Children get `FILECHECK_OPTS=--dump-input=fail`. Each external command has a timeout of
//!   `TAP_LIT_TIMEOUT` seconds (default 300).

#[path = "lit/directives.rs"]
mod directives;
#[path = "lit/exec.rs"]
mod exec;
#[path = "lit/shell.rs"]
mod shell;
#[path = "lit/subst.rs"]
mod subst;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use libtest_mimic::{Arguments, Completion, Failed, Trial};

use directives::Verdict;

/// What every trial shares.
struct Suite {
    /// `test/lit` in the source tree.
    source_root: PathBuf,
    /// Where `%t` and working directories go.
    exec_root: PathBuf,
    /// Fixed tool names (`tap-opt`, `FileCheck`, `tap-filecheck`).
    tools: BTreeMap<&'static str, PathBuf>,
    /// The directory of the crate's binaries, for other tool names.
    bin_dir: PathBuf,
    features: BTreeSet<String>,
    timeout: Duration,
}

impl Suite {
    fn from_env() -> Suite {
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
        let tap_opt = PathBuf::from(env!("CARGO_BIN_EXE_tap-opt"));
        let tap_filecheck = PathBuf::from(env!("CARGO_BIN_EXE_tap-filecheck"));
        let bin_dir = tap_opt.parent().expect("binary directory").to_path_buf();
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        let target_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).parent().expect("target directory").to_path_buf();
        let mut tools = BTreeMap::new();
        tools.insert("tap-opt", var("TAP_LIT_TAP_OPT").unwrap_or(tap_opt));
        tools.insert("FileCheck", var("TAP_LIT_FILECHECK").unwrap_or_else(|| tap_filecheck.clone()));
        tools.insert("tap-filecheck", tap_filecheck);
        let mut features: BTreeSet<String> = ["interpreter".to_string()].into();
        if var("TAP_HAS_NPU_DEVICE").is_some() {
            features.insert("npu-device".into());
        }
        if let Ok(extra) = std::env::var("TAP_LIT_FEATURES") {
            features.extend(extra.split([',', ' ']).filter(|f| !f.is_empty()).map(str::to_string));
        }
        let timeout = std::env::var("TAP_LIT_TIMEOUT").ok().and_then(|s| s.parse().ok()).unwrap_or(300);
        Suite {
            source_root: manifest.join("test").join("lit"),
            exec_root: var("TAP_LIT_EXEC_ROOT").unwrap_or_else(|| target_dir.join("lit")),
            tools,
            bin_dir,
            features,
            timeout: Duration::from_secs(timeout),
        }
    }

    fn resolve(&self, name: &str) -> Option<PathBuf> {
        if let Some(p) = self.tools.get(name) {
            return Some(p.clone());
        }
        if name.contains('/') || name.is_empty() {
            return None;
        }
        let p = self.bin_dir.join(name);
        p.is_file().then_some(p)
    }
}

/// Every `.tap` file under `dir`, skipping `Inputs` directories, as paths relative to `root`.
fn discover(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if entry.file_name() != "Inputs" {
                discover(root, &path, out);
            }
        } else if path.extension().is_some_and(|e| e == "tap") {
            out.push(path.strip_prefix(root).expect("under the root").to_path_buf());
        }
    }
}

fn trial_name(rel: &Path) -> String {
    rel.iter().map(|c| c.to_string_lossy()).collect::<Vec<_>>().join("/")
}

/// Runs one test file.
fn run_test(suite: &Suite, rel: &Path) -> Result<Completion, Failed> {
    let source = suite.source_root.join(rel);
    let text = fs::read_to_string(&source).map_err(|e| format!("cannot read {}: {e}", source.display()))?;
    let script = directives::parse(&text).map_err(|e| format!("{}: {e}", rel.display()))?;
    let xfail = match script.verdict(&suite.features).map_err(|e| format!("{}: {e}", rel.display()))? {
        Verdict::Skip(reason) => return Ok(Completion::ignored_with(reason)),
        Verdict::Run { xfail } => xfail,
    };
    if script.runs.is_empty() {
        return Err(format!("{}: no RUN line", rel.display()).into());
    }
    let exec_dir = match rel.parent() {
        Some(p) => suite.exec_root.join(p),
        None => suite.exec_root.clone(),
    };
    let subs = subst::Substitutions::new(&source, &exec_dir);
    fs::create_dir_all(&subs.tmp_dir).map_err(|e| format!("cannot create {}: {e}", subs.tmp_dir))?;

    let mut attempts = script.allow_retries + 1;
    let transcript = loop {
        attempts -= 1;
        match run_script(suite, &script, &subs, &exec_dir) {
            Ok(()) if xfail => return Err(format!("XPASS: {} passed but is marked XFAIL", rel.display()).into()),
            Ok(()) => return Ok(Completion::Completed),
            Err(_) if xfail => return Ok(Completion::Completed),
            Err(t) if attempts == 0 => break t,
            Err(_) => {}
        }
    };
    Err(format!("{}\n{transcript}", rel.display()).into())
}

/// Runs the RUN lines in order and stops at the first failing one; `Err` holds the transcript.
fn run_script(
    suite: &Suite,
    script: &directives::Script,
    subs: &subst::Substitutions,
    exec_dir: &Path,
) -> Result<(), String> {
    let resolve = |name: &str| suite.resolve(name);
    let mut sh = exec::Shell {
        cwd: exec_dir.to_path_buf(),
        env: [("FILECHECK_OPTS".to_string(), Some("--dump-input=fail".to_string()))].into(),
        resolve: &resolve,
        timeout: suite.timeout,
        transcript: String::new(),
    };
    for run in &script.runs {
        let line = subs.apply(&run.command);
        let _ = writeln!(sh.transcript, "# RUN: at line {}: {line}", run.line);
        let status = sh.run_line(&line);
        if !status.success() {
            let _ = writeln!(sh.transcript, "# error: RUN line {} failed (exit status {})", run.line, status.code);
            return Err(sh.transcript);
        }
    }
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let suite = Arc::new(Suite::from_env());
    let mut files = Vec::new();
    discover(&suite.source_root, &suite.source_root, &mut files);
    files.sort();
    let trials = files
        .into_iter()
        .map(|rel| {
            let suite = Arc::clone(&suite);
            Trial::ignorable_test(trial_name(&rel), move || run_test(&suite, &rel))
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}
