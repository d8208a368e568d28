//! Enforces the dependency rules of ARCHITECTURE.md: scans every `crate::` path in `src/` and fails with the file
//! and line of each import a module may not make.

use std::fs;
use std::path::{Path, PathBuf};

/// The top-level module a source file belongs to (`ir`, `parse`, `dialects/func`, ...).
fn module_of(rel: &Path) -> String {
    let parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string()).collect();
    match parts.as_slice() {
        [d, name, ..] if d == "dialects" && parts.len() > 2 => format!("dialects/{name}"),
        [p, name] if p == "passes" && name != "mod" => format!("passes/{name}"),
        [first, ..] => first.clone(),
        [] => String::new(),
    }
}

/// The crate modules a path like `crate::dialects::func::x` names: `dialects/func` (or `ir`, `parse`, ...).
fn target_of(path: &str) -> String {
    let segs: Vec<&str> = path.split("::").collect();
    match segs.as_slice() {
        ["dialects", d, ..] if d.chars().all(|c| c.is_ascii_lowercase() || c == '_') => format!("dialects/{d}"),
        // `define_id!` is exported at the crate root but defined in `ir::entity`.
        [m] if m.starts_with("define_id") => "ir".to_string(),
        [first, ..] => first.to_string(),
        [] => String::new(),
    }
}

/// Self-contained libraries: they use std and crates only, and any module may use them.
const LIBRARIES: &[&str] = &["zspace", "array", "layout"];

fn allowed(module: &str, target: &str) -> bool {
    if module == target || target.is_empty() {
        return true;
    }
    // Libraries below the IR (geometry, host arrays) import nothing of the crate; everything above may use them.
    if LIBRARIES.contains(&target) {
        return !LIBRARIES.contains(&module);
    }
    match module {
        "ir" => false,
        m if LIBRARIES.contains(&m) => false,
        "parse" | "render" => target == "ir",
        "filecheck" => false,
        "passes" => target == "ir" || target == "passes",
        m if m.starts_with("passes/") => {
            let file = &m["passes/".len()..];
            target == "ir" || target == "passes" || dialect_pass_may_use(file, target)
        }
        m if m.starts_with("dialects/") => target == "ir",
        "dialects" => target == "ir" || target.starts_with("dialects/"),
        _ => true,
    }
}

/// A dialect's own pass `passes/<d>_<name>.rs` may use dialect `<d>`; a conversion `passes/<a>_to_<b>.rs` may
/// use `<a>` and `<b>`; a generic pass uses no dialect.
fn dialect_pass_may_use(file: &str, target: &str) -> bool {
    let Some(dialect) = target.strip_prefix("dialects/") else { return false };
    match file.split_once("_to_") {
        Some((a, b)) => dialect == a || b.split('_').next() == Some(dialect),
        None => file.split('_').next() == Some(dialect),
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every `crate::a::b` path on a line (also inside `use crate::{a, b}` groups).
fn crate_paths(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(i) = rest.find("crate::") {
        let tail = &rest[i + 7..];
        if let Some(group) = tail.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            out.extend(group[..end].split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()));
        } else {
            let end = tail.find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')).unwrap_or(tail.len());
            out.push(tail[..end].to_string());
        }
        rest = &tail[1..];
    }
    out
}

fn violations(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut bad = Vec::new();
    for file in files {
        let rel = file.strip_prefix(src).unwrap();
        let module = module_of(rel);
        if module == "bin" || module == "driver" || module == "lib" {
            continue;
        }
        check_file(&file, &module, &mut bad);
    }
    bad
}

/// The grammars follow the rules of the module that owns them: `tap.lalrpop` is the parser's, any other
/// `NAME.lalrpop` belongs to the dialect `NAME`.
fn grammar_violations(dir: &Path) -> Vec<String> {
    let mut bad = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let file = entry.unwrap().path();
        let Some(stem) = file.file_stem().map(|s| s.to_string_lossy().to_string()) else { continue };
        if file.extension().is_some_and(|e| e == "lalrpop") {
            let module = if stem == "tap" { "parse".to_string() } else { format!("dialects/{stem}") };
            check_file(&file, &module, &mut bad);
        }
    }
    bad
}

fn check_file(file: &Path, module: &str, bad: &mut Vec<String>) {
    for (n, line) in fs::read_to_string(file).unwrap().lines().enumerate() {
        if line.trim_start().starts_with("//") {
            continue;
        }
        for path in crate_paths(line) {
            let target = target_of(&path);
            if !allowed(module, &target) {
                bad.push(format!("{}:{}: module '{module}' may not import crate::{path}", file.display(), n + 1));
            }
        }
    }
}

#[test]
fn modules_respect_the_dependency_rules() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut bad = violations(&root.join("src"));
    bad.extend(grammar_violations(&root.join("grammar")));
    assert!(bad.is_empty(), "dependency rule violations (see ARCHITECTURE.md):\n{}", bad.join("\n"));
}

#[test]
fn the_checker_catches_a_forbidden_import() {
    let dir = std::env::temp_dir().join(format!("tap-arch-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(dir.join("ir")).unwrap();
    fs::create_dir_all(dir.join("dialects/func")).unwrap();
    fs::write(dir.join("ir/x.rs"), "use crate::parse::lexer;\n").unwrap();
    fs::create_dir_all(dir.join("passes")).unwrap();
    fs::write(dir.join("passes/cse.rs"), "use crate::dialects::arith::X;\n").unwrap();
    fs::write(dir.join("passes/layout_print.rs"), "use crate::dialects::layout::X;\n").unwrap();
    fs::write(dir.join("passes/teg_to_npu.rs"), "use crate::dialects::teg::X;\nuse crate::dialects::npu::Y;\n")
        .unwrap();
    fs::write(dir.join("dialects/func/y.rs"), "use crate::dialects::builtin::module;\nuse crate::ir::Context;\n")
        .unwrap();
    let bad = violations(&dir);
    let _ = fs::remove_dir_all(&dir);
    assert_eq!(bad.len(), 3, "{bad:?}");
    assert!(bad.iter().any(|b| b.contains("passes/cse.rs")), "a generic pass may not use a dialect: {bad:?}");
    assert!(bad[0].contains("crate::parse::lexer") || bad[1].contains("crate::parse::lexer"));
    assert!(bad.iter().any(|b| b.contains("crate::dialects::builtin")));
}
