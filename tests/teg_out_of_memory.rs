//! Running out of memory is an error at the op, not an abort: `tap-run` under an address-space limit of 1 GiB
//! evaluates an op whose 4 GiB result cannot be allocated, and says so with the op's location, exit 1.

#![cfg(target_os = "linux")]

use std::os::unix::process::CommandExt;
use std::process::Command;

#[test]
fn a_result_that_cannot_be_allocated_is_an_error_at_its_op() {
    let dir = std::env::temp_dir().join(format!("tap-oom-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("big.tap");
    // Two small sources broadcast into 2^30 f32 cells (4 GiB), under the evaluator's element limit.
    let text = "teg.graph @g {\n  %a = teg.zeros : !teg.tensor<[n=32768] x f32>\n  %b = teg.ones : !teg.tensor<[m=32768, n=1] x f32>\n  %c = teg.add %b, %a\n  %s = teg.sink @c %c : !teg.tensor<[m=32768, n=32768] x f32> -> !teg.token\n  teg.sequence_point %s : !teg.token\n}\n";
    std::fs::write(&file, text).unwrap();
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
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("big.tap:4:3: error: out of memory: cannot allocate 4294967296 bytes for the result"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).ok();
}
