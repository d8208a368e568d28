//! Running out of memory is an error at the op, not an abort: `tap-run` under an address-space limit of 1 GiB
//! evaluates ops whose buffers of 1 to 4 GiB cannot be allocated (a result, a dense copy of a broadcast view that
//! an op reads, a generated tensor, a comparison's `i1` cells), and says so with the op's location, exit 1.

#![cfg(target_os = "linux")]

use std::os::unix::process::CommandExt;
use std::process::Command;

/// Each case: a name, the graph's ops after two small tensors `%a: [n=32768]` and `%b: [m=32768, n=1]` (f32),
/// the line of the op that cannot allocate, and what the error says after "out of memory: cannot allocate".
const CASES: &[(&str, &str, u32, &str)] = &[
    (
        "a result",
        "%c = teg.add %b, %a\n  %s = teg.sink @c %c : !teg.tensor<[m=32768, n=32768] x f32> -> !teg.token",
        4,
        "4294967296 bytes for the result",
    ),
    (
        "a dense copy of a view",
        "%v = teg.broadcast %a : !teg.tensor<[n=32768] x f32> -> !teg.tensor<[m=32768, n=32768] x f32>\n  \
         %c = teg.cast %v : !teg.tensor<[m=32768, n=32768] x f32> -> !teg.tensor<[m=32768, n=32768] x i8>\n  \
         %s = teg.sink @c %c : !teg.tensor<[m=32768, n=32768] x i8> -> !teg.token",
        5,
        "4294967296 bytes for a copy of a view",
    ),
    (
        "a reduction's input",
        "%v = teg.broadcast %a : !teg.tensor<[n=32768] x f32> -> !teg.tensor<[m=32768, n=32768] x f32>\n  \
         %c = teg.reduce %v along [\"m\"] by \"max\" : !teg.tensor<[m=32768, n=32768] x f32>\n  \
         %s = teg.sink @c %c : !teg.tensor<[n=32768] x f32> -> !teg.token",
        5,
        "4294967296 bytes for a copy of a view",
    ),
    (
        "a generated tensor",
        "%c = teg.iota along \"n\" : !teg.tensor<[m=32768, n=32768] x f32>\n  \
         %s = teg.sink @c %c : !teg.tensor<[m=32768, n=32768] x f32> -> !teg.token",
        4,
        "4294967296 bytes for the result",
    ),
    (
        "a comparison",
        "%c = teg.compare \"lt\" %b, %a : !teg.tensor<[m=32768, n=1] x f32>, !teg.tensor<[n=32768] x f32>\n  \
         %s = teg.sink @c %c : !teg.tensor<[m=32768, n=32768] x i1> -> !teg.token",
        4,
        "1073741824 bytes for the result",
    ),
];

#[test]
fn buffers_that_cannot_be_allocated_are_errors_at_their_ops() {
    let dir = std::env::temp_dir().join(format!("tap-oom-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("big.tap");
    for (name, ops, line, message) in CASES {
        let text = format!(
            "teg.graph @g {{\n  %a = teg.zeros : !teg.tensor<[n=32768] x f32>\n  %b = teg.ones : !teg.tensor<[m=32768, n=1] x f32>\n  {ops}\n  teg.sequence_point %s : !teg.token\n}}\n"
        );
        std::fs::write(&file, &text).unwrap();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_tap-run"));
        cmd.arg(&file).arg("--print");
        // SAFETY: setrlimit is async-signal-safe; the closure touches nothing else of the parent.
        unsafe {
            cmd.pre_exec(|| {
                let limit = libc::rlimit { rlim_cur: 1 << 30, rlim_max: 1 << 30 };
                if libc::setrlimit(libc::RLIMIT_AS, &limit) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let out = cmd.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{name}:\n{text}\n{stderr}");
        let want = format!("big.tap:{line}:3: error: out of memory: cannot allocate {message}");
        assert!(stderr.contains(&want), "{name}: want {want}\n{text}\n{stderr}");
    }
    std::fs::remove_dir_all(&dir).ok();
}
