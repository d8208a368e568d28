//! `teg.contract` against a direct einsum: four dimensions, each given a role at random (batch, a row of `x`, a
//! column of `w`, summed, or absent), the operands' and the result's dimension orders shuffled, on integers so that
//! any summation order gives the same result.

use indexmap::IndexMap;
use proptest::prelude::*;
use tapestry::array::{Array, Data};
use tapestry::dialects::teg::eval::evaluate;

const NAMES: [&str; 4] = ["a", "b", "c", "d"];

/// Where a dimension lives: (in x, in w, in the result).
const ROLES: [(bool, bool, bool); 5] =
    [(true, true, true), (true, false, true), (false, true, true), (true, true, false), (false, false, false)];

fn ty(dims: &[usize], extents: &[u64]) -> String {
    let d: Vec<String> = dims.iter().map(|&k| format!("{}={}", NAMES[k], extents[k])).collect();
    format!("!teg.tensor<[{}] x i64>", d.join(", "))
}

/// The row-major offset of the cell at `coord` (all four dimensions) in a tensor of dimensions `dims`.
fn offset(dims: &[usize], extents: &[u64], coord: &[u64]) -> usize {
    dims.iter().fold(0u64, |acc, &k| acc * extents[k] + coord[k]) as usize
}

fn check(extents: [u64; 4], roles: [usize; 4], orders: [[usize; 4]; 3]) {
    let has = |which: usize, k: usize| [ROLES[roles[k]].0, ROLES[roles[k]].1, ROLES[roles[k]].2][which];
    let dims = |which: usize| -> Vec<usize> { orders[which].iter().copied().filter(|&k| has(which, k)).collect() };
    let (xd, wd, rd) = (dims(0), dims(1), dims(2));
    let size = |d: &[usize]| d.iter().map(|&k| extents[k]).product::<u64>() as usize;
    let xv: Vec<i64> = (0..size(&xd)).map(|i| (i as i64 * 7) % 11 - 5).collect();
    let wv: Vec<i64> = (0..size(&wd)).map(|i| (i as i64 * 3) % 13 - 6).collect();
    let text = format!(
        "teg.graph @g {{\n  %x = teg.source @x : {tx}\n  %w = teg.source @w : {tw}\n  %r = teg.contract %x, %w : {tx}, {tw} -> {tr}\n  %s = teg.sink @r %r : {tr} -> !teg.token\n  teg.sequence_point %s : !teg.token\n}}\n",
        tx = ty(&xd, &extents),
        tw = ty(&wd, &extents),
        tr = ty(&rd, &extents)
    );
    let mut ctx = tapestry::context();
    let module = tapestry::parse_and_verify(&mut ctx, "t.tap", &text).unwrap_or_else(|e| panic!("{text}\n{e:?}"));
    let graph = tapestry::dialects::teg::find_graph(&ctx, module, "g").unwrap();
    let shape = |d: &[usize]| d.iter().map(|&k| extents[k]).collect::<Vec<_>>();
    let inputs: IndexMap<String, Array> = [
        ("x".into(), Array::new(shape(&xd), Data::I64(xv.clone())).unwrap()),
        ("w".into(), Array::new(shape(&wd), Data::I64(wv.clone())).unwrap()),
    ]
    .into();
    let got = evaluate(&ctx, graph, &inputs).unwrap_or_else(|e| panic!("{text}\n{e}"))["r"].to_f64();
    let mut want = vec![0i64; size(&rd)];
    // Every coordinate of the dimensions x or w has; absent dimensions stay at 0.
    let live: Vec<u64> = (0..4).map(|k| if has(0, k) || has(1, k) { extents[k] } else { 1 }).collect();
    for i in 0..live.iter().product::<u64>() {
        let mut c = [0u64; 4];
        let mut rest = i;
        for k in (0..4).rev() {
            c[k] = rest % live[k];
            rest /= live[k];
        }
        want[offset(&rd, &extents, &c)] += xv[offset(&xd, &extents, &c)] * wv[offset(&wd, &extents, &c)];
    }
    assert_eq!(got, want.iter().map(|&v| v as f64).collect::<Vec<_>>(), "{text}");
}

fn order() -> impl Strategy<Value = [usize; 4]> {
    Just([0usize, 1, 2, 3]).prop_shuffle().prop_map(|v| [v[0], v[1], v[2], v[3]])
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
    #[test]
    fn contract_matches_einsum(
        extents in [1u64..4, 1u64..5, 0u64..4, 1u64..6],
        roles in [0usize..5, 0usize..5, 0usize..5, 0usize..5],
        orders in [order(), order(), order()],
    ) {
        check(extents, roles, orders);
    }
}
