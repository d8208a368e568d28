//! `tap-opt`: the opt-style driver (see `tapestry::driver`).

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    std::process::exit(tapestry::driver::main(&args));
}
