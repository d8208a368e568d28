//! TEG evaluator and verifier benchmarks: the cases (matmul 512³ and 1024³, a conv2d, `relu(x·s + b)`
//! with broadcast rows, a sum over rows and a max over columns, a 16M-element add; f32) through the reference
//! evaluator, side by side with NumPy (`scripts/numpy-bench.py`, run with `NUMPY_PYTHON`, default `python3`,
//! when it can import NumPy) and their target ratios; the time to verify a graph of 100k ops; and the
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

/// Median seconds of evaluations of `text` on `inputs`, each with freeing its result, as NumPy's side
/// (`scripts/numpy-bench.py`) times them: inputs made once, then call and free; 11 runs, or 101 for a case under
/// a millisecond (its median moves with the machine's noise).
fn time_eval(text: &str, inputs: &IndexMap<String, Array>) -> f64 {
    let mut ctx = Context::new(tapestry::dialects::all());
    let g = graph(&mut ctx, text);
    let start = Instant::now();
    evaluate(&ctx, g, inputs).expect("runs");
    let runs = if start.elapsed().as_secs_f64() < 1e-3 { 101 } else { 11 };
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

/// NumPy's median seconds per case, by case name (`None` when NumPy is not there).
fn numpy() -> Option<IndexMap<String, f64>> {
    let python = std::env::var("NUMPY_PYTHON").unwrap_or_else(|_| "python3".into());
    let out = Command::new(python).arg(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/numpy-bench.py")).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?;
    text.lines().map(|l| l.split_once(' ').and_then(|(k, v)| Some((k.to_string(), v.trim().parse().ok()?)))).collect()
}

/// One benchmark case: its name (NumPy's side uses the same), what it computes, the target ratio to
/// NumPy, the graph (computing `%r` from sources) and its inputs.
struct Case {
    name: &'static str,
    what: &'static str,
    target: f64,
    text: String,
    inputs: IndexMap<String, Array>,
}

/// A case whose graph has sources `(name, type, value)` and the op lines `body` defining `%r` of type `result`.
fn case(
    name: &'static str,
    what: &'static str,
    target: f64,
    sources: Vec<(&str, String, Array)>,
    body: &str,
    result: &str,
) -> Case {
    let mut text = String::from("teg.graph @bench {\n");
    for (name, t, _) in &sources {
        text += &format!("  %{name} = teg.source @{name} : {t}\n");
    }
    text += &format!(
        "{body}\n  %done = teg.sink @r %r : {result} -> !teg.token\n  teg.sequence_point %done : !teg.token\n}}\n"
    );
    let inputs = sources.into_iter().map(|(n, _, a)| (n.to_string(), a)).collect();
    Case { name, what, target, text, inputs }
}

/// An f32 tensor type with these dimensions.
fn tensor(dims: &[(&str, u64)]) -> String {
    let d: Vec<String> = dims.iter().map(|(n, e)| format!("{n}={e}")).collect();
    format!("!teg.tensor<[{}] x f32>", d.join(", "))
}

/// A source of type `tensor(dims)` holding smooth pseudo-random values.
fn source<'a>(name: &'a str, dims: &[(&str, u64)], seed: f64) -> (&'a str, String, Array) {
    let shape: Vec<u64> = dims.iter().map(|d| d.1).collect();
    (name, tensor(dims), Array::from_fn(DType::F32, shape, move |i| ((i as f64 + seed) * 0.001).sin()))
}

fn matmul(n: u64, name: &'static str, what: &'static str) -> Case {
    let (a, b) = (source("a", &[("m", n), ("k", n)], 0.0), source("b", &[("k", n), ("n", n)], 0.5));
    let c = tensor(&[("m", n), ("n", n)]);
    let body = format!("  %r = teg.matmul %a, %b : {}, {} -> {c}", a.1, b.1);
    case(name, what, 1.0, vec![a, b], &body, &c)
}

fn cases() -> Vec<Case> {
    let n = 1024;
    let square = [("h", n), ("w", n)];
    let x = tensor(&square);
    let (img, ker) = (
        source("img", &[("n", 4), ("c", 16), ("h", 64), ("w", 64)], 0.0),
        source("ker", &[("o", 32), ("c", 16), ("kh", 3), ("kw", 3)], 0.5),
    );
    let conv_out = tensor(&[("n", 4), ("o", 32), ("h", 64), ("w", 64)]);
    let conv = format!(
        "  %r = teg.conv2d %img, %ker strides [1, 1] dilations [1, 1] padding [1, 1] : {}, {} -> {conv_out}",
        img.1, ker.1
    );
    let affine = format!("  %m = teg.mul %x, %s : {x}\n  %a = teg.add %m, %b : {x}\n  %r = teg.relu %a : {x}");
    let reduce = |dim: &str, monoid: &str, kept: &str| {
        format!("  %r = teg.reduce %x along [\"{dim}\"] by \"{monoid}\" : {x} -> {}", tensor(&[(kept, n)]))
    };
    let len = [("n", 1u64 << 24)];
    let add = format!("  %r = teg.add %x, %y : {}", tensor(&len));
    vec![
        matmul(512, "matmul512", "matmul f32 512x512 · 512x512"),
        matmul(1024, "matmul1024", "matmul f32 1024x1024 · 1024x1024"),
        case("conv2d", "conv2d f32 N=4 C=16 64x64 O=32 3x3 pad 1", 1.5, vec![img, ker], &conv, &conv_out),
        case(
            "relu_affine",
            "relu(x·s + b) f32 1024², s and b rows",
            1.5,
            vec![source("x", &square, 0.0), source("s", &[("w", n)], 0.2), source("b", &[("w", n)], 0.7)],
            &affine,
            &x,
        ),
        case(
            "sum_rows",
            "sum over rows f32 1024² (along h)",
            1.5,
            vec![source("x", &square, 0.0)],
            &reduce("h", "sum", "w"),
            &tensor(&[("w", n)]),
        ),
        case(
            "max_cols",
            "max over columns f32 1024² (along w)",
            1.5,
            vec![source("x", &square, 0.0)],
            &reduce("w", "max", "h"),
            &tensor(&[("h", n)]),
        ),
        case(
            "add16m",
            "add f32 16M elements",
            1.2,
            vec![source("x", &len, 0.0), source("y", &len, 1.0)],
            &add,
            &tensor(&len),
        ),
    ]
}

fn main() {
    if std::env::var_os(CHAIN_CHILD).is_some() {
        return chain_child();
    }
    let theirs = numpy();
    println!("{:<42} {:>10} {:>10} {:>7} {:>7}", "case", "tapestry", "numpy", "ratio", "target");
    for case in cases() {
        let ours = time_eval(&case.text, &case.inputs);
        let numpy = theirs.as_ref().and_then(|t| t.get(case.name).copied());
        let ms = |t: f64| format!("{:.3} ms", t * 1e3);
        let ratio = numpy.map_or("n/a".to_string(), |t| format!("{:.2}x", ours / t));
        let target = format!("{:.1}x", case.target);
        println!(
            "{:<42} {:>10} {:>10} {:>7} {:>7}",
            case.what,
            ms(ours),
            numpy.map_or("n/a".into(), ms),
            ratio,
            target
        );
    }
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
