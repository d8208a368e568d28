//! insta snapshots of rendered diagnostics for the invalid inputs in `tests/diagnostics/`, in MLIR's layout and
//! in codespan-reporting's rich layout. CI runs with `INSTA_UPDATE=no`, so a changed rendering fails until the
//! snapshot is reviewed (`cargo insta review`, or `INSTA_UPDATE=always cargo test --test diagnostics`).

use std::path::Path;
use tapestry::ir::verify::{verify, VerifyOptions};
use tapestry::ir::Context;
use tapestry::render::{render_all, Style};

fn diagnose(name: &str, text: &str, style: Style) -> String {
    let mut ctx = Context::new(tapestry::dialects::all());
    ctx.allow_unregistered = name.contains("dominance") || name.contains("redefinition");
    let diags = match tapestry::parse::parse_file(&mut ctx, name, text) {
        Ok(module) => verify(&ctx, module, VerifyOptions { print_op_on_diagnostic: true }),
        Err(diags) => diags,
    };
    assert!(!diags.is_empty(), "{name} is meant to be invalid");
    render_all(&ctx, &diags, style)
}

#[test]
fn rendered_diagnostics_match_snapshots() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/diagnostics");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    assert!(files.len() >= 8);
    for path in files {
        let stem = path.file_stem().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        let name = format!("{stem}.tap");
        insta::assert_snapshot!(format!("{stem}.mlir-style"), diagnose(&name, &text, Style::Mlir));
        insta::assert_snapshot!(format!("{stem}.rich-style"), diagnose(&name, &text, Style::Rich));
    }
}
