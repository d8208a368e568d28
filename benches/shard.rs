//! The auto-sharding benchmark (`sharding-and-cost.md` §2): the MLP training step with 2, 8 and 32 layers, batch
//! and widths 1024, f32, on meshes 2×4, 1×8 and 8×1 with Alpa's α–β numbers and compute free. Per row: the exact
//! optimum (variable elimination) and its solve time, then the search with a 1 s budget (seed 1): its cost, the
//! gap to the optimum, its time and rounds. Then the frontier's spread under a tight memory limit.
//!
//! `cargo bench --bench shard`

use std::time::{Duration, Instant};
use tapestry::machine::{presets, Machine};
use tapestry::shard::tables::Tables;
use tapestry::shard::{exact, mlp, search, Objective, Problem, SearchOptions, Strategies};

fn prepare(p: &Problem, m: &Machine) -> (Strategies, Tables) {
    let s = Strategies::of(p, m).expect("strategies");
    let t = Tables::build(p, &s, m).expect("tables");
    (s, t)
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
}
