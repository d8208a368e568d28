//! Every `.tap` file in the repository round-trips: printing a parsed file and parsing the print again gives the
//! same IR (compared through the printed text), in both the generic and the pretty form. Files (or
//! `// -----` chunks) that are meant to be invalid must say so (`expected-error`, a `not tap-opt` RUN line, a
//! name starting with `invalid`, or a place in the diagnostics corpus `tests/diagnostics/`).

use std::path::{Path, PathBuf};
use tapestry::ir::print::{op_to_string, PrintOptions};
use tapestry::ir::verify::verify;
use tapestry::ir::{Context, OpId};

fn tap_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if path.is_dir() && !name.starts_with('.') && name != "target" {
            tap_files(&path, out);
        } else if name.ends_with(".tap") {
            out.push(path);
        }
    }
}

fn parse(text: &str) -> Result<(Context, OpId), String> {
    let mut ctx = Context::new(tapestry::dialects::all());
    ctx.allow_unregistered = true;
    let module = tapestry::parse::parse_file(&mut ctx, "input.tap", text).map_err(|d| format!("{d:?}"))?;
    let diags = verify(&ctx, module, Default::default());
    if diags.iter().any(|d| d.severity == tapestry::ir::Severity::Error) {
        return Err(format!("{diags:?}"));
    }
    Ok((ctx, module))
}

fn print(ctx: &Context, module: OpId, generic: bool) -> String {
    op_to_string(ctx, module, PrintOptions { generic, debug_info: true })
}

/// Checks one chunk; returns false if it does not parse.
fn round_trip(chunk: &str, origin: &str) -> bool {
    let Ok((ctx, module)) = parse(chunk) else { return false };
    for generic in [true, false] {
        let first = print(&ctx, module, generic);
        let (ctx2, module2) =
            parse(&first).unwrap_or_else(|e| panic!("{origin}: printed IR does not parse again: {e}\n{first}"));
        let second = print(&ctx2, module2, generic);
        assert_eq!(first, second, "{origin}: print(parse(print(x))) differs from print(x) (generic = {generic})");
    }
    // The pretty form carries the same IR as the generic form.
    let (pretty_ctx, pretty_module) = parse(&print(&ctx, module, false)).expect("pretty form parses");
    assert_eq!(
        print(&pretty_ctx, pretty_module, true),
        print(&ctx, module, true),
        "{origin}: pretty and generic forms differ"
    );
    true
}

fn meant_to_fail(path: &Path, file_text: &str, chunk: &str) -> bool {
    let name = path.file_name().unwrap().to_string_lossy();
    let in_invalid_corpus = path.parent().is_some_and(|d| d.ends_with("tests/diagnostics"));
    in_invalid_corpus
        || name.starts_with("invalid")
        || chunk.contains("expected-error")
        || file_text.contains("not tap-opt")
}

#[test]
fn every_tap_file_round_trips() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["test", "tests", "examples", "fuzz/seeds", "benches"] {
        tap_files(&root.join(dir), &mut files);
    }
    files.sort();
    assert!(files.len() >= 30, "expected the lit corpus to be found, found {} files", files.len());
    let (mut checked, mut invalid) = (0, 0);
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        for (i, chunk) in text.split("\n// -----\n").enumerate() {
            let origin = format!("{}#{i}", path.display());
            if round_trip(chunk, &origin) {
                checked += 1;
            } else {
                assert!(
                    meant_to_fail(path, &text, chunk),
                    "{origin} does not parse or verify but is not marked as invalid"
                );
                invalid += 1;
            }
        }
    }
    assert!(checked > 0);
    eprintln!("round-tripped {checked} chunks; {invalid} invalid chunks skipped");
}
