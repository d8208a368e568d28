//! `canonicalize,cse` throughput on large functions of `arith` ops, side by side with `mlir-opt-22` running the
//! same pipeline on the same (generic-form) file when it is installed.
//!
//! Each group of five ops gives both passes work: a duplicated constant (uniqued by canonicalize), an `addi` of
//! zero (folded), and two identical `muli`s (merged by CSE) feeding the next group. Run:
//! `cargo bench --bench canonicalize_cse`; `TAP_BENCH_SIZES=100000,1000000` (the default) selects op counts.

mod common;

use common::{find_mlir_opt, median_run};
use std::io::Write;
use std::path::Path;
use std::process::Command;

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

/// Seconds the timing report (`--timing` / `--mlir-timing`, same format) gives the two passes, median of 3.
fn pass_seconds(tool: &str, flags: &[&str], file: &Path) -> f64 {
    let mut runs: Vec<f64> = (0..3)
        .map(|_| {
            let out = Command::new(tool).args(flags).arg(file).args(["-o", "/dev/null"]).output().expect("tool runs");
            assert!(out.status.success(), "{tool} failed: {}", String::from_utf8_lossy(&out.stderr));
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .filter(|l| l.ends_with("Canonicalizer") || l.ends_with("CSE"))
                .filter_map(|l| l.split_whitespace().next()?.parse::<f64>().ok())
                .sum()
        })
        .collect();
    runs.sort_by(f64::total_cmp);
    runs[1]
}

fn main() {
    let sizes = common::sizes();
    let dir = common::work_dir();
    let tap_opt = env!("CARGO_BIN_EXE_tap-opt");
    let pipeline = "--pass-pipeline=builtin.module(func.func(canonicalize,cse))";
    println!("| tool | ops | total wall s | canonicalize + cse s (timing report) | µs per op | peak RSS MB |");
    println!("|---|---|---|---|---|---|");
    let mut tools = vec![("tap-opt", tap_opt.to_string(), "--print-op-generic", "--timing")];
    if let Some(m) = find_mlir_opt() {
        tools.push(("mlir-opt-22", m, "--mlir-print-op-generic", "--mlir-timing"));
    }
    for n in sizes {
        let file = dir.join(format!("arith-{n}.tap"));
        if !file.exists() {
            generate(n, &file);
        }
        for (label, tool, generic, timing) in &tools {
            let (wall, rss) = median_run(tool, &[generic, pipeline], &file);
            let passes = pass_seconds(tool, &[generic, pipeline, timing], &file);
            let rss = rss.map_or("n/a".to_string(), |r| format!("{r:.0}"));
            println!("| {label} | {n} | {wall:.2} | {passes:.3} | {:.2} | {rss} |", passes * 1e6 / n as f64);
        }
    }
}
