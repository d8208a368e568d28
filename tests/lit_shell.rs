//! Unit tests of the lit runner's pieces (shell syntax, execution, directives, substitutions), which live in
//! `tests/lit/` and are shared with `tests/lit.rs`; that binary has no libtest harness, so they run here.

#[path = "lit/directives.rs"]
mod directives;
#[path = "lit/exec.rs"]
mod exec;
#[path = "lit/shell.rs"]
mod shell;
#[path = "lit/subst.rs"]
mod subst;

mod shell_tests {
    use super::shell::*;

    fn words(line: &str) -> Vec<String> {
        lex(line)
            .unwrap()
            .into_iter()
            .map(|t| match t {
                Token::Word(w) => w,
                other => format!("<{other}>"),
            })
            .collect()
    }

    #[test]
    fn quotes_and_escapes() {
        assert_eq!(words(r#"echo 'a b' "c \"d\" \n" e\ f"#), ["echo", "a b", r#"c "d" \n"#, "e f"]);
        assert_eq!(words(r#"x"y"'z' '' """#), ["xyz", "", ""]);
        assert_eq!(words(r"a\|b 'c|d'"), ["a|b", "c|d"]);
        assert!(lex("echo 'open").is_err());
    }

    #[test]
    fn operators_and_redirections() {
        assert_eq!(
            lex("a 2>&1|b>>f&&c 2> g;d &> h < i").unwrap(),
            vec![
                Token::Word("a".into()),
                Token::Redir(Some(2), ">&"),
                Token::Word("1".into()),
                Token::Op("|"),
                Token::Word("b".into()),
                Token::Redir(None, ">>"),
                Token::Word("f".into()),
                Token::Op("&&"),
                Token::Word("c".into()),
                Token::Redir(Some(2), ">"),
                Token::Word("g".into()),
                Token::Op(";"),
                Token::Word("d".into()),
                Token::Redir(None, "&>"),
                Token::Word("h".into()),
                Token::Redir(None, "<"),
                Token::Word("i".into()),
            ]
        );
        // A quoted or non-numeric word before `>` is an ordinary argument.
        assert_eq!(words("echo '2'>f x2>g"), ["echo", "2", "<'>'>", "f", "x2", "<'>'>", "g"]);
    }

    #[test]
    fn lists_and_pipelines() {
        let l = parse("not a x | b --y=1 && c || d ; e").unwrap();
        assert_eq!(l.first.commands.len(), 2);
        assert_eq!(l.first.commands[0].args, ["not", "a", "x"]);
        assert_eq!(l.first.commands[1].args, ["b", "--y=1"]);
        let ops: Vec<ListOp> = l.rest.iter().map(|(o, _)| *o).collect();
        assert_eq!(ops, [ListOp::And, ListOp::Or, ListOp::Seq]);
        let r = parse("a > out 2>&1").unwrap().first.commands[0].redirects.clone();
        assert_eq!(
            r,
            [
                Redirect { fd: None, op: RedirOp::Write, target: "out".into() },
                Redirect { fd: Some(2), op: RedirOp::Dup, target: "1".into() },
            ]
        );
        assert!(parse("a |").is_err());
        assert!(parse("| a").is_err());
        assert!(parse("a &&").is_err());
        assert!(parse("a >").is_err());
        assert!(parse("a & b").is_err());
        assert!(parse("a ;").is_ok());
    }

    #[test]
    fn quote_roundtrips() {
        for w in ["plain", "a b", "it's", "", "x|y", "%t.out"] {
            assert_eq!(words(&quote(w)), [w]);
        }
    }
}

mod subst_tests {
    use super::subst::*;
    use std::path::Path;

    fn subs() -> Substitutions {
        Substitutions::new(Path::new("/src/test/lit/fc/a.tap"), Path::new("/out/lit/fc"))
    }

    #[test]
    fn paths() {
        let s = subs();
        assert_eq!(s.apply("x %s %S %p"), "x /src/test/lit/fc/a.tap /src/test/lit/fc /src/test/lit/fc");
        assert_eq!(s.apply("%t %T %basename_t"), "/out/lit/fc/Output/a.tap.tmp /out/lit/fc/Output a.tap");
        assert_eq!(s.apply("%t.out %/t %{pathsep}"), "/out/lit/fc/Output/a.tap.tmp.out /out/lit/fc/Output/a.tap.tmp :");
    }

    #[test]
    fn percent_escapes_are_not_resubstituted() {
        let s = subs();
        assert_eq!(s.apply("echo %%s %%%s 100%"), "echo %s %/src/test/lit/fc/a.tap 100%");
        assert_eq!(s.apply("%q %"), "%q %");
        assert_eq!(s.apply("  padded  "), "padded");
    }
}

mod directives_tests {
    use super::directives::*;
    use std::collections::BTreeSet;

    fn features() -> BTreeSet<String> {
        ["interpreter", "x86"].iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn run_lines_and_continuations() {
        let s = parse(
            "// RUN: a %s \\\n// RUN:   | b\nnothing\n# RUN: c %(line) %(line+2) %(line - 1)\n// END.\n// RUN: d\n",
        )
        .unwrap();
        assert_eq!(
            s.runs,
            [RunLine { line: 1, command: " a %s    | b".into() }, RunLine { line: 4, command: " c 4 6 3".into() },]
        );
        assert!(parse("// RUN: a \\\n").is_err());
        assert!(parse("// RUN: a \\\n// XFAIL: *\n").is_err());
        // Keywords are found anywhere on a line, leftmost first.
        assert_eq!(parse("// BAD-RUN: x XFAIL: y").unwrap().runs[0].command, " x XFAIL: y");
    }

    #[test]
    fn feature_directives() {
        let f = features();
        let s = parse("// REQUIRES: interpreter, x86 && !arm\n// XFAIL: *\n").unwrap();
        assert_eq!(s.verdict(&f).unwrap(), Verdict::Run { xfail: true });
        let s = parse("// REQUIRES: npu-device\n").unwrap();
        assert!(matches!(s.verdict(&f).unwrap(), Verdict::Skip(r) if r.contains("npu-device")));
        let s = parse("// UNSUPPORTED: arm || (x86 && interpreter)\n").unwrap();
        assert!(matches!(s.verdict(&f).unwrap(), Verdict::Skip(_)));
        let s = parse("// XFAIL: arm\n").unwrap();
        assert_eq!(s.verdict(&f).unwrap(), Verdict::Run { xfail: false });
        assert!(parse("// REQUIRES: a &&\n").is_err());
        assert!(parse("// REQUIRES: a,,b\n").is_err());
    }

    #[test]
    fn boolean_expressions() {
        let f = features();
        assert!(eval("true", &f).unwrap());
        assert!(!eval("!interpreter", &f).unwrap());
        assert!(eval("arm || x86 && interpreter", &f).unwrap());
        assert!(!eval("(arm || x86) && !interpreter", &f).unwrap());
        assert!(eval("x86 && interpreter || arm", &f).unwrap());
        assert!(eval("a)", &f).is_err());
        assert!(eval("(a", &f).is_err());
        assert!(eval("a $ b", &f).is_err());
    }
}

mod exec_tests {
    use super::exec::*;
    use std::collections::BTreeMap;
    use std::fs;
    use std::path::{Path, PathBuf};
    use std::time::Duration;

    fn shell(dir: &Path) -> Shell<'static> {
        Shell {
            cwd: dir.to_path_buf(),
            env: BTreeMap::new(),
            resolve: &|_| None,
            timeout: Duration::from_secs(60),
            transcript: String::new(),
        }
    }

    fn scratch(name: &str) -> PathBuf {
        let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("lit-shell-tests").join(name);
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn builtins_pipes_and_redirections() {
        let d = scratch("builtins");
        let mut sh = shell(&d);
        assert!(sh.run_line("echo hello   world | cat > out.txt && cat out.txt - < out.txt >> both.txt").success());
        assert_eq!(fs::read_to_string(d.join("both.txt")).unwrap(), "hello world\nhello world\n");
        assert!(sh.run_line("echo -n -e 'a\\tb\\x41' > e.txt").success());
        assert_eq!(fs::read(d.join("e.txt")).unwrap(), b"a\tbA");
        assert!(sh.run_line("mkdir -p sub/deeper && cd sub && echo x > f").success());
        assert!(d.join("sub/f").exists());
        assert!(sh.run_line("rm -rf deeper f && rm -f nonexistent").success());
        assert!(!sh.run_line("rm nonexistent").success());
        assert!(!sh.run_line("cd nowhere").success());
    }

    #[test]
    fn status_logic() {
        let d = scratch("status");
        let mut sh = shell(&d);
        assert!(sh.run_line("true").success());
        assert!(!sh.run_line("false").success());
        assert!(sh.run_line("not false").success());
        assert!(!sh.run_line("not true").success());
        assert!(sh.run_line("not not true").success());
        // pipefail: any failing stage fails the pipeline.
        assert!(!sh.run_line("false | true").success());
        assert!(!sh.run_line("true | false").success());
        assert!(sh.run_line("false || true").success());
        assert!(!sh.run_line("false && true").success());
        assert!(sh.run_line("false ; true").success());
        // Left-associative, equal precedence: (true || false) && false.
        assert!(!sh.run_line("true || false && false").success());
        assert!(!sh.run_line("nonexistent-tool-xyz").success());
        assert!(sh.run_line("not nonexistent-tool-xyz").success());
    }

    #[test]
    fn diff_builtin() {
        let d = scratch("diff");
        let mut sh = shell(&d);
        assert!(sh.run_line("echo a b > x && echo 'a  b' > y && diff -b x y").success());
        assert!(sh.run_line("not diff x y > d.txt").success());
        assert_eq!(fs::read_to_string(d.join("d.txt")).unwrap(), "--- x\n+++ y\n-a b\n+a  b\n");
        assert!(sh.run_line("echo a b | diff - x").success());
    }

    #[cfg(unix)]
    #[test]
    fn external_commands_and_fd_duplication() {
        let d = scratch("external");
        let mut sh = shell(&d);
        // `sh` is only used by this unit test, never by the runner.
        assert!(sh.run_line("sh -c 'echo out; echo err >&2' > o.txt 2>&1").success());
        assert_eq!(fs::read_to_string(d.join("o.txt")).unwrap(), "out\nerr\n");
        assert!(sh.run_line("sh -c 'echo err >&2' 2>&1 | cat > p.txt").success());
        assert_eq!(fs::read_to_string(d.join("p.txt")).unwrap(), "err\n");
        assert!(sh.run_line("env FOO=bar sh -c 'echo $FOO' > v.txt").success());
        assert_eq!(fs::read_to_string(d.join("v.txt")).unwrap(), "bar\n");
        assert!(sh.run_line("not sh -c 'exit 3'").success());
        assert!(!sh.run_line("not sh -c 'kill -9 $$'").success());
        assert!(sh.run_line("not --crash sh -c 'kill -9 $$'").success());
        assert!(sh.run_line("echo piped | sh -c 'cat' > q.txt").success());
        assert_eq!(fs::read_to_string(d.join("q.txt")).unwrap(), "piped\n");
    }

    #[cfg(unix)]
    #[test]
    fn timeout_kills_the_command() {
        let d = scratch("timeout");
        let mut sh = shell(&d);
        sh.timeout = Duration::from_millis(300);
        let start = std::time::Instant::now();
        assert!(!sh.run_line("sleep 20").success());
        assert!(start.elapsed() < Duration::from_secs(10));
        assert!(sh.transcript.contains("timed out"), "{}", sh.transcript);
    }
}
