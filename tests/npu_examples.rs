//! The hand-written NPU programs of `examples/npu/` against NumPy: each runs on the interpreter with its inputs
//! from `examples/npu/data/`, and its output buffer matches what NumPy computed for it (`scripts/npu-fixtures.py`;
//! this test needs no Python). Sums run in another order than NumPy's, so floats agree to a relative 1e-5.

use indexmap::IndexMap;
use tapestry::array::{npy, Array};
use tapestry::dialects::npu::interp::run_kernel;

fn data(name: &str) -> Array {
    let path = format!("{}/examples/npu/data/{name}.npy", env!("CARGO_MANIFEST_DIR"));
    npy::read(&std::fs::read(&path).unwrap()).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Runs `examples/npu/<example>.tap` with `inputs` bound to `arg0`, `arg1`, ... (an empty name leaves that
/// buffer unbound) and compares buffer `output` with the fixture `expected`; gives the makespan.
fn check(example: &str, inputs: &[&str], output: &str, expected: &str) -> u64 {
    let path = format!("{}/examples/npu/{example}.tap", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    let mut ctx = tapestry::context();
    let module = tapestry::parse_and_verify(&mut ctx, &path, &text).unwrap_or_else(|e| panic!("{e:?}"));
    let region = ctx.body.regions(module)[0];
    let kernel = ctx.body.block_ops(ctx.body.region(region).blocks[0]).next().unwrap();
    let bound: IndexMap<String, Array> =
        inputs.iter().enumerate().filter(|(_, n)| !n.is_empty()).map(|(i, n)| (format!("arg{i}"), data(n))).collect();
    let run = run_kernel(&ctx, kernel, &bound).unwrap_or_else(|e| panic!("{e:?}"));
    let (got, want) = (&run.buffers[output], data(expected));
    assert_eq!(got.len(), want.len(), "{example}: length");
    for i in 0..want.len() {
        let (g, w) = (got.data().get_f64(i), want.data().get_f64(i));
        assert!((g - w).abs() <= 1e-5 * w.abs().max(1.0), "{example}: element {i} is {g}, NumPy says {w}");
    }
    run.schedule.makespan
}

#[test]
fn a_tiled_matmul_across_four_slices() {
    let makespan = check("tiled-matmul", &["tiled-matmul-a", "tiled-matmul-bt"], "arg2", "tiled-matmul-c");
    assert!(makespan > 0);
}

#[test]
fn a_matmul_with_bias_and_relu_in_bf16() {
    check("matmul-bias-relu", &["mbr-x", "mbr-wt", "mbr-b"], "arg3", "mbr-y");
}

#[test]
fn a_reduction_across_slices() {
    check("reduce-slices", &["reduce-x"], "arg1", "reduce-y");
}

#[test]
fn two_chips_with_a_transfer_over_the_link() {
    let makespan = check("two-chip", &["two-chip-x", "", "", "two-chip-y"], "arg4", "two-chip-out");
    // 504 + 96 + 504 cycles on chip 0, 1000 + 1024 / 64 on the link, 504 + 96 + 504 on chip 1.
    assert_eq!(makespan, 3224);
}
