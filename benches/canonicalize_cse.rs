//! `canonicalize,cse` throughput on large functions of `arith` ops, side by side with `mlir-opt-22` running the
//! same pipeline on the same (generic-form) file when it is installed.
//!
//! Each group of five ops gives both passes work: a duplicated constant (uniqued by canonicalize), an `addi` of
//! zero (folded), and two identical `muli`s (merged by CSE) feeding the next group. Run:
//! `cargo bench --bench canonicalize_cse`; `TAP_BENCH_SIZES=100000,1000000` (the default) selects op counts.

mod common;

use common::{find_mlir_opt, median_run};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Writes a `func.func` with about `n` arith ops in generic form.
fn generate(n: usize, path: &Path) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    writeln!(f, "\"builtin.module\"() ({{").unwrap();
    writeln!(f, "  \"func.func\"() <{{function_type = (i32, i32) -> i32, sym_name = \"f\"}}> ({{").unwrap();
    writeln!(f, "  ^bb0(%arg0: i32, %arg1: i32):").unwrap();
    let mut prev = "%arg0".to_string();
    for g in 0..n / 5 {
        let bin = |op: &str, a: &str, b: &str, r: &str| {
            format!("    %{r}{g} = \"arith.{op}\"({a}, {b}) <{{overflowFlags = #arith.overflow<none>}}> : (i32, i32) -> i32\n")
        };
        writeln!(f, "    %c{g} = \"arith.constant\"() <{{value = 0 : i32}}> : () -> i32").unwrap();
        f.write_all(bin("addi", &prev, &format!("%c{g}"), "x").as_bytes()).unwrap();
        f.write_all(bin("muli", &format!("%x{g}"), "%arg1", "y").as_bytes()).unwrap();
        f.write_all(bin("muli", &format!("%x{g}"), "%arg1", "z").as_bytes()).unwrap();
        f.write_all(bin("addi", &format!("%y{g}"), &format!("%z{g}"), "s").as_bytes()).unwrap();
        prev = format!("%s{g}");
    }
    writeln!(f, "    \"func.return\"({prev}) : (i32) -> ()").unwrap();
    writeln!(f, "  }}) : () -> ()").unwrap();
    writeln!(f, "}}) : () -> ()").unwrap();
}

fn main() {
    let sizes: Vec<usize> = std::env::var("TAP_BENCH_SIZES")
        .unwrap_or_else(|_| "100000,1000000".into())
        .split(',')
        .map(|s| s.trim().parse().expect("TAP_BENCH_SIZES is a comma-separated list of op counts"))
        .collect();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bench");
    std::fs::create_dir_all(&dir).unwrap();
    let tap_opt = env!("CARGO_BIN_EXE_tap-opt");
    let pipeline = "--pass-pipeline=builtin.module(func.func(canonicalize,cse))";
    println!("| tool | ops | parse+print only s | with canonicalize,cse s | passes s | µs/op in passes | peak RSS MB |");
    println!("|---|---|---|---|---|---|---|");
    let mut tools = vec![("tap-opt", tap_opt.to_string(), "--print-op-generic")];
    if let Some(m) = find_mlir_opt() {
        tools.push(("mlir-opt-22", m, "--mlir-print-op-generic"));
    }
    for n in sizes {
        let file = dir.join(format!("arith-{n}.tap"));
        if !file.exists() {
            generate(n, &file);
        }
        for (label, tool, generic) in &tools {
            let (base, _) = median_run(tool, &[generic], &file);
            let (with, rss) = median_run(tool, &[generic, pipeline], &file);
            let rss = rss.map_or("n/a".to_string(), |r| format!("{r:.0}"));
            let passes = (with - base).max(0.0);
            println!("| {label} | {n} | {base:.2} | {with:.2} | {passes:.2} | {:.2} | {rss} |", passes * 1e6 / n as f64);
        }
    }
}
