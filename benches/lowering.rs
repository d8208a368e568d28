//! Lowering benchmarks (issue 16's performance points), in one run on one machine:
//!
//! - **Compile time** of `tap-to-npu` on chains of 1,000, 10,000 and 100,000 elementwise ops over a 64 × 64 f32
//!   tensor (parsing and verifying not timed): it should grow linearly, so the time per op should stay flat.
//! - **The lowered MLP and conv against the reference evaluator:** `relu(x · W1 + b1) · W2` (x 256 × 512,
//!   W1 512 × 1024, W2 1024 × 256, f32), and a `teg.conv2d` (3 × 3, 64 input channels to 128 output channels over
//!   a 32 × 32 image padded by 1); the reference evaluator's time next to the interpreter's (loading the kernel
//!   once, then runs of the two in pairs: the medians, and the median of the pairs' ratios).
//! - **Estimated cycles against the roofline** of the lowered matmul (1024 × 1024 × 1024, f32) and conv (the one
//!   above, and the same on a batch of 8 images): the interpreter's makespan next to the compute bound (FLOPs / the
//!   chip's f32 matmul rate) and the bandwidth bound (the bytes that must be read and written / HBM bytes per
//!   cycle), and the latency floor no schedule beats (the compute bound plus two DMA startups and three
//!   instructions' setup: a DMA in, a TRF load and a matmul before the busiest slice's multiplying, a move out of
//!   the accumulator and a DMA out after it). The single image is latency-bound: its floor is 2.03 times its
//!   compute bound, so it cannot come within 2× of the roofline on this machine.
//!
//! `cargo bench --bench lowering` (`LOWERING_BENCH=compile|run|cycles` runs one part).

use indexmap::IndexMap;
use std::time::Instant;
use tapestry::array::{Array, Data};
use tapestry::dialects::npu::interp::{Npu, Program};
use tapestry::dialects::teg::eval::evaluate;
use tapestry::driver::lowered::{bindings, kernel_inputs};
use tapestry::ir::symbols::symbol_name;
use tapestry::ir::{walk, Context, OpId};
use tapestry::machine::{ElemType, NpuConfig};
use tapestry::passes::{Instrumentation, PassManager, PassRegistry};

fn timed<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let start = Instant::now();
    let out = f();
    (out, start.elapsed().as_secs_f64())
}

fn median(mut times: Vec<f64>) -> f64 {
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn parse(text: &str) -> (Context, OpId) {
    let mut ctx = Context::new(tapestry::dialects::all());
    let module = tapestry::parse_and_verify(&mut ctx, "bench.tap", text).expect("valid");
    (ctx, module)
}

fn lower(ctx: &mut Context, module: OpId) {
    let registry = PassRegistry::with_builtin();
    let mut pm = PassManager::parse("builtin.module(tap-to-npu)", &registry).expect("a pipeline");
    let mut sink = Vec::new();
    pm.run(ctx, module, &mut Instrumentation::quiet(&mut sink)).expect("lowers");
}

fn find(ctx: &Context, module: OpId, name: &str, kind: &str) -> OpId {
    walk::preorder(&ctx.body, module)
        .into_iter()
        .find(|&o| ctx.op_name(o) == kind && symbol_name(ctx, o) == Some(name))
        .expect("the op")
}

/// A chain of `n` elementwise ops.
fn chain(n: usize) -> String {
    let t = "!teg.tensor<[a=64, b=64] x f32>";
    let mut text = format!("teg.graph @chain {{\n  %v0 = teg.source @x : {t}\n  %y = teg.source @y : {t}\n");
    for i in 1..=n {
        let op = match i % 3 {
            0 => format!("teg.add %v{}, %y", i - 1),
            1 => format!("teg.relu %v{}", i - 1),
            _ => format!("teg.mul %v{}, %y", i - 1),
        };
        text += &format!("  %v{i} = {op}\n");
    }
    text + &format!("  %k = teg.sink @out %v{n} : {t} -> !teg.token\n  teg.sequence_point %k : !teg.token\n}}\n")
}

fn compile_time() {
    println!(
        "compile time of tap-to-npu (teg-shard, teg-prune, resolve-layouts, convert-teg-to-npu), 64 x 64 f32 chains:"
    );
    println!("{:>8} {:>14} {:>14} {:>12}", "ops", "instructions", "time (ms)", "us per op");
    for n in [1_000usize, 10_000, 100_000] {
        let text = chain(n);
        let reps = if n >= 100_000 { 1 } else { 3 };
        let mut times = Vec::new();
        let mut count = 0;
        for _ in 0..reps {
            let (mut ctx, module) = parse(&text);
            let ((), t) = timed(|| lower(&mut ctx, module));
            times.push(t);
            let k = find(&ctx, module, "chain", "npu.kernel");
            let block = ctx.body.region(ctx.body.regions(k)[0]).blocks[0];
            count = ctx.body.block_ops(block).count();
        }
        let t = median(times);
        println!("{n:>8} {count:>14} {:>14.1} {:>12.2}", t * 1e3, t * 1e6 / n as f64);
    }
}

/// Small-integer inputs for `graph`'s sources (exact in f32 sums).
fn inputs(ctx: &Context, graph: OpId) -> IndexMap<String, Array> {
    tapestry::dialects::teg::eval::sources(ctx, graph)
        .into_iter()
        .enumerate()
        .map(|(i, (name, shape, _))| {
            let n = shape.iter().product::<u64>() as usize;
            let data = (0..n).map(|j| ((j * 7 + i * 3) % 5) as f32 - 2.0).collect();
            (name, Array::new(shape, Data::F32(data)).expect("an array"))
        })
        .collect()
}

struct Lowered {
    reference: f64,
    load: f64,
    run: f64,
    /// The median over pairs of one run's time over the reference's just before it.
    ratio: f64,
    makespan: u64,
}

/// Runs of the reference evaluator and of the lowered kernel, in pairs (so that the machine's drift meets both alike).
const PAIRS: usize = 21;

fn run_lowered(text: &str, name: &str) -> Lowered {
    let (reference_ctx, reference_module) = parse(text);
    let graph = find(&reference_ctx, reference_module, name, "teg.graph");
    let named = inputs(&reference_ctx, graph);
    let (mut ctx, module) = parse(text);
    lower(&mut ctx, module);
    let kernel = find(&ctx, module, name, "npu.kernel");
    let b = bindings(&ctx, kernel).expect("bindings").expect("a lowered kernel");
    let args = kernel_inputs(&ctx, kernel, &b, &[&named]).expect("binds");
    let load = median((0..3).map(|_| timed(|| Program::load(&ctx, kernel).expect("loads")).1).collect());
    let program = Program::load(&ctx, kernel).expect("loads");
    let mut npu = Npu::default();
    let first = npu.launch(&program, &args).expect("runs");
    evaluate(&reference_ctx, graph, &named).expect("evaluates");
    let pairs: Vec<(f64, f64)> = (0..PAIRS)
        .map(|_| {
            let reference = timed(|| evaluate(&reference_ctx, graph, &named).expect("evaluates")).1;
            (reference, timed(|| npu.launch(&program, &args).expect("runs")).1)
        })
        .collect();
    Lowered {
        reference: median(pairs.iter().map(|p| p.0).collect()),
        load,
        run: median(pairs.iter().map(|p| p.1).collect()),
        ratio: median(pairs.iter().map(|p| p.1 / p.0).collect()),
        makespan: first.schedule.makespan,
    }
}

const MLP: &str = r#"
!x = !teg.tensor<[batch=256, in=512] x f32>
!w1 = !teg.tensor<[in=512, hid=1024] x f32>
!b1 = !teg.tensor<[hid=1024] x f32>
!w2 = !teg.tensor<[hid=1024, out=256] x f32>
!h = !teg.tensor<[batch=256, hid=1024] x f32>
teg.graph @mlp {
  %x = teg.source @x : !x
  %w1 = teg.source @w1 : !w1
  %b1 = teg.source @b1 : !b1
  %w2 = teg.source @w2 : !w2
  %h = teg.linear %x, %w1, %b1 : !x, !w1, !b1
  %r = teg.relu %h
  %y = teg.matmul %r, %w2 : !h, !w2
  %k = teg.sink @y %y : !teg.tensor<[batch=256, out=256] x f32> -> !teg.token
  teg.sequence_point %k : !teg.token
}
"#;

/// A 3 x 3 convolution of 64 channels to 128 over a 32 x 32 image, padded by 1 (the result 32 x 32 too).
const CONV: &str = include_str!("../examples/teg/conv-64-128.tap");

const MATMUL: &str = r#"
!a = !teg.tensor<[m=1024, k=1024] x f32>
!b = !teg.tensor<[k=1024, n=1024] x f32>
teg.graph @matmul {
  %a = teg.source @a : !a
  %b = teg.source @b : !b
  %c = teg.matmul %a, %b : !a, !b
  %s = teg.sink @c %c : !teg.tensor<[m=1024, n=1024] x f32> -> !teg.token
  teg.sequence_point %s : !teg.token
}
"#;

fn run_time() {
    println!("the lowered kernel on the interpreter against the reference evaluator (ms, medians of {PAIRS} pairs):");
    println!(
        "{:>8} {:>11} {:>10} {:>10} {:>12} {:>13}",
        "graph", "reference", "load", "run", "run / ref", "(load+run)/ref"
    );
    for (name, text) in [("mlp", MLP), ("conv", CONV)] {
        let l = run_lowered(text, name);
        println!(
            "{name:>8} {:>11.1} {:>10.1} {:>10.1} {:>12.2} {:>13.2}",
            l.reference * 1e3,
            l.load * 1e3,
            l.run * 1e3,
            l.ratio,
            (l.load + l.run) / l.reference
        );
    }
}

fn cycles() {
    let cfg = NpuConfig::default();
    let peak =
        cfg.device().expect("a device").throughput(tapestry::machine::OpClass::Matrix, ElemType::Bf16).unwrap_or(1.0)
            / 2.0;
    let f32_rate = peak / cfg.matmul_k_per_cycle(ElemType::Bf16) as f64 * cfg.matmul_k_per_cycle(ElemType::F32) as f64;
    println!("estimated cycles of lowered contractions against the roofline (default machine, f32):");
    println!(
        "{:>8} {:>12} {:>14} {:>14} {:>10} {:>14} {:>10}",
        "graph", "makespan", "compute bound", "memory bound", "ratio", "latency floor", "ratio"
    );
    // Per graph: its GEMM's m, n and k, and the elements it must read and write (A, B and C; for the conv, its
    // input, kernels and result).
    let batch = CONV.replace("n=1,", "n=8,");
    let graphs = [
        ("matmul", MATMUL, (1024u64, 1024u64, 1024u64), 3 * 1024 * 1024u64),
        ("conv", CONV, (1024, 128, 576), 64 * 1024 + 128 * 576 + 128 * 1024),
        ("conv x8", batch.as_str(), (8 * 1024, 128, 576), 8 * 64 * 1024 + 128 * 576 + 8 * 128 * 1024),
    ];
    for (name, text, (m, n, k), elements) in graphs {
        let l = run_lowered(text, name.split(' ').next().expect("a graph's name"));
        let flops = 2.0 * (m * n * k) as f64;
        let compute = flops / (2.0 * f32_rate);
        let memory = (elements * 4) as f64 / cfg.hbm_bytes_per_cycle as f64;
        let bound = compute.max(memory);
        // No schedule is shorter: the busiest slice's matmuls need a DMA in, a TRF load and the matmul's setup
        // before them, and a move out of the accumulator and a DMA out after them.
        let floor = compute + (2 * cfg.dma_startup_cycles + 3 * cfg.compute_setup_cycles) as f64;
        let (ratio, to_floor) = (l.makespan as f64 / bound, l.makespan as f64 / floor);
        println!(
            "{name:>8} {:>12} {compute:>14.0} {memory:>14.0} {ratio:>10.2} {floor:>14.0} {to_floor:>10.2}",
            l.makespan
        );
    }
}

fn main() {
    let part = std::env::var("LOWERING_BENCH").unwrap_or_default();
    if part.is_empty() || part == "compile" {
        compile_time();
    }
    if part.is_empty() || part == "run" {
        run_time();
    }
    if part.is_empty() || part == "cycles" {
        cycles();
    }
}
