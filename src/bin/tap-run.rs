//! `tap-run`: runs a TEG graph on the reference evaluator (see `tapestry::driver::run`).

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let code = tapestry::driver::run::main(&args, &mut std::io::stdout().lock(), &mut std::io::stderr().lock());
    std::process::exit(code);
}
