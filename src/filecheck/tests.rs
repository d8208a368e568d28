//! End-to-end unit tests of the engine's tricky semantics, through [`super::run`].

use super::{run, Options};

fn check(chk: &str, input: &str) -> i32 {
    run(&Options::default(), "t.chk", chk, "t.in", input).exit_code
}

#[test]
fn smoke() {
    assert_eq!(check("CHECK: foo\n", "foo\n"), 0);
}
