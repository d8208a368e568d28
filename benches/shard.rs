//! The auto-sharding benchmark (`sharding-and-cost.md` §2): the MLP training step with 2, 8 and 32 layers, batch
//! and widths 1024, f32, on meshes 2×4, 1×8 and 8×1 with Alpa's α–β numbers and compute free. Per row: the exact
//! optimum (variable elimination) and its solve time, then the search with a 1 s budget (seed 1): its cost, the
//! gap to the optimum, its time and rounds. Then the frontier's spread under a tight memory limit, and the search
//! against Alpa's ILP (`microlp`) with memory per device as a constraint.
//!
//! Then `teg-cost`, `teg-auto-shard{max-rounds=1}` and `teg-shard` on chains of 5k, 10k and 20k TEG ops (every
//! other op pinned to split rows, the rest to split columns, so every edge reshards), and `teg-cost` and
//! `teg-shard` on a value read by 5k, 10k and 20k ops, and `teg-propagate-shard` from one planned source along a
//! chain and into a value every op reads, to show they grow linearly.
//!
//! `cargo bench --bench shard`

#[path = "../tests/shard/ilp.rs"]
mod ilp;

use std::time::{Duration, Instant};
use tapestry::machine::{presets, Machine};
use tapestry::shard::tables::Tables;
use tapestry::shard::{evaluate, exact, mlp, search, Objective, Problem, SearchOptions, Strategies};

fn prepare(p: &Problem, m: &Machine) -> (Strategies, Tables) {
    let s = Strategies::of(p, m).expect("strategies");
    let t = Tables::build(p, &s, m).expect("tables");
    (s, t)
}

/// A chain of `n` relu ops on a [64, 64] tensor over a mesh of 2 × 2, alternately split by rows and by columns.
fn chain(n: usize) -> String {
    let ty = "!teg.tensor<[r=64, c=64] x f32>";
    let mut text = format!(
        "teg.graph @chain attributes {{teg.mesh = {{axes = [\"x\", \"y\"], shape = [2, 2]}}}} {{\n  %v0 = teg.source @x : {ty}\n"
    );
    for i in 1..=n {
        let dim = if i % 2 == 0 { "r" } else { "c" };
        text += &format!("  %v{i} = teg.relu %v{} attributes {{teg.shard = {{{dim} = \"x\"}}}} : {ty}\n", i - 1);
    }
    text += &format!("  %s = teg.sink @y %v{n} : {ty} -> !teg.token\n  teg.sequence_point %s : !teg.token\n}}\n");
    text
}

/// One [64, 64] value read by `n` relu ops split by rows, the last one sunk: a value with many readers (a star in
/// the cost graph).
fn star(n: usize) -> String {
    let ty = "!teg.tensor<[r=64, c=64] x f32>";
    let mut text = format!(
        "teg.graph @star attributes {{teg.mesh = {{axes = [\"x\", \"y\"], shape = [2, 2]}}}} {{\n  %x = teg.source @x : {ty}\n"
    );
    for i in 0..n {
        text += &format!("  %v{i} = teg.relu %x attributes {{teg.shard = {{r = \"x\"}}}} : {ty}\n");
    }
    text += &format!("  %s = teg.sink @y %v{} : {ty} -> !teg.token\n  teg.sequence_point %s : !teg.token\n}}\n", n - 1);
    text
}

/// Propagation inputs: a chain of `n` relus whose source alone has a plan, or (`fan`) `n` adds of a planned and an
/// unplanned value (the unplanned one learns its plan from every add).
fn unplanned(n: usize, fan: bool) -> String {
    let ty = "!teg.tensor<[r=64, c=64] x f32>";
    let mut text = format!(
        "teg.graph @p attributes {{teg.mesh = {{axes = [\"x\", \"y\"], shape = [2, 2]}}}} {{\n  \
         %v0 = teg.source @x attributes {{teg.shard = {{r = \"x\"}}}} : {ty}\n  %w = teg.source @w : {ty}\n"
    );
    for i in 1..=n {
        text += &match fan {
            true => format!("  %v{i} = teg.add %v0, %w\n"),
            false => format!("  %v{i} = teg.relu %v{}\n", i - 1),
        };
    }
    text += &format!("  %s = teg.sink @y %v{n} : {ty} -> !teg.token\n  teg.sequence_point %s : !teg.token\n}}\n");
    text
}

/// Seconds to parse and run `pipeline` on `text`.
fn time_pipeline(text: &str, pipeline: &str) -> f64 {
    let mut ctx = tapestry::context();
    let module = tapestry::parse_and_verify(&mut ctx, "chain.tap", text).expect("valid");
    let start = Instant::now();
    tapestry::run_pipeline(&mut ctx, module, pipeline).expect("runs");
    start.elapsed().as_secs_f64()
}

fn scaling() {
    println!();
    println!("| pass | 5k ops | 10k ops | 20k ops |");
    println!("|---|---|---|---|");
    for pipeline in
        ["builtin.module(teg-cost)", "builtin.module(teg-auto-shard{max-rounds=1})", "builtin.module(teg-shard)"]
    {
        let t: Vec<f64> = [5_000, 10_000, 20_000].iter().map(|&n| time_pipeline(&chain(n), pipeline) * 1e3).collect();
        println!("| `{pipeline}` | {:.1} ms | {:.1} ms | {:.1} ms |", t[0], t[1], t[2]);
    }
    for pipeline in ["builtin.module(teg-cost)", "builtin.module(teg-shard)"] {
        let t: Vec<f64> = [5_000, 10_000, 20_000].iter().map(|&n| time_pipeline(&star(n), pipeline) * 1e3).collect();
        println!("| `{pipeline}`, one value read by every op | {:.1} ms | {:.1} ms | {:.1} ms |", t[0], t[1], t[2]);
    }
    let pipeline = "builtin.module(teg-propagate-shard)";
    for (fan, what) in [(false, "a chain planned at its source"), (true, "adds of a planned and an unplanned value")] {
        let sizes = [5_000, 10_000, 20_000];
        let t: Vec<f64> = sizes.iter().map(|&n| time_pipeline(&unplanned(n, fan), pipeline) * 1e3).collect();
        println!("| `{pipeline}`, {what} | {:.1} ms | {:.1} ms | {:.1} ms |", t[0], t[1], t[2]);
    }
}

/// The frontier of 8 layers on 2×4 when each device has room for only `fraction` of the fastest plan's peak memory:
/// the chosen plan, then the frontier's spread (how many points, their time and memory ranges).
fn tight_memory(budget: u64) {
    println!();
    println!(
        "| memory per device | chosen time | chosen peak | feasible | frontier points | time range | peak range |"
    );
    println!("|---|---|---|---|---|---|---|");
    let p = mlp::training_step(8, 1024, 1024, 1024, 1024);
    let m = presets::mlp_benchmark(2, 4).expect("machine");
    let (s, t) = prepare(&p, &m);
    let options = |limit: Option<u64>| time_within(budget, limit);
    let fastest = search(&p, &s, &t, &m, &options(None)).costs.peak_memory;
    for fraction in [1.0, 0.75, 0.5] {
        let limit = (fastest as f64 * fraction) as u64;
        let r = search(&p, &s, &t, &m, &options(Some(limit)));
        let points = r.frontier.points();
        let range = |f: &dyn Fn(&tapestry::shard::Costs) -> f64| {
            let v: Vec<f64> = points.iter().map(|(c, _)| f(c)).collect();
            (v.iter().copied().fold(f64::INFINITY, f64::min), v.iter().copied().fold(0.0, f64::max))
        };
        let (t0, t1) = range(&|c| c.time);
        let (m0, m1) = range(&|c| c.peak_memory as f64 / MIB);
        println!(
            "| {:.0} MiB ({:.0}% of the fastest plan's) | {:.0} | {:.0} MiB | {} | {} | {t0:.0}–{t1:.0} | {m0:.0}–{m1:.0} MiB |",
            limit as f64 / MIB,
            fraction * 100.0,
            r.costs.time,
            r.costs.peak_memory as f64 / MIB,
            r.feasible,
            points.len()
        );
    }
}

const MIB: f64 = 1024.0 * 1024.0;

/// The search's options: seed 1, `budget` ms, least time within `limit` bytes per device.
fn time_within(budget: u64, limit: Option<u64>) -> SearchOptions {
    SearchOptions {
        seed: 1,
        budget: Duration::from_millis(budget),
        max_rounds: 0,
        objective: Objective::Time,
        memory_limit: limit,
    }
}

/// The search against the ILP (`microlp`, 60 s limit) with memory per device as a constraint, on `layers` layers
/// on 2×4: at 100%, 75% and 60% of the fastest plan's peak.
fn against_ilp(layers: usize, budget: u64) {
    println!();
    println!("| layers | memory per device | ILP time | ILP solve | proved optimal | search time | gap |");
    println!("|---|---|---|---|---|---|---|");
    let p = mlp::training_step(layers, 1024, 1024, 1024, 1024);
    let m = presets::mlp_benchmark(2, 4).expect("machine");
    let (s, t) = prepare(&p, &m);
    let options = |limit: Option<u64>| time_within(budget, limit);
    let fastest = search(&p, &s, &t, &m, &options(None)).costs.peak_memory;
    for fraction in [1.0, 0.75, 0.6] {
        let limit = (fastest as f64 * fraction) as u64;
        let start = Instant::now();
        let solved = ilp::solve(&p, &s, &t, &m, Some(limit), Duration::from_secs(60));
        let solve_time = start.elapsed().as_secs_f64();
        if let Some(x) = &solved {
            assert!(evaluate(&p, &s, &t, &m, &x.choice).peak_memory <= limit, "the ILP's plan is over the limit");
        }
        let r = search(&p, &s, &t, &m, &options(Some(limit)));
        let (time, optimal, gap) = match &solved {
            Some(x) => (
                format!("{:.0}", x.time),
                x.optimal.to_string(),
                format!("{:+.2}%", (r.costs.time / x.time - 1.0) * 100.0),
            ),
            None => ("none fits".into(), "-".into(), "-".into()),
        };
        println!(
            "| {layers} | {:.0} MiB ({:.0}%) | {time} | {solve_time:.2} s | {optimal} | {:.0}{} | {gap} |",
            limit as f64 / MIB,
            fraction * 100.0,
            r.costs.time,
            if r.feasible { "" } else { " (over)" }
        );
    }
}

fn main() {
    let budget: u64 = std::env::var("SHARD_BUDGET_MS").ok().and_then(|v| v.parse().ok()).unwrap_or(1000);
    println!("| layers | mesh | optimum | exact solve | search | gap | search time | rounds |");
    println!("|---|---|---|---|---|---|---|---|");
    for layers in [2, 8, 32] {
        for (rows, cols) in [(2, 4), (1, 8), (8, 1)] {
            let m = presets::mlp_benchmark(rows, cols).expect("machine");
            let p = mlp::training_step(layers, 1024, 1024, 1024, 1024);
            let (s, t) = prepare(&p, &m);
            let start = Instant::now();
            let optimum = exact::optimum(&t).map(|o| o.1);
            let exact_time = start.elapsed();
            let options = SearchOptions {
                seed: 1,
                budget: Duration::from_millis(budget),
                max_rounds: 0,
                objective: Objective::Time,
                memory_limit: m.memory_per_device(),
            };
            let r = search(&p, &s, &t, &m, &options);
            let (opt, gap) = match optimum {
                Ok(o) => (format!("{o:.0}"), format!("{:+.2}%", (r.costs.time / o - 1.0) * 100.0)),
                Err(e) => (format!("({e})"), "-".into()),
            };
            println!(
                "| {layers} | {rows}×{cols} | {opt} | {:.1} ms | {:.0} | {gap} | {:.0} ms | {} |",
                exact_time.as_secs_f64() * 1e3,
                r.costs.time,
                r.elapsed.as_secs_f64() * 1e3,
                r.rounds
            );
        }
    }
    tight_memory(budget);
    against_ilp(2, budget);
    against_ilp(8, budget);
    scaling();
}
