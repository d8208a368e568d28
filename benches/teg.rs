//! TEG evaluator and verifier benchmarks: a 1024×1024 · 1024×1024 f32 `teg.matmul` and a 16M-element f32
//! `teg.add` through the reference evaluator, side by side with NumPy (`scripts/numpy-bench.py`, run with
//! `NUMPY_PYTHON`, default `python3`, when it can import NumPy); the time to verify a graph of 100k ops; and the
//! peak memory of a chain of ten elementwise ops on a 256 MiB tensor, in a process of its own (values are freed
//! after their last use, so the peak is about three values: the input, an operand and a result).
//!
//! `cargo bench --bench teg` (set `NUMPY_PYTHON=/path/to/python` for a venv with NumPy).

use indexmap::IndexMap;
use std::process::Command;
use std::time::Instant;
use tapestry::array::{Array, DType};
use tapestry::dialects::teg::eval::evaluate;
use tapestry::ir::verify::{verify, VerifyOptions};
use tapestry::ir::{Context, OpId};

fn graph(ctx: &mut Context, text: &str) -> OpId {
    let module = tapestry::parse::parse_file(ctx, "bench.tap", text).expect("parses");
    assert!(verify(ctx, module, VerifyOptions::default()).is_empty());
    let region = ctx.body.regions(module)[0];
    ctx.body.block_ops(ctx.body.region(region).blocks[0]).next().expect("a graph")
}

/// Median seconds of `runs` evaluations of `text` on `inputs`, each with freeing its result, as NumPy's side
/// (`scripts/numpy-bench.py`) times them: inputs made once, then call and free.
fn time_eval(text: &str, inputs: &IndexMap<String, Array>, runs: usize) -> f64 {
    let mut ctx = Context::new(tapestry::dialects::all());
    let g = graph(&mut ctx, text);
    evaluate(&ctx, g, inputs).expect("runs");
    let mut times: Vec<f64> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            drop(evaluate(&ctx, g, inputs).expect("runs"));
            start.elapsed().as_secs_f64()
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[runs / 2]
}

fn numpy() -> Option<(f64, f64)> {
    let python = std::env::var("NUMPY_PYTHON").unwrap_or_else(|_| "python3".into());
    let out = Command::new(python).arg(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/numpy-bench.py")).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?;
    let get = |key: &str| text.lines().find_map(|l| l.strip_prefix(key)?.trim().parse().ok());
    Some((get("matmul ")?, get("add ")?))
}

fn main() {
    if std::env::var_os(CHAIN_CHILD).is_some() {
        return chain_child();
    }
    let n = 1024u64;
    let mm = format!(
        "teg.graph @mm {{\n  %a = teg.source @a : !teg.tensor<[m={n}, k={n}] x f32>\n  %b = teg.source @b : !teg.tensor<[k={n}, n={n}] x f32>\n  %c = teg.matmul %a, %b : !teg.tensor<[m={n}, k={n}] x f32>, !teg.tensor<[k={n}, n={n}] x f32> -> !teg.tensor<[m={n}, n={n}] x f32>\n  %s = teg.sink @c %c : !teg.tensor<[m={n}, n={n}] x f32> -> !teg.token\n  teg.sequence_point %s : !teg.token\n}}\n"
    );
    let square = |seed: f64| Array::from_fn(DType::F32, vec![n, n], move |i| ((i as f64 + seed) * 0.001).sin());
    let mm_inputs = IndexMap::from([("a".to_string(), square(0.0)), ("b".to_string(), square(0.5))]);
    let ours_mm = time_eval(&mm, &mm_inputs, 11);
    let len = 1u64 << 24;
    let add = format!(
        "teg.graph @add {{\n  %x = teg.source @x : !teg.tensor<[n={len}] x f32>\n  %y = teg.source @y : !teg.tensor<[n={len}] x f32>\n  %z = teg.add %x, %y : !teg.tensor<[n={len}] x f32>\n  %s = teg.sink @z %z : !teg.tensor<[n={len}] x f32> -> !teg.token\n  teg.sequence_point %s : !teg.token\n}}\n"
    );
    let vector = |seed: f64| Array::from_fn(DType::F32, vec![len], move |i| i as f64 * 1e-6 + seed);
    let add_inputs = IndexMap::from([("x".to_string(), vector(0.0)), ("y".to_string(), vector(1.0))]);
    let ours_add = time_eval(&add, &add_inputs, 11);
    let bytes = 3.0 * 4.0 * len as f64;
    let theirs = numpy();
    let show = |t: Option<f64>| t.map_or("n/a".to_string(), |t| format!("{:.2} ms", t * 1e3));
    println!("{:<44} {:>12} {:>12}", "case", "tapestry", "numpy");
    println!(
        "{:<44} {:>12} {:>12}",
        "matmul f32 1024x1024 · 1024x1024",
        show(Some(ours_mm)),
        show(theirs.map(|t| t.0))
    );
    println!("{:<44} {:>12} {:>12}", "add f32 16M elements", show(Some(ours_add)), show(theirs.map(|t| t.1)));
    println!(
        "matmul {:.1} GFLOP/s; add {:.2} GB/s (3 arrays of 64 MiB)",
        2.0 * (n * n * n) as f64 / ours_mm / 1e9,
        bytes / ours_add / 1e9
    );
    if theirs.is_none() {
        println!("(NumPy not found: set NUMPY_PYTHON to a python with numpy)");
    }
    verify_bench();
    chain_bench();
}

/// Set in the child process that evaluates the chain, so that its peak memory is the chain's alone.
const CHAIN_CHILD: &str = "TAP_BENCH_TEG_CHAIN";

/// The chain's elements: 64M f32, 256 MiB.
const CHAIN_LEN: u64 = 1 << 26;

/// Runs the chain in a fresh process and reports its peak resident memory against one value's size.
fn chain_bench() {
    let exe = std::env::current_exe().expect("the bench binary");
    let out = Command::new(exe).env(CHAIN_CHILD, "1").output().expect("the child runs");
    assert!(out.status.success(), "chain child failed: {}", String::from_utf8_lossy(&out.stderr));
    let peak_kib: f64 = String::from_utf8_lossy(&out.stdout).trim().parse().expect("the child prints its peak");
    let value_mib = (CHAIN_LEN * 4) as f64 / (1 << 20) as f64;
    let peak_mib = peak_kib / 1024.0;
    println!(
        "chain of 10 elementwise ops on {value_mib:.0} MiB: peak RSS {peak_mib:.0} MiB = {:.2} values",
        peak_mib / value_mib
    );
}

/// The child: evaluates `neg` ten times in a chain, prints the process's peak resident memory in KiB.
fn chain_child() {
    let t = format!("!teg.tensor<[n={CHAIN_LEN}] x f32>");
    let mut text = format!("teg.graph @chain {{\n  %v0 = teg.source @x : {t}\n");
    for i in 0..10 {
        text.push_str(&format!("  %v{} = teg.neg %v{i} : {t}\n", i + 1));
    }
    text.push_str(&format!("  %s = teg.sink @y %v10 : {t} -> !teg.token\n  teg.sequence_point %s : !teg.token\n}}\n"));
    let mut ctx = Context::new(tapestry::dialects::all());
    let g = graph(&mut ctx, &text);
    let inputs = IndexMap::from([("x".to_string(), Array::from_fn(DType::F32, vec![CHAIN_LEN], |i| i as f64))]);
    let out = evaluate(&ctx, g, &inputs).expect("runs");
    assert_eq!(out["y"].len() as u64, CHAIN_LEN);
    let status = std::fs::read_to_string("/proc/self/status").expect("Linux /proc");
    let peak = status.lines().find_map(|l| l.strip_prefix("VmHWM:")).expect("VmHWM");
    println!("{}", peak.trim().trim_end_matches("kB").trim());
}

/// Parses and verifies a graph of 100k ops (a chain of cell ops over a small tensor).
fn verify_bench() {
    let t = "!teg.tensor<[b=8, f=16] x f32>";
    let mut text = format!("teg.graph @big {{\n  %v0 = teg.source @x : {t}\n");
    let ops = 100_000;
    for i in 1..ops {
        let op = ["add", "mul", "max", "sub"][i % 4];
        text += &format!("  %v{i} = teg.{op} %v{}, %v0 : {t}\n", i - 1);
    }
    text +=
        &format!("  %s = teg.sink @y %v{} : {t} -> !teg.token\n  teg.sequence_point %s : !teg.token\n}}\n", ops - 1);
    let mut ctx = Context::new(tapestry::dialects::all());
    let start = Instant::now();
    let module = tapestry::parse::parse_file(&mut ctx, "big.tap", &text).expect("parses");
    let parsed = start.elapsed().as_secs_f64();
    let start = Instant::now();
    let diags = verify(&ctx, module, VerifyOptions::default());
    let verified = start.elapsed().as_secs_f64();
    assert!(diags.is_empty());
    println!("graph of {} ops: parse {:.3} s, verify {:.3} s", ops + 2, parsed, verified);
}
