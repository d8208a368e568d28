//! Parse + verify + generic-print throughput of `tap-opt`, side by side with `mlir-opt-22` when it is installed.
//!
//! Generates N-op files in generic syntax (each op `%k = "foo.add"(%a, %b) {k = .. : i64}` on the two previous
//! values, inside `"builtin.module"`), then times `tap-opt --allow-unregistered-dialect --print-op-generic FILE
//! -o /dev/null` (median of 3 runs; peak RSS through `/usr/bin/time`). Run: `cargo bench --bench parse_print`.
//! `TAP_BENCH_SIZES=100000,1000000` (the default) selects the sizes.

mod common;

use common::{find_mlir_opt, median_run};
use std::io::Write;
use std::path::Path;

/// Writes the benchmark module with `n` `foo.add` ops.
fn generate(n: usize, path: &Path) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    writeln!(f, "\"builtin.module\"() ({{").unwrap();
    writeln!(f, "  %0 = \"foo.src\"() : () -> tensor<4x8xf32>").unwrap();
    writeln!(f, "  %1 = \"foo.src\"() : () -> tensor<4x8xf32>").unwrap();
    for i in 0..n {
        writeln!(
            f,
            "  %{} = \"foo.add\"(%{}, %{}) {{k = {} : i64}} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>",
            i + 2,
            i,
            i + 1,
            i % 7
        )
        .unwrap();
    }
    writeln!(f, "}}) : () -> ()").unwrap();
}

fn main() {
    let sizes = common::sizes();
    let dir = common::work_dir();
    let tap_opt = env!("CARGO_BIN_EXE_tap-opt");
    let mlir_opt = find_mlir_opt();
    println!("| tool | ops | file MB | wall s (median of 3) | ops/s | MB/s | peak RSS MB |");
    println!("|---|---|---|---|---|---|---|");
    for n in sizes {
        let file = dir.join(format!("mod-{n}.tap"));
        if !file.exists() {
            generate(n, &file);
        }
        let mb = std::fs::metadata(&file).unwrap().len() as f64 / 1e6;
        let mut tools =
            vec![("tap-opt", tap_opt.to_string(), vec!["--allow-unregistered-dialect", "--print-op-generic"])];
        if let Some(m) = &mlir_opt {
            tools.push(("mlir-opt-22", m.clone(), vec!["--allow-unregistered-dialect", "--mlir-print-op-generic"]));
        }
        for (label, tool, flags) in tools {
            let (wall, rss) = median_run(&tool, &flags, &file);
            let rss = rss.map_or("n/a".to_string(), |r| format!("{r:.0}"));
            println!(
                "| {label} | {n} | {mb:.1} | {wall:.2} | {:.0}k | {:.1} | {rss} |",
                n as f64 / wall / 1e3,
                mb / wall
            );
        }
    }
    if mlir_opt.is_none() {
        println!("(mlir-opt-22 not found: install mlir-22-tools to compare side by side)");
    }
}
