//! `tap-opt`: the opt-style driver (see `tapestry::driver`).

use std::io::Write;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut stdout = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let mut stderr = std::io::stderr().lock();
    let code = tapestry::driver::main(&args, &mut stdout, &mut stderr);
    let _ = stdout.flush();
    std::process::exit(code);
}
