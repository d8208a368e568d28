//! Build script: generates the parsers from the lalrpop grammars in `grammar/`.

fn main() {
    // A new grammar file must rerun the script too (the per-file directives only cover existing ones).
    println!("cargo:rerun-if-changed=grammar");
    lalrpop::Configuration::new()
        .set_in_dir("grammar")
        .emit_rerun_directives(true)
        .process()
        .expect("lalrpop grammar generation failed");
}
