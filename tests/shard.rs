//! The sharding search core (`tapestry::shard`): resharding rules, the cost model against Alpa's closed-form
//! optima of the MLP training step (`sharding-and-cost.md` §2), the exact solvers against each other, and the
//! search against the exact optimum.

use std::time::Duration;
use tapestry::machine::{presets, Collective, Machine, Mesh};
use tapestry::shard::tables::Tables;
use tapestry::shard::transfers::{self, Kind};
use tapestry::shard::{self, evaluate, exact, mlp, reshard, search, AxisSet, Objective, SearchOptions};
use tapestry::shard::{Strategies, Tensor, TensorSpec};
use tapestry::zspace::ZRange;

/// Alpa's test machine: a `rows × cols` mesh, α = 1, the given β, 1000 MiB per device.
fn alpa(rows: usize, cols: usize, beta: [f64; 2]) -> Machine {
    presets::alpa(&[("x", rows), ("y", cols)], &[1.0, 1.0], &beta, 1000 << 20).unwrap()
}

/// All-reduce of `bytes` along `axis`.
fn ar(m: &Machine, bytes: f64, axis: &str) -> f64 {
    m.collective_cost(Collective::AllReduce, bytes, &[axis]).unwrap()
}

fn optimum(p: &shard::Problem, m: &Machine) -> f64 {
    let s = Strategies::of(p, m).unwrap();
    let t = Tables::build(p, &s, m).unwrap();
    exact::optimum(&t).unwrap().1
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

#[test]
fn alpa_closed_forms_one_axis() {
    for (rows, cols, axis) in [(4, 1, "x"), (1, 4, "y")] {
        let m = alpa(rows, cols, [1.0, 1.0]);
        let cases = [
            (2, 1024, 128, 2.0 * ar(&m, 128.0 * 128.0 * 4.0, axis)),
            (2, 128, 1024, ar(&m, 128.0 * 1024.0 * 4.0, axis)),
            (12, 1024, 128, 12.0 * ar(&m, 128.0 * 128.0 * 4.0, axis)),
            (12, 128, 1024, 11.0 * ar(&m, 128.0 * 1024.0 * 4.0, axis)),
        ];
        for (layers, batch, hidden, want) in cases {
            let p = mlp::training_step(layers, batch, hidden, hidden, hidden);
            let got = optimum(&p, &m);
            assert!(
                close(got, want),
                "{layers} layers, batch {batch}, hidden {hidden} on {rows}x{cols}: {got} != {want}"
            );
        }
    }
}

#[test]
fn alpa_closed_forms_two_axes_are_upper_bounds() {
    for (m0, m1) in [(4, 8), (8, 4), (3, 4)] {
        let m = alpa(m0, m1, [1.0, 0.01]);
        for layers in [2, 12] {
            let l = layers as f64;
            let want = l * ar(&m, 128.0 * 128.0 * 4.0 / m1 as f64, "x")
                + (l - 1.0) * ar(&m, 1024.0 * 128.0 * 4.0 / m0 as f64, "y");
            let p = mlp::training_step(layers, 1024, 128, 128, 128);
            let got = optimum(&p, &m);
            // Our plans may split one dimension over both axes and reshard by all-to-all, which Alpa's strategies
            // cannot: the optimum is at most Alpa's, and not far below it.
            assert!(got <= want + 1e-6 && got >= 0.9 * want, "{layers} layers on {m0}x{m1}: {got} vs Alpa's {want}");
        }
    }
}

fn solve(p: &shard::Problem, m: &Machine) -> (Strategies, Tables) {
    let s = Strategies::of(p, m).unwrap();
    let t = Tables::build(p, &s, m).unwrap();
    (s, t)
}

fn spec(dims: &[u16], partial: u16) -> TensorSpec {
    TensorSpec { dims: dims.iter().map(|&d| AxisSet(d)).collect(), partial: AxisSet(partial) }
}

#[test]
fn reshard_picks_the_collective() {
    let m = alpa(2, 4, [1.0, 0.01]);
    let t = Tensor { name: "t".into(), shape: vec![8, 16], elem_bytes: 4, persistent: false };
    let kinds = |from: TensorSpec, to: TensorSpec| -> Vec<(Collective, usize, f64)> {
        reshard(&t, &from, &to, &m).into_iter().map(|x| (x.collective, x.axis, x.group_bytes)).collect()
    };
    // Replicated to sharded is a local slice.
    assert!(kinds(spec(&[0, 0], 0), spec(&[1, 2], 0)).is_empty());
    // Sharded to replicated gathers along each axis, the slower link first while the tensor is still split.
    assert_eq!(
        kinds(spec(&[1, 2], 0), spec(&[0, 0], 0)),
        [(Collective::AllGather, 0, 512.0 / 4.0 * 4.0 / 4.0 * 1.0), (Collective::AllGather, 1, 512.0)]
    );
    // An axis moving between dimensions is an all-to-all.
    assert_eq!(kinds(spec(&[2, 0], 0), spec(&[0, 2], 0)), [(Collective::AllToAll, 1, 512.0)]);
    // Partial results: all-reduced when the destination keeps the tensor whole along the axis, reduce-scattered
    // when it splits a dimension along it; the group holds the tensor divided by the other axes' splits.
    assert_eq!(kinds(spec(&[0, 2], 1), spec(&[0, 2], 0)), [(Collective::AllReduce, 0, 128.0)]);
    assert_eq!(kinds(spec(&[0, 0], 1), spec(&[1, 0], 0)), [(Collective::ReduceScatter, 0, 512.0)]);
}

#[test]
fn variable_elimination_matches_enumeration() {
    for (rows, cols) in [(2, 1), (1, 3)] {
        let m = alpa(rows, cols, [1.0, 1.0]);
        let p = mlp::training_step(1, 8, 6, 6, 4);
        let (s, t) = solve(&p, &m);
        let (choice, best) = exact::optimum(&t).unwrap();
        assert!(close(t.time(&choice), best));
        let (_, costs) = exact::enumerate(&p, &s, &t, &m, None).unwrap().expect("some plan");
        assert!(close(costs.time, best), "{rows}x{cols}: enumeration {} vs elimination {best}", costs.time);
    }
}

fn options(seed: u64, rounds: usize, memory_limit: Option<u64>) -> SearchOptions {
    SearchOptions {
        seed,
        budget: Duration::from_secs(60),
        max_rounds: rounds,
        objective: Objective::Time,
        memory_limit,
    }
}

#[test]
fn search_reaches_the_optimum_and_is_deterministic() {
    let m = alpa(2, 4, [1.0, 0.01]);
    let p = mlp::training_step(4, 1024, 1024, 1024, 1024);
    let (s, t) = solve(&p, &m);
    let best = exact::optimum(&t).unwrap().1;
    let a = search(&p, &s, &t, &m, &options(7, 30, None));
    let b = search(&p, &s, &t, &m, &options(7, 30, None));
    assert_eq!(a.choice, b.choice, "one seed, one result");
    assert!(a.costs.time <= 1.1 * best, "search {} vs optimum {best}", a.costs.time);
    assert!(a.costs.time <= a.seed_costs.time);
}

#[test]
fn search_honours_a_memory_limit() {
    let m = alpa(2, 4, [1.0, 0.01]);
    let p = mlp::training_step(2, 1024, 1024, 1024, 1024);
    let (s, t) = solve(&p, &m);
    let free = search(&p, &s, &t, &m, &options(1, 60, None));
    let limit = free.frontier.points().iter().map(|(c, _)| c.peak_memory).min().unwrap();
    let tight = search(&p, &s, &t, &m, &options(1, 60, Some(limit)));
    assert!(tight.feasible && tight.costs.peak_memory <= limit);
    assert!(free.frontier.points().len() >= 2, "the frontier trades time for memory");
    let (_, enumerated) = (0, evaluate(&p, &s, &t, &m, &tight.choice));
    assert_eq!(enumerated, tight.costs);
}

/// A piece: the box `[lo, hi)` per dimension, held by `devices`.
fn piece(lo: &[i64], hi: &[i64], devices: &[usize]) -> transfers::Piece {
    transfers::Piece { region: ZRange::new(lo.to_vec(), hi.to_vec()).unwrap(), devices: devices.to_vec() }
}

/// The moves of one reshard (4-byte cells) and the collective they amount to.
fn moves_and_kind(
    mesh: &Mesh,
    sources: &[transfers::Piece],
    targets: &[transfers::Piece],
    partial: bool,
) -> (Vec<(usize, usize, u64)>, Kind) {
    let tables: Vec<Vec<transfers::Move>> =
        targets.iter().map(|t| transfers::table(mesh, sources, t, 4).unwrap()).collect();
    let edge: Vec<transfers::Reshard> = targets
        .iter()
        .zip(&tables)
        .map(|(target, moves)| transfers::Reshard { sources, target, moves, partial })
        .collect();
    let rows = tables.iter().flatten().map(|m| (m.from, m.to, m.bytes)).collect();
    (rows, transfers::classify(&edge))
}

#[test]
fn transfer_tables_come_from_box_intersections() {
    let line = Mesh::new(&[("x", 2)]).unwrap();
    // Rows split over two devices.
    let rows = [piece(&[0, 0], &[2, 4], &[0]), piece(&[2, 0], &[4, 4], &[1])];
    // To columns: each device sends the other half of its rows' other columns.
    let cols = [piece(&[0, 0], &[4, 2], &[0]), piece(&[0, 2], &[4, 4], &[1])];
    assert_eq!(moves_and_kind(&line, &rows, &cols, false), (vec![(1, 0, 16), (0, 1, 16)], Kind::AllToAll));
    // To whole on both: each receives the other's half.
    let whole = [piece(&[0, 0], &[4, 4], &[0, 1])];
    assert_eq!(moves_and_kind(&line, &rows, &whole, false), (vec![(1, 0, 32), (0, 1, 32)], Kind::AllGather));
    // Rows with a one-row halo: a border row each.
    let halo = [piece(&[0, 0], &[3, 4], &[0]), piece(&[1, 0], &[4, 4], &[1])];
    assert_eq!(moves_and_kind(&line, &rows, &halo, false), (vec![(1, 0, 16), (0, 1, 16)], Kind::HaloExchange));
    // Sub-boxes of what each holds: nothing moves.
    let inner = [piece(&[0, 0], &[2, 2], &[0]), piece(&[2, 2], &[4, 4], &[1])];
    assert_eq!(moves_and_kind(&line, &rows, &inner, false), (vec![], Kind::LocalSlice));
    // Partial sums of one box on both devices.
    let partials = [piece(&[0, 0], &[4, 4], &[0]), piece(&[0, 0], &[4, 4], &[1])];
    assert_eq!(moves_and_kind(&line, &partials, &whole, true), (vec![(1, 0, 64), (0, 1, 64)], Kind::AllReduce));
    assert_eq!(moves_and_kind(&line, &partials, &rows, true), (vec![(1, 0, 32), (0, 1, 32)], Kind::ReduceScatter));
    // A replicated piece comes from its nearest holder: on a 2 x 2 mesh, device 3 takes from 1 (one coordinate
    // away) rather than from 0 (two).
    let square = Mesh::new(&[("x", 2), ("y", 2)]).unwrap();
    let held = [piece(&[0], &[4], &[0, 1])];
    assert_eq!(moves_and_kind(&square, &held, &[piece(&[0], &[2], &[3])], false), (vec![(1, 3, 8)], Kind::Send));
}

#[path = "shard/ilp.rs"]
mod ilp;

/// The ILP agrees with variable elimination without a memory limit, and with enumeration under a limit of 3/4 of
/// the fastest plan's peak, on one-layer MLP training steps small enough to enumerate.
#[test]
fn ilp_matches_the_exact_solvers() {
    for (rows, cols) in [(2, 1), (1, 3)] {
        let m = alpa(rows, cols, [1.0, 1.0]);
        let p = mlp::training_step(1, 8, 6, 6, 4);
        let (s, t) = solve(&p, &m);
        let (_, best) = exact::optimum(&t).unwrap();
        let free = ilp::solve(&p, &s, &t, &m, None, Duration::from_secs(60)).expect("a solution");
        assert!(free.optimal && close(free.time, best), "{rows}x{cols}: ILP {} vs elimination {best}", free.time);
        let limit = evaluate(&p, &s, &t, &m, &free.choice).peak_memory * 3 / 4;
        let enumerated = exact::enumerate(&p, &s, &t, &m, Some(limit)).unwrap();
        let bounded = ilp::solve(&p, &s, &t, &m, Some(limit), Duration::from_secs(60));
        match (enumerated, bounded) {
            (Some((_, want)), Some(got)) => {
                let peak = evaluate(&p, &s, &t, &m, &got.choice).peak_memory;
                assert!(got.time > free.time, "{rows}x{cols}: the limit should bind");
                assert!(got.optimal && close(got.time, want.time), "{rows}x{cols}: ILP {} vs {}", got.time, want.time);
                assert!(peak <= limit, "{rows}x{cols}: the ILP's plan holds {peak} B, over {limit}");
            }
            (None, None) => {}
            (want, got) => panic!("enumeration {:?} but ILP {:?}", want.map(|w| w.1.time), got.map(|g| g.time)),
        }
    }
}
