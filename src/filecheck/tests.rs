//! End-to-end unit tests of the engine's tricky semantics, through [`super::run`] and
//! [`super::run_command`]. Expected exit codes and messages were verified against LLVM
//! FileCheck 19.

use super::{parse_args, run, run_command, Options, Outcome};

fn opts(args: &str) -> Options {
    let args: Vec<String> = args.split_whitespace().map(str::to_string).collect();
    parse_args(&args).expect("valid arguments").0
}

fn fc(chk: &str, input: &str, args: &str) -> Outcome {
    let mut o = opts(args);
    o.dump_input = super::DumpInput::Never;
    run(&o, "t.chk", chk, "t.in", input)
}

fn code(chk: &str, input: &str, args: &str) -> i32 {
    fc(chk, input, args).exit_code
}

#[test]
fn plain_next_same_empty() {
    assert_eq!(code("CHECK: a\nCHECK: b\n", "ab\n", ""), 0);
    assert_eq!(code("CHECK: foo\nCHECK-NEXT: bar\n", "foo\nbar\n", ""), 0);
    assert_eq!(code("CHECK: foo\nCHECK-NEXT: bar\n", "foo bar\n", ""), 1);
    assert_eq!(code("CHECK: a\nCHECK-SAME: c\nCHECK-SAME: b\n", "a b c\n", ""), 1);
    assert_eq!(code("CHECK: foo\nCHECK-EMPTY:\n", "foo\n \nbar\n", ""), 1);
    assert_eq!(code("CHECK: foo\nCHECK-EMPTY:\n", "foo\n\n", ""), 0);
    assert_eq!(code("CHECK: foo\nCHECK-EMPTY:\n", "foo\n", ""), 0);
}

#[test]
fn first_directive_must_not_be_relative() {
    for (d, pat) in [("NEXT", " x"), ("SAME", " x"), ("EMPTY", "")] {
        let out = fc(&format!("CHECK-{d}:{pat}\n"), "x\n", "");
        assert_eq!(out.exit_code, 2, "{d}");
        assert!(out.stderr.contains(&format!("found 'CHECK-{d}' without previous 'CHECK: line")));
    }
}

#[test]
fn not_ranges() {
    let chk = "CHECK: start\nCHECK-NOT: bad\nCHECK: end\n";
    assert_eq!(code(chk, "start\nbad\nend\n", ""), 1);
    assert_eq!(code(chk, "start\nend\nbad\n", ""), 0);
    assert_eq!(code("CHECK-NOT: bad\nCHECK: start\n", "bad\nstart\n", ""), 1);
    assert_eq!(code("CHECK: a\nCHECK-NOT: bad\n", "a\nbad\n", ""), 1);
}

#[test]
fn dag_rules() {
    assert_eq!(code("CHECK-DAG: x\nCHECK-DAG: x\n", "x\ny\n", ""), 1);
    assert_eq!(code("CHECK-DAG: x\nCHECK-DAG: x\n", "x\ny\nx\n", ""), 0);
    let overlap = "--allow-deprecated-dag-overlap";
    assert_eq!(code("CHECK-DAG: x\nCHECK-DAG: x\n", "x\ny\n", overlap), 0);
    // The next directive starts after the furthest match of the group.
    assert_eq!(code("CHECK-DAG: a\nCHECK-DAG: b\nCHECK: c\n", "a\nc\nb\n", ""), 1);
    // NOT between groups covers the gap, and the later group must follow the earlier one.
    let chk = "CHECK-DAG: a\nCHECK-NOT: x\nCHECK-DAG: b\n";
    assert_eq!(code(chk, "a\nx\nb\n", ""), 1);
    assert_eq!(code(chk, "a\nb\nx\n", ""), 0);
    assert_eq!(code(chk, "b\na\n", ""), 1);
    let capture = "CHECK-DAG: [[V:[0-9]+]] = def\nCHECK: use [[V]]\n";
    assert_eq!(code(capture, "42 = def\nuse 42\n", ""), 0);
}

#[test]
fn labels_split_the_input() {
    let chk = "CHECK-LABEL: f1\nCHECK: b\nCHECK-LABEL: f2\nCHECK: a\n";
    let out = fc(chk, "f1\na\nf2\nb\n", "");
    assert_eq!(out.exit_code, 1);
    // Checking resumes in the next block after a failure: both CHECKs are reported.
    assert_eq!(out.stderr.matches("expected string not found").count(), 2);
    assert_eq!(code("CHECK-LABEL: fn\nCHECK-NEXT: x\n", "fn\ny\nfn\nx\n", ""), 1);
    assert_eq!(code("CHECK-LABEL: [[X:a]]\n", "a\n", ""), 2);
    assert_eq!(code("CHECK-LABEL: f[[#N:]]\n", "f5\n", ""), 0);
}

#[test]
fn count() {
    assert_eq!(code("CHECK-COUNT-3: a\n", "a\na\na\n", ""), 0);
    let out = fc("CHECK-COUNT-3: a\n", "a\na\nb\n", "");
    assert!(out.stderr.contains("CHECK-COUNT: expected string not found in input (3 out of 3)"));
    assert_eq!(code("CHECK-COUNT-0: a\n", "a\n", ""), 2);
}

#[test]
fn directive_recognition() {
    assert_eq!(code("XCHECK: missing\nCHECK: foo\n", "foo\n", ""), 0);
    assert_eq!(code("CHECK : missing\nCHECK: foo\n", "foo\n", ""), 0);
    assert_eq!(code("COM: CHECK: missing\nCHECK: foo\n", "foo\n", ""), 0);
    assert_eq!(code("RUN: CHECK: missing\nCHECK: foo\n", "foo\n", ""), 0);
    assert_eq!(code("CHECK_NEXT: a\nCHECK: a\n", "a\n", ""), 2);
    assert_eq!(code("CHECK: a\nCHECK-DAG-NOT: b\n", "a\n", ""), 2);
    assert_eq!(code("nothing\n", "x\n", ""), 2);
    assert_eq!(code("A: a\n", "a\n", "--check-prefixes=A,B"), 2);
    assert_eq!(code("A: a\n", "a\n", "--check-prefixes=A,B --allow-unused-prefixes"), 0);
    assert_eq!(code("ok\n", "x\n", "--implicit-check-not=bad"), 0);
    let out = fc("CHECK:\n", "a\n", "");
    assert!(out.stderr.starts_with("t.chk:1:7: error: found empty check string with prefix 'CHECK:'"));
}

#[test]
fn literal_modifier() {
    assert_eq!(code("CHECK{LITERAL}: {{x}} [[Y]]\n", "{{x}} [[Y]]\n", ""), 0);
    assert_eq!(code("CHECK-COUNT-2{LITERAL}: [[a]]\n", "[[a]] [[a]]\n", ""), 0);
}

#[test]
fn whitespace() {
    assert_eq!(code("CHECK: foo bar\n", "foo \t  bar\n", ""), 0);
    assert_eq!(code("CHECK: foo bar\n", "foo  bar\n", "--strict-whitespace"), 1);
    assert_eq!(code("CHECK: foo bar\n", "  foo bar  \n", "--match-full-lines"), 0);
    assert_eq!(code("CHECK: foo\n", "foo bar\n", "--match-full-lines"), 1);
    assert_eq!(code("CHECK:foo\n", " foo\n", "--match-full-lines --strict-whitespace"), 1);
    assert_eq!(code("CHECK: foo\nCHECK-NEXT: bar\n", "foo\r\nbar\r\n", ""), 0);
}

#[test]
fn regex_dialect() {
    assert_eq!(code("CHECK: x = {{[[:digit:]]+}}\n", "x = 42\n", ""), 0);
    let out = fc("CHECK: {{\\d+}}\n", "42\n", "");
    assert_eq!(out.exit_code, 2);
    assert!(out.stderr.contains("invalid regex: '\\d' is not supported"));
    assert_eq!(code("CHECK: {{a.*?}}\n", "abc\n", ""), 2);
    assert_eq!(code("CHECK: {{(?=a)}}\n", "abc\n", ""), 2);
    assert_eq!(code("CHECK: a{{.*}}c\n", "ab\nc\n", ""), 1);
    assert_eq!(code("CHECK: a\nCHECK-SAME: {{^}}b\n", "ab\n", ""), 0);
    assert_eq!(code("CHECK: {{\\[\\[}}x\n", "[[x\n", ""), 0);
}

#[test]
fn alternation_is_leftmost_longest() {
    assert_eq!(code("CHECK: [[X:a|ab]]\nCHECK-NEXT: [[X]]!\n", "ab\nab!\n", ""), 0);
    assert_eq!(code("CHECK: {{a|ab}}\nCHECK-SAME: b\n", "ab\n", ""), 1);
}

#[test]
fn string_variables() {
    let chk = "CHECK: id=[[ID:[0-9]+]]\nCHECK: use [[ID]]\n";
    assert_eq!(code(chk, "id=7\nuse 7\n", ""), 0);
    assert_eq!(code(chk, "id=7\nuse 8\n", ""), 1);
    assert_eq!(code("CHECK: [[V:[a-z]+]] = [[V]]\n", "x = y\nab = ab\n", ""), 0);
    let out = fc("CHECK: [[UNDEF]]\n", "x\n", "");
    assert_eq!(out.exit_code, 1);
    assert!(out.stderr.starts_with("t.chk:1:10: error: undefined variable: UNDEF\n"));
    assert_eq!(code("CHECK: value [[X]]\n", "value foo\n", "-DX=foo"), 0);
}

#[test]
fn variable_scope() {
    let local = "CHECK: [[L:[a-z]+]]\nCHECK-LABEL: next\nCHECK: [[L]]\n";
    assert_eq!(code(local, "abc\nnext\nabc\n", "--enable-var-scope"), 1);
    assert_eq!(code(local, "abc\nnext\nabc\n", ""), 0);
    let global = "CHECK: [[$G:[a-z]+]]\nCHECK-LABEL: next\nCHECK: [[$G]]\n";
    assert_eq!(code(global, "abc\nnext\nabc\n", "--enable-var-scope"), 0);
}

#[test]
fn numeric_variables() {
    assert_eq!(code("CHECK: a [[#N:]]\nCHECK: b [[#N+1]]\n", "a 5\nb 6\n", ""), 0);
    assert_eq!(code("CHECK: [[#%x,N:]]\nCHECK: [[#%X,N+1]] [[#N+1]]\n", "f\n10 10\n", ""), 0);
    let funcs = "CHECK: [[#A:]] [[#B:]]\nCHECK: [[#add(A,B)]] [[#sub(A,B)]] [[#mul(A,B)]] [[#div(A,B)]] [[#max(A,B)]] [[#min(A,B)]]\n";
    assert_eq!(code(funcs, "6 3\n9 3 18 2 6 3\n", ""), 0);
    assert_eq!(code("CHECK: l [[#@LINE]]\nCHECK: n [[#@LINE+1]]\n", "l 1\nn 3\n", ""), 0);
    assert_eq!(code("CHECK: [[#N+1]]\n", "6\n", "-D#N=5"), 0);
    assert_eq!(code("CHECK: [[#N:]] [[#N+1]]\n", "5 6\n", ""), 2);
    let conflict = "CHECK: [[#%x,A:]] [[#%d,B:]]\nCHECK: [[#A+B]]\n";
    assert_eq!(code(conflict, "a 1\n11\n", ""), 2);
    let out = fc("CHECK: [[#N:]]\nCHECK: [[#N+2]]\n", "5\n8\n", "");
    assert!(out.stderr.contains("note: with \"N+2\" equal to \"7\""));
}

#[test]
fn input_handling() {
    assert_eq!(code("CHECK-NOT: x\n", "", "--allow-empty"), 0);
    let out = fc("CHECK-NOT: x\n", "", "");
    assert_eq!(out.exit_code, 2);
    assert!(out.stderr.starts_with("FileCheck error: 't.in' is empty."));
    assert_eq!(code("CHECK: HELLO\n", "hello\n", "--ignore-case"), 0);
}

#[test]
fn implicit_check_not() {
    let out = fc("CHECK: foo\n", "bar\nfoo\n", "--implicit-check-not=bar");
    assert_eq!(out.exit_code, 1);
    assert!(out.stderr.starts_with(
        "command line:1:22: error: IMPLICIT-CHECK-NOT: excluded string found in input\n-implicit-check-not='bar'\n"
    ));
}

#[test]
fn diagnostics_match_llvm() {
    let o = opts("");
    let out = run(&o, "a.chk", "CHECK: foo\nCHECK-NEXT: baz\n", "a.in", "foo\nbar\nbaz\n");
    let expected = "\
a.chk:2:13: error: CHECK-NEXT: is not on the line after the previous match
CHECK-NEXT: baz
            ^
a.in:3:1: note: 'next' match was here
baz
^
a.in:1:4: note: previous match ended here
foo
   ^
a.in:2:1: note: non-matching line after previous match is here
bar
^

Input file: a.in
Check file: a.chk

-dump-input=help explains the following input dump.

Input was:
<<<<<<
        1: foo 
        2: bar 
        3: baz 
next:2     !~~  error: match on wrong line
>>>>>>
";
    assert_eq!(out.stderr, expected);
}

#[test]
fn stdin_input_and_command_errors() {
    let dir = std::env::temp_dir().join(format!("tap-fc-unit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let chk = dir.join("t.chk");
    std::fs::write(&chk, "CHECK: foo\n").expect("write check file");
    let argv = |extra: &[&str]| -> Vec<String> {
        let mut v = vec!["FileCheck".to_string(), chk.display().to_string()];
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    let ok = run_command(&argv(&[]), None, &mut &b"foo\n"[..]);
    assert_eq!(ok.exit_code, 0);
    let fail = run_command(&argv(&[]), Some("--dump-input=never"), &mut &b"bar\n"[..]);
    assert_eq!(fail.exit_code, 1);
    assert!(fail.stderr.contains("<stdin>:1:1: note: scanning from here"));
    assert!(!fail.stderr.contains("Input was:"));
    assert_eq!(run_command(&argv(&["--bogus"]), None, &mut &b""[..]).exit_code, 1);
    assert_eq!(run_command(&["FileCheck".to_string()], None, &mut &b""[..]).exit_code, 2);
    let missing = run_command(&argv(&["--input-file", "/nonexistent/x"]), None, &mut &b""[..]);
    assert_eq!(missing.exit_code, 2);
    let _ = std::fs::remove_dir_all(&dir);
}
