//! Layout benchmarks: the CuTe algebra on typical layouts (rank up to 6), median time per operation, side by
//! side with pycute (nvidia-cutlass) when `PYCUTE_PYTHON` (default `python3`) can import it; and table and
//! address generation in entries per second on one core.
//!
//! `cargo bench --bench layout` (set `PYCUTE_PYTHON=/path/to/python` for a venv with `nvidia-cutlass`).

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Instant;
use tapestry::dialects::layout::syntax::{parse_cute, parse_xla};
use tapestry::layout::address::access_pattern;
use tapestry::layout::notation::cute::CuteLayout;
use tapestry::layout::notation::cute_algebra as alg;
use tapestry::layout::table::{offsets_into, Order};

/// `(op, a, b)`: the algebra cases, CuTe notation (`b` is the bound for complement, empty for unary ops).
const CASES: &[(&str, &str, &str)] = &[
    ("compose", "(6,2):(8,2)", "(4,3):(3,1)"),
    ("compose", "((2,2),(4,8)):((1,64),(2,8))", "(2,(2,4)):(1,(2,8))"),
    ("complement", "(2,2):(1,6)", "24"),
    ("complement", "(4,(2,3),2):(2,(1,8),48)", "192"),
    ("coalesce", "(2,(1,6)):(1,(6,2))", ""),
    ("coalesce", "((2,2),(2,2),(2,2)):((1,2),(4,8),(16,32))", ""),
    ("right_inverse", "(4,3):(8,1)", ""),
    ("right_inverse", "((2,4),(2,2),3):((1,8),(2,4),32)", ""),
    ("left_inverse", "(4,(2,3)):(2,(1,8))", ""),
    ("logical_divide", "(4,2,3):(2,1,8)", "4:2"),
    ("logical_divide", "(8,8,4):(1,8,64)", "(2,4):(1,8)"),
    ("logical_product", "(2,2):(4,1)", "6:1"),
    ("logical_product", "(4,4):(1,4)", "(2,3):(3,1)"),
];

fn cute(text: &str) -> CuteLayout {
    parse_cute(text).unwrap().layout().unwrap()
}

/// Median nanoseconds per call of `f` over 51 batches of 2,000 calls.
fn median_ns(mut f: impl FnMut()) -> f64 {
    let mut runs: Vec<f64> = (0..51)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..2000 {
                f();
            }
            start.elapsed().as_nanos() as f64 / 2000.0
        })
        .collect();
    runs.sort_by(f64::total_cmp);
    runs[runs.len() / 2]
}

fn ours(op: &str, a: &str, b: &str) -> f64 {
    let (a, bl) = (cute(a), if b.is_empty() || op == "complement" { None } else { Some(cute(b)) });
    let bound: i64 = if op == "complement" { b.parse().unwrap() } else { 0 };
    let run = |a: &CuteLayout| -> bool {
        match op {
            "compose" => alg::composition(a, bl.as_ref().unwrap()).is_ok(),
            "complement" => alg::complement(a, bound).is_ok(),
            "coalesce" => alg::coalesce(a).size() > 0,
            "right_inverse" => alg::right_inverse(a).size() > 0,
            "left_inverse" => alg::left_inverse(a).is_ok(),
            "logical_divide" => alg::logical_divide(a, bl.as_ref().unwrap()).is_ok(),
            "logical_product" => alg::logical_product(a, bl.as_ref().unwrap()).is_ok(),
            _ => unreachable!(),
        }
    };
    assert!(run(&a), "{op} {a} {b} must be admissible");
    median_ns(|| {
        std::hint::black_box(run(std::hint::black_box(&a)));
    })
}

/// pycute's median microseconds per case, if it can be run.
fn pycute() -> Option<Vec<String>> {
    let python = std::env::var("PYCUTE_PYTHON").unwrap_or_else(|_| "python3".into());
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/pycute-bench.py");
    let mut child = Command::new(python).arg(script).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().ok()?;
    let input: String = CASES.iter().map(|(op, a, b)| format!("{op}\t{a}\t{b}\n")).collect();
    child.stdin.take()?.write_all(input.as_bytes()).ok()?;
    let out = child.wait_with_output().ok()?;
    if !out.status.success() {
        return None;
    }
    Some(
        String::from_utf8_lossy(&out.stdout).lines().map(|l| l.split('\t').nth(1).unwrap_or("?").to_string()).collect(),
    )
}

/// Median seconds of 5 runs of `f`.
fn median_s(mut f: impl FnMut()) -> f64 {
    let mut runs: Vec<f64> = (0..5)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64()
        })
        .collect();
    runs.sort_by(f64::total_cmp);
    runs[2]
}

fn main() {
    let theirs = pycute();
    println!("{:<16} {:<45} {:>10} {:>12}", "op", "operands", "ours µs", "pycute µs");
    let mut all = Vec::new();
    for (i, (op, a, b)) in CASES.iter().enumerate() {
        let t = ours(op, a, b) / 1000.0;
        all.push(t);
        let p = theirs.as_ref().map_or("n/a".to_string(), |v| v[i].clone());
        println!("{op:<16} {:<45} {t:>10.3} {p:>12}", format!("{a} {b}"));
    }
    all.sort_by(f64::total_cmp);
    println!("median over all cases: {:.3} µs per operation", all[all.len() / 2]);
    if theirs.is_none() {
        println!("(pycute not found: install nvidia-cutlass and set PYCUTE_PYTHON)");
    }

    // Generation into buffers that are reused, as a consumer streaming tables would (the first fill also pays
    // for the operating system mapping fresh pages); the median of 5 fills.
    let tiled = parse_xla("f32[2048,8192]{1,0:T(8,128)}").unwrap().to_repr().unwrap();
    let n = tiled.size() as f64;
    let mut table = Vec::new();
    let t_table = median_s(|| offsets_into(&tiled, Order::RowMajor, &mut table));
    let pattern = access_pattern(&tiled, Order::RowMajor).unwrap();
    let mut addrs = Vec::new();
    let t_addr = median_s(|| {
        addrs.clear();
        pattern.expand(&mut addrs);
    });
    assert_eq!(addrs.len(), table.len());
    assert!(addrs.iter().zip(&table).all(|(a, t)| Some(*a) == *t));
    println!(
        "table generation   f32[2048,8192]{{1,0:T(8,128)}}: {:.0} M entries/s ({} entries in {:.1} ms)",
        n / t_table / 1e6,
        table.len(),
        t_table * 1e3
    );
    println!(
        "address generation f32[2048,8192]{{1,0:T(8,128)}}: {:.0} M entries/s ({} loops)",
        n / t_addr / 1e6,
        pattern.loops.len()
    );
}
