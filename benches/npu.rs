//! NPU interpreter benchmarks (issue 15's performance points): a tiled f32 matmul program of
//! [1024, 1024] × [1024, 1024] on 64 slices, side by side with NumPy's matmul (`scripts/numpy-bench.py`, run with
//! `NUMPY_PYTHON`, default `python3`, when it can import NumPy); the host throughput of simulated DMA traffic (a
//! 256 MiB HBM-to-HBM copy in 4 KiB packets, and the same bytes through one slice's data memory in 512 KiB round
//! trips), and the interpreter's own overhead per instruction (20,000 small DMAs alternating between two queues,
//! each waiting for the previous one through a semaphore, with nothing to move but 64 bytes).
//!
//! Each kernel is loaded (decoded and scheduled) once and run on one `Npu`: the figures are medians of 5 loads and of
//! the 11 runs after the first (the first, on fresh pages, is reported for the matmul; NumPy's time is the mean of
//! its medians just before and just after); parsing and verifying are not timed. A kernel with no instruction over
//! the same buffers gives the cost of binding the input and reading the output back, and the time beyond it.
//!
//! `cargo bench --bench npu`

use indexmap::IndexMap;
use std::time::Instant;
use tapestry::array::{Array, Data};
use tapestry::dialects::npu::interp::{run_kernel, Npu, Program};
use tapestry::ir::{Context, OpId};

fn kernel(ctx: &mut Context, text: &str) -> OpId {
    let module = tapestry::parse_and_verify(ctx, "bench.tap", text).expect("valid");
    let region = ctx.body.regions(module)[0];
    ctx.body.block_ops(ctx.body.region(region).blocks[0]).next().expect("a kernel")
}

/// The times of one kernel: loading it, its first run on a new [`Npu`] (every page fresh), and the median of the
/// next 11 runs on that `Npu` (its memories kept from run to run), in seconds.
struct Times {
    load: f64,
    cold: f64,
    warm: f64,
}

fn time_launches(text: &str, inputs: &[Array]) -> Times {
    let (ctx, k, inputs) = setup(text, inputs);
    let load = median((0..5).map(|_| timed(|| drop(Program::load(&ctx, k).expect("loads")))).collect());
    let program = Program::load(&ctx, k).expect("loads");
    let mut npu = Npu::default();
    let cold = timed(|| drop(npu.launch(&program, &inputs).expect("runs")));
    let warm = median((0..11).map(|_| timed(|| drop(npu.launch(&program, &inputs).expect("runs")))).collect());
    Times { load, cold, warm }
}

fn setup(text: &str, inputs: &[Array]) -> (Context, OpId, IndexMap<String, Array>) {
    let mut ctx = Context::new(tapestry::dialects::all());
    let k = kernel(&mut ctx, text);
    let inputs = inputs.iter().enumerate().map(|(i, a)| (format!("arg{i}"), a.clone())).collect();
    (ctx, k, inputs)
}

fn timed(f: impl FnOnce()) -> f64 {
    let start = Instant::now();
    f();
    start.elapsed().as_secs_f64()
}

fn median(mut times: Vec<f64>) -> f64 {
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// The tiled matmul program: `C[1024 × 1024] = A · B`, `B` given as `Bt` (`[n][k]`). Slice `8i + j` of cluster 0
/// computes the 128 × 128 tile `(i, j)` in eight steps of 128 along `k`: per step one DMA per slice brings its rows of
/// `A` and one its rows of `Bt` (128 DMAs over the eight engines, each engine's semaphore counting its DMAs), one
/// `npu.load_trf` fills every slice's TRF (64 KiB: all of it) and one `npu.matmul` on the 64 slices accumulates. Steps
/// alternate between two DM buffers; a step's DMAs wait for the matmul two steps back. A move out of the accumulator
/// and 64 DMAs write `C`.
fn tiled_matmul() -> String {
    const N: usize = 1024;
    const T: usize = 128;
    const E: usize = 4;
    let (row, tile) = (T * E, T * T * E);
    let mut p = format!(
        "npu.kernel @mm(%a: !npu.buf<hbm, {} x f32>, %bt: !npu.buf<hbm, {} x f32>, %c: !npu.buf<hbm, {} x f32>) {{\n",
        N * N,
        N * N,
        N * N
    );
    for q in 0..8 {
        p += &format!("  %q{q} = npu.semaphore\n");
    }
    p += "  %mm = npu.semaphore\n  %done = npu.semaphore\n";
    let mut sent = [0usize; 8];
    let slices = (N / T) * (N / T);
    for step in 0..N / T {
        let buffer = (step % 2) * 2 * tile;
        let wait = if step >= 2 { format!("waits(%mm = {}) ", step - 1) } else { String::new() };
        for s in 0..slices {
            let (i, j) = (s / (N / T), s % (N / T));
            for (m, what, first, at) in [(0, "a", i, buffer), (1, "bt", j, buffer + tile)] {
                let q = (2 * s + m) % 8;
                sent[q] += 1;
                let base = (first * T * N + step * T) * E;
                p += &format!(
                    "  npu.dma queue(dma{q}) {wait}src(%{what}, base {base}) dst(dm[0, {s}], base {at}) loops [({T}, {}, {row})] packet {row} : f32 signals(%q{q} = {})\n",
                    N * E,
                    sent[q]
                );
            }
        }
        let waits: Vec<String> = (0..8).map(|q| format!("%q{q} = {}", sent[q])).collect();
        p += &format!(
            "  npu.load_trf queue(main) waits({}) on(0, 0:{slices}) src(dm, base {}, loops [], packet {tile}) dst(trf, base 0, loops [({}, {row}), (8, 8192)], packet {row}) : f32\n",
            waits.join(", "),
            buffer + tile,
            T / 8
        );
        let accumulate = if step > 0 { " accumulate" } else { "" };
        p += &format!(
            "  npu.matmul queue(main) on(0, 0:{slices}) m {T} k {T} n {T} a(dm, base {buffer}, loops [], packet {tile}) b(trf, base 0) c(acc, base 0, loops [], packet {tile}){accumulate} : f32 -> f32 signals(%mm = {})\n",
            step + 1
        );
    }
    p += &format!(
        "  npu.cast queue(main) on(0, 0:{slices}) src(acc, base 0, loops [], packet {tile}) dst(dm, base 0, loops [], packet {tile}) : f32 -> f32 signals(%done = 1)\n"
    );
    for s in 0..slices {
        let (i, j) = (s / (N / T), s % (N / T));
        p += &format!(
            "  npu.dma queue(dma{}) waits(%done = 1) src(dm[0, {s}], base 0) dst(%c, base {}) loops [({T}, {row}, {})] packet {row} : f32\n",
            s % 8,
            (i * T * N + j * T) * E,
            N * E
        );
    }
    p + "}\n"
}

/// NumPy's median seconds for `case` of `scripts/numpy-bench.py` (`None` when NumPy is not there).
fn numpy(case: &str) -> Option<f64> {
    let python = std::env::var("NUMPY_PYTHON").unwrap_or_else(|_| "python3".into());
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/numpy-bench.py");
    let out = std::process::Command::new(python).args([script, case]).output().ok()?;
    let text = String::from_utf8(out.stdout).ok().filter(|_| out.status.success())?;
    text.lines().find_map(|l| l.strip_prefix(case)?.trim().parse().ok())
}

fn floats(n: usize) -> Array {
    Array::new(vec![n as u64], Data::F32((0..n).map(|i| i as f32).collect())).unwrap()
}

/// The tiled matmul against NumPy's, and the product checked against a plain one on a few cells.
fn matmul() {
    let n = 1024;
    let values = |seed: usize| (0..n * n).map(move |i| ((i * 7 + seed) % 13) as f32 - 6.0).collect::<Vec<f32>>();
    let a = Array::new(vec![(n * n) as u64], Data::F32(values(1))).unwrap();
    let bt = Array::new(vec![(n * n) as u64], Data::F32(values(5))).unwrap();
    let text = tiled_matmul();
    let mut ctx = Context::new(tapestry::dialects::all());
    let k = kernel(&mut ctx, &text);
    let inputs: IndexMap<String, Array> = [("arg0".to_string(), a.clone()), ("arg1".to_string(), bt.clone())].into();
    let run = run_kernel(&ctx, k, &inputs).expect("runs");
    let (av, bv) = (values(1), values(5));
    for (r, c) in [(0, 0), (5, 1000), (1023, 17), (640, 640)] {
        let want: f32 = (0..n).map(|p| av[r * n + p] * bv[c * n + p]).sum();
        assert_eq!(run.buffers["arg2"].data().get_f64(r * n + c), want as f64, "C[{r}, {c}]");
    }
    let ops = ctx.body.block_ops(ctx.body.region(ctx.body.regions(k)[0]).blocks[0]).count();
    // NumPy just before and just after ours, so that the machine's drift in between weighs on both sides alike.
    let before = numpy("matmul1024");
    let t = time_launches(&text, &[a, bt]);
    let theirs = before.zip(numpy("matmul1024")).map(|(x, y)| (x + y) / 2.0);
    let ratio =
        |t: f64| theirs.map_or("NumPy not found".to_string(), |n| format!("{:.2}× NumPy's {:.1} ms", t / n, n * 1e3));
    println!(
        "| tiled f32 matmul 1024³ on 64 slices ({ops} instructions, makespan {} cycles): a run of the loaded program | {:.1} ms | {} |",
        run.schedule.makespan,
        t.warm * 1e3,
        ratio(t.warm)
    );
    println!("| the same, first run on a new `Npu` (fresh pages) | {:.1} ms | {} |", t.cold * 1e3, ratio(t.cold));
    println!("| loading it (decode and schedule, once per program) | {:.1} ms | |", t.load * 1e3);
    println!(
        "| load and first run (what `tap-run` does) | {:.1} ms | {} |",
        (t.load + t.cold) * 1e3,
        ratio(t.load + t.cold)
    );
}

fn main() {
    println!("| case | host time | against NumPy |");
    println!("|---|---|---|");
    matmul();
    if std::env::var("NPU_BENCH").is_ok_and(|v| v == "matmul") {
        return;
    }
    println!();
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
    let t_empty = time_launches(&empty, std::slice::from_ref(&input)).warm;
    let t_hbm = time_launches(&hbm, std::slice::from_ref(&input)).warm;
    let t_through = time_launches(&through, std::slice::from_ref(&input)).warm;
    let t_chain = time_launches(&chain, &[floats(16)]);
    let rate = |moved: f64, t: f64| (moved / t / 1e9, (t - t_empty) * 1e3);
    println!("| case (runs of the loaded program on one `Npu`) | host time | simulated traffic per host second (whole run); time beyond binding and reading back |");
    println!("|---|---|---|");
    println!("| a 256 MiB buffer bound and one read back, no instruction | {:.1} ms | |", t_empty * 1e3);
    let (whole, beyond) = rate(bytes as f64, t_hbm);
    println!("| 256 MiB HBM to HBM, 4 KiB packets | {:.1} ms | {whole:.2} GB/s; {beyond:.1} ms |", t_hbm * 1e3);
    let (whole, beyond) = rate(2.0 * bytes as f64, t_through);
    println!(
        "| 256 MiB through one slice's DM, 512 KiB round trips (1024 DMAs) | {:.1} ms | {whole:.2} GB/s; {beyond:.1} ms |",
        t_through * 1e3
    );
    println!(
        "| {small} chained 64-byte DMAs on two queues: loading; a run | {:.1} ms; {:.1} ms | {:.2} µs; {:.2} µs per instruction |",
        t_chain.load * 1e3,
        t_chain.warm * 1e3,
        t_chain.load / small as f64 * 1e6,
        t_chain.warm / small as f64 * 1e6
    );
}
