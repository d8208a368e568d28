//! Runs the FileCheck conformance corpus (`test/filecheck-conformance/`) through the library
//! and through the `tap-filecheck` binary, asserting the expected exit code of every case.
//!
//! Each case NAME has `NAME.chk` (check file), `NAME.in` (input), `NAME.args` (extra
//! arguments, one line) and `NAME.exit` (expected exit code). The expectations were verified
//! against LLVM FileCheck 19 with `test/filecheck-conformance/crosscheck.sh`; `NAME.llvm-exit`
//! marks an intentional divergence (the exit code LLVM gives instead).

use std::path::{Path, PathBuf};
use std::process::Command;

struct Case {
    name: String,
    args: Vec<String>,
    exit: i32,
}

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("test/filecheck-conformance")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn cases() -> Vec<Case> {
    let dir = corpus_dir();
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("corpus directory")
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            name.strip_suffix(".chk").map(str::to_string)
        })
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|name| {
            let base = dir.join(&name);
            let args = read(&base.with_extension("args")).split_whitespace().map(str::to_string).collect();
            let exit = read(&base.with_extension("exit")).trim().parse().unwrap_or_else(|e| panic!("{name}.exit: {e}"));
            Case { name, args, exit }
        })
        .collect()
}

fn argv(prog: &str, case: &Case) -> Vec<String> {
    let mut v =
        vec![prog.to_string(), format!("{}.chk", case.name), "--input-file".to_string(), format!("{}.in", case.name)];
    v.extend(case.args.iter().cloned());
    v
}

fn check_all(run: impl Fn(&Case) -> (i32, String)) {
    let all = cases();
    assert!(all.len() >= 70, "corpus has only {} cases", all.len());
    let failures: Vec<String> = all
        .iter()
        .filter_map(|case| {
            let (code, stderr) = run(case);
            (code != case.exit).then(|| format!("{}: exit {code}, expected {}\n{stderr}", case.name, case.exit))
        })
        .collect();
    assert!(failures.is_empty(), "{} of {} cases failed:\n{}", failures.len(), all.len(), failures.join("\n"));
}

#[test]
fn corpus_through_library() {
    let dir = corpus_dir();
    check_all(|case| {
        let mut args = argv("FileCheck", case);
        // Resolve the file names against the corpus directory without changing the process
        // working directory (tests run in parallel).
        args[1] = dir.join(&args[1]).display().to_string();
        args[3] = dir.join(&args[3]).display().to_string();
        let out = tapestry::filecheck::run_command(&args, None, &mut std::io::empty());
        (out.exit_code, out.stderr)
    });
}

#[test]
fn corpus_through_binary() {
    let bin = env!("CARGO_BIN_EXE_tap-filecheck");
    let dir = corpus_dir();
    check_all(|case| {
        let args = argv(bin, case);
        let out = Command::new(bin)
            .args(&args[1..])
            .current_dir(&dir)
            .env_remove("FILECHECK_OPTS")
            .output()
            .expect("run tap-filecheck");
        let code = out.status.code().unwrap_or(-1);
        (code, String::from_utf8_lossy(&out.stderr).into_owned())
    });
}

#[test]
fn binary_reads_stdin_and_filecheck_opts() {
    let bin = env!("CARGO_BIN_EXE_tap-filecheck");
    let dir = corpus_dir();
    let run = |opts: &str, input: &str| {
        use std::io::Write;
        let mut child = Command::new(bin)
            .arg("plain_pass.chk")
            .current_dir(&dir)
            .env("FILECHECK_OPTS", opts)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn tap-filecheck");
        child.stdin.take().expect("stdin").write_all(input.as_bytes()).expect("write stdin");
        let out = child.wait_with_output().expect("wait");
        (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    assert_eq!(run("", "foo\nbar\n").0, 0);
    let (code, stderr) = run("--dump-input=never", "foo\n");
    assert_eq!(code, 1);
    assert!(stderr.contains("<stdin>:1:4: note: scanning from here"), "{stderr}");
    assert!(!stderr.contains("Input was:"), "{stderr}");
    let (code, stderr) = run("", "foo\n");
    assert_eq!(code, 1);
    assert!(stderr.contains("Input was:"), "{stderr}");
}
