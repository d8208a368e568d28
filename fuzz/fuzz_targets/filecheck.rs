//! Fuzzes `tap-filecheck` in-process: the input is a check file, a NUL byte, then the input to check. The first
//! byte picks options (bit 0 `--match-full-lines`, bit 1 `--strict-whitespace`, bit 2 `--ignore-case`, bit 3
//! `--enable-var-scope`, bit 4 `--allow-empty`, bit 5 `--dump-input=always`). Any outcome is fine; a panic, an
//! abort, a timeout or running out of memory is a bug.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tapestry::filecheck::{DumpInput, Options};

fuzz_target!(|data: &[u8]| {
    let Some(&first) = data.first() else { return };
    let split = data.iter().position(|&b| b == 0).unwrap_or(data.len());
    let (check, input) = (&data[..split], data.get(split + 1..).unwrap_or(&[]));
    let opts = Options {
        match_full_lines: first & 1 != 0,
        strict_whitespace: first & 2 != 0,
        ignore_case: first & 4 != 0,
        enable_var_scope: first & 8 != 0,
        allow_empty: first & 16 != 0,
        dump_input: if first & 32 != 0 { DumpInput::Always } else { DumpInput::Fail },
        ..Options::default()
    };
    let _ = tapestry::filecheck::run_bytes(&opts, "check.txt", check, "input.txt", input);
});
