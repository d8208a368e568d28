//! NPU interpreter benchmarks (issue 15's performance points that exist so far): the host throughput of simulated
//! DMA traffic (a 256 MiB HBM-to-HBM copy in 4 KiB packets, and the same bytes through one slice's data memory in
//! 512 KiB round trips), and the interpreter's own overhead per instruction (20,000 small DMAs alternating between
//! two queues, each waiting for the previous one through a semaphore, with nothing to move but 64 bytes). Medians
//! of 5 runs; parsing and verifying are not timed. A kernel with no instruction over the same buffers gives the cost
//! of binding the input and reading the buffers back, so the DMA traffic is also reported without it.
//!
//! `cargo bench --bench npu`

use indexmap::IndexMap;
use std::time::Instant;
use tapestry::array::{Array, Data};
use tapestry::dialects::npu::interp::run_kernel;
use tapestry::ir::{Context, OpId};
use tapestry::machine::NpuConfig;

fn kernel(ctx: &mut Context, text: &str) -> OpId {
    let module = tapestry::parse_and_verify(ctx, "bench.tap", text).expect("valid");
    let region = ctx.body.regions(module)[0];
    ctx.body.block_ops(ctx.body.region(region).blocks[0]).next().expect("a kernel")
}

/// Median seconds of running `text` with `arg0` bound to `input`.
fn time_run(text: &str, input: &Array) -> f64 {
    let mut ctx = Context::new(tapestry::dialects::all());
    let k = kernel(&mut ctx, text);
    let inputs: IndexMap<String, Array> = [("arg0".to_string(), input.clone())].into_iter().collect();
    let cfg = NpuConfig::default();
    let mut times: Vec<f64> = (0..5)
        .map(|_| {
            let start = Instant::now();
            drop(run_kernel(&ctx, k, &inputs, &cfg).expect("runs"));
            start.elapsed().as_secs_f64()
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[2]
}

fn floats(n: usize) -> Array {
    Array::new(vec![n as u64], Data::F32((0..n).map(|i| i as f32).collect())).unwrap()
}

fn main() {
    let bytes: usize = 256 << 20;
    let n = bytes / 4;
    let input = floats(n);
    let packets = bytes / 4096;
    let hbm = format!(
        "npu.kernel @copy(%a: !npu.buf<hbm, {n} x f32>, %b: !npu.buf<hbm, {n} x f32>) {{\n  \
         npu.dma queue(dma0) src(%a, base 0) dst(%b, base 0) loops [({packets}, 4096, 4096)] packet 4096 : f32\n}}\n"
    );
    let slice = 512 << 10;
    let mut through = format!(
        "npu.kernel @through(%a: !npu.buf<hbm, {n} x f32>, %b: !npu.buf<hbm, {n} x f32>) {{\n  %s = npu.semaphore\n"
    );
    for k in 0..bytes / slice {
        let (at, v) = (k * slice, 2 * k);
        let wait = if k == 0 { String::new() } else { format!("waits(%s = {v}) ") };
        through += &format!(
            "  npu.dma queue(dma0) {wait}src(%a, base {at}) dst(dm[0, 0], base 0) loops [(128, 4096, 4096)] packet 4096 : f32 signals(%s = {})\n  \
             npu.dma queue(dma1) waits(%s = {}) src(dm[0, 0], base 0) dst(%b, base {at}) loops [(128, 4096, 4096)] packet 4096 : f32 signals(%s = {})\n",
            v + 1,
            v + 1,
            v + 2
        );
    }
    through += "}\n";
    let small = 20_000;
    let mut chain = String::from(
        "npu.kernel @chain(%a: !npu.buf<hbm, 16 x f32>, %b: !npu.buf<hbm, 16 x f32>) {\n  %s = npu.semaphore\n",
    );
    for k in 0..small {
        let wait = if k == 0 { String::new() } else { format!("waits(%s = {k}) ") };
        chain += &format!(
            "  npu.dma queue(dma{}) {wait}src(%a, base 0) dst(%b, base 0) loops [(1, 64, 64)] packet 64 : f32 signals(%s = {})\n",
            k % 2,
            k + 1
        );
    }
    chain += "}\n";
    let empty = format!("npu.kernel @empty(%a: !npu.buf<hbm, {n} x f32>, %b: !npu.buf<hbm, {n} x f32>) {{\n}}\n");
    let t_empty = time_run(&empty, &input);
    let t_hbm = time_run(&hbm, &input);
    let t_through = time_run(&through, &input);
    let t_chain = time_run(&chain, &floats(16));
    let rate = |moved: f64, t: f64| (moved / t / 1e9, moved / (t - t_empty) / 1e9);
    println!("| case | host time | simulated traffic per host second (whole run; without binding and reading back) |");
    println!("|---|---|---|");
    println!("| the two 256 MiB buffers bound and read back, no instruction | {:.1} ms | |", t_empty * 1e3);
    let (whole, dma) = rate(bytes as f64, t_hbm);
    println!("| 256 MiB HBM to HBM, 4 KiB packets | {:.1} ms | {whole:.2} GB/s; {dma:.2} GB/s |", t_hbm * 1e3);
    let (whole, dma) = rate(2.0 * bytes as f64, t_through);
    println!(
        "| 256 MiB through one slice's DM, 512 KiB round trips (1024 DMAs) | {:.1} ms | {whole:.2} GB/s; {dma:.2} GB/s |",
        t_through * 1e3
    );
    println!(
        "| {small} chained 64-byte DMAs on two queues | {:.1} ms | {:.2} µs per instruction |",
        t_chain * 1e3,
        t_chain / small as f64 * 1e6
    );
}
