//! The signature check's output rule (every output cell written by exactly one index point, reductions aside)
//! against brute force: random output IPFs over small index spaces (up to three index dimensions, so that several
//! may move one tensor dimension as mixed-radix digits), the structural decisions and the point-by-point one all
//! compared with marking every cell.

use proptest::prelude::*;
use tapestry::dialects::teg::ops::Monoid;
use tapestry::dialects::teg::signature::{check, Signature};
use tapestry::zspace::{Ipf, ZAffineMap, ZRange};

/// Whether the boxes of `f` over `points` tile their bounding box, by marking every cell.
fn tiles(f: &Ipf, points: &ZRange) -> bool {
    let bbox = f.project(points).unwrap();
    let mut count = std::collections::HashMap::new();
    for p in points.points() {
        for cell in f.apply(&p).unwrap().points() {
            *count.entry(cell).or_insert(0) += 1;
        }
    }
    count.values().all(|&n| n == 1) && count.len() as u128 == bbox.size()
}

fn output(extents: &[u64], matrix: Vec<Vec<i64>>, offset: Vec<i64>, shape: Vec<u64>) -> (Signature, Ipf) {
    let map = ZAffineMap::new(extents.len(), matrix, offset).unwrap();
    let f = Ipf::new(map, shape).unwrap();
    let index = extents.iter().enumerate().map(|(i, &e)| (format!("d{i}"), e)).collect();
    (Signature { index, inputs: vec![], outputs: vec![("y".into(), f.clone())], reductions: vec![] }, f)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn exactly_once_matches_brute_force(
        extents in prop::collection::vec(1u64..4, 1..=3),
        rows in 1usize..=2,
        coefs in prop::collection::vec(-4i64..=4, 6),
        offsets in prop::collection::vec(-2i64..=2, 2),
        boxes in prop::collection::vec(1u64..=3, 2),
    ) {
        let rank = extents.len();
        let matrix: Vec<Vec<i64>> = (0..rows).map(|j| coefs[j * 3..j * 3 + rank].to_vec()).collect();
        let (sig, f) = output(&extents, matrix, offsets[..rows].to_vec(), boxes[..rows].to_vec());
        let points = sig.index_range();
        let range = f.project(&points).unwrap();
        let verdict = check(&sig, &[], &[range]);
        prop_assert_eq!(verdict.is_ok(), tiles(&f, &points), "{:?}", verdict);
    }
}

#[test]
fn a_reduction_that_moves_the_output_is_refused() {
    let (mut sig, f) = output(&[2, 3], vec![vec![1, 1]], vec![0], vec![1]);
    sig.reductions = vec![(1, Monoid::Sum)];
    let range = f.project(&sig.index_range()).unwrap();
    let err = check(&sig, &[], &[range]).unwrap_err();
    assert_eq!(err, "index dimension d1 is a declared sum reduction, but it moves y (coefficient 1 in row 0)");
}
