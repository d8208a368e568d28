//! `tap-filecheck`: LLVM FileCheck-compatible command-line driver (see `tapestry::filecheck`).
//!
//! Usage: `tap-filecheck CHECK-FILE [--input-file FILE] [options]`; options are also read from
//! the `FILECHECK_OPTS` environment variable. Exit status 0 (pass), 1 (check failed), 2 (error).

use std::io::Write;

fn main() {
    let argv: Vec<String> = std::env::args().collect();
    let env_opts = std::env::var("FILECHECK_OPTS").ok();
    let outcome = tapestry::filecheck::run_command(&argv, env_opts.as_deref(), &mut std::io::stdin());
    let _ = std::io::stdout().write_all(outcome.stdout.as_bytes());
    let _ = std::io::stderr().write_all(outcome.stderr.as_bytes());
    std::process::exit(outcome.exit_code);
}
