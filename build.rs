//! Build script: generates the parsers from the lalrpop grammars in `grammar/`.

fn main() {
    lalrpop::Configuration::new()
        .set_in_dir("grammar")
        .emit_rerun_directives(true)
        .process()
        .expect("lalrpop grammar generation failed");
}
