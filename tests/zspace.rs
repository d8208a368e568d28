//! ZSpace geometry: the whitepaper's and the Tapestry notes' worked examples (matmul, Linear over batch and out,
//! conv windows with halos and strides, mixed-sign and negative projections, the author's split and cover bugs),
//! and property tests of range projection, splitting and covers against brute force.

use proptest::prelude::*;
use tapestry::zspace::{check_cover, dim_kinds, Access, DimRole, Ipf, ZAffineMap, ZRange};

fn zr(bounds: &[(i64, i64)]) -> ZRange {
    ZRange::new(bounds.iter().map(|b| b.0).collect(), bounds.iter().map(|b| b.1).collect()).unwrap()
}

fn ipf(matrix: &[&[i64]], offset: &[i64], shape: &[u64]) -> Ipf {
    let inputs = matrix.first().map_or(0, |r| r.len());
    let map = ZAffineMap::new(inputs, matrix.iter().map(|r| r.to_vec()).collect(), offset.to_vec()).unwrap();
    Ipf::new(map, shape.to_vec()).unwrap()
}

#[test]
fn matmul_shard() {
    // Index (i, j, k) over M, N, K = 4, 6, 8; the shard i ∈ [0, 2).
    let x = ipf(&[&[1, 0, 0], &[0, 0, 1]], &[0, 0], &[1, 1]);
    let w = ipf(&[&[0, 0, 1], &[0, 1, 0]], &[0, 0], &[1, 1]);
    let y = ipf(&[&[1, 0, 0], &[0, 1, 0]], &[0, 0], &[1, 1]);
    let shard = zr(&[(0, 2), (0, 6), (0, 8)]);
    assert_eq!(x.project(&shard).unwrap().to_string(), "zr[0:2, 0:8]");
    assert_eq!(w.project(&shard).unwrap().to_string(), "zr[0:8, 0:6]");
    assert_eq!(y.project(&shard).unwrap().to_string(), "zr[0:2, 0:6]");
    let kinds = dim_kinds(3, &[&x, &w], &[&y]);
    let roles: Vec<DimRole> = kinds.iter().map(|k| k.role).collect();
    assert_eq!(roles, [DimRole::Parallel, DimRole::Parallel, DimRole::Reduction]);
    // W does not move with i: it is broadcast across shards of i.
    assert_eq!(kinds[0].inputs, [Access::Dense { row: 0 }, Access::Broadcast]);
}

#[test]
fn linear_over_batch_and_out() {
    // The whitepaper's Linear: index (batch, out) = (10, 3), in = 2. x: batch row, whole `in`; W: column `out`;
    // b: `out`; y: identity.
    let index = zr(&[(0, 10), (0, 3)]);
    let x = ipf(&[&[1, 0], &[0, 0]], &[0, 0], &[1, 2]);
    let w = ipf(&[&[0, 0], &[0, 1]], &[0, 0], &[2, 1]);
    let b = ipf(&[&[0, 1]], &[0], &[1]);
    let y = ipf(&[&[1, 0], &[0, 1]], &[0, 0], &[1, 1]);
    assert_eq!(x.project(&index).unwrap(), ZRange::of_shape(&[10, 2]));
    assert_eq!(w.project(&index).unwrap(), ZRange::of_shape(&[2, 3]));
    assert_eq!(b.project(&index).unwrap(), ZRange::of_shape(&[3]));
    assert_eq!(y.project(&index).unwrap(), ZRange::of_shape(&[10, 3]));
    // Sharding over batch: x and y split, W and b are read whole by every shard.
    let shards = index.split(0, 2).unwrap();
    assert_eq!(x.project(&shards[1]).unwrap().to_string(), "zr[5:10, 0:2]");
    assert_eq!(w.project(&shards[1]).unwrap().to_string(), "zr[0:2, 0:3]");
    // Sharding over out: W and b split by column.
    let shards = index.split(1, 3).unwrap();
    assert_eq!(w.project(&shards[2]).unwrap().to_string(), "zr[0:2, 2:3]");
    assert_eq!(b.project(&shards[2]).unwrap().to_string(), "zr[2:3]");
    let outs: Vec<ZRange> = shards.iter().map(|s| y.project(s).unwrap()).collect();
    check_cover(&ZRange::of_shape(&[10, 3]), &outs).unwrap();
}

#[test]
fn conv_windows() {
    // Window 3: shards [0,2) and [2,4) read x[0:4] and x[2:6] (a halo of 2).
    let w3 = ipf(&[&[1]], &[0], &[3]);
    assert_eq!(w3.project(&zr(&[(0, 2)])).unwrap().to_string(), "zr[0:4]");
    assert_eq!(w3.project(&zr(&[(2, 4)])).unwrap().to_string(), "zr[2:6]");
    assert_eq!(dim_kinds(1, &[&w3], &[])[0].inputs, [Access::Window { row: 0, halo: 2 }]);
    // Window 3, stride 2: [0,4) reads x[0:9]; the shards read x[0:5] and x[4:9] (a halo of 1).
    let s2 = ipf(&[&[2]], &[0], &[3]);
    assert_eq!(s2.project(&zr(&[(0, 4)])).unwrap().to_string(), "zr[0:9]");
    assert_eq!(s2.project(&zr(&[(0, 2)])).unwrap().to_string(), "zr[0:5]");
    assert_eq!(s2.project(&zr(&[(2, 4)])).unwrap().to_string(), "zr[4:9]");
    // Window 3, stride 4: one cell wasted per step.
    let s4 = ipf(&[&[4]], &[0], &[3]);
    assert_eq!(dim_kinds(1, &[&s4], &[])[0].inputs, [Access::Strided { row: 0, gap: 1 }]);
}

#[test]
fn signs_are_projected_per_coefficient() {
    // Mixed signs: the two-corner rule would give [0, 1); the truth is [-1, 2).
    let mixed = ipf(&[&[1, -1]], &[0], &[1]);
    assert_eq!(mixed.project(&zr(&[(0, 2), (0, 2)])).unwrap().to_string(), "zr[-1:2]");
    let negative = ipf(&[&[-1]], &[9], &[1]);
    assert_eq!(negative.project(&zr(&[(2, 5)])).unwrap().to_string(), "zr[5:8]");
    // Rank 0: one point, projected to a constant box.
    let scalar = ipf(&[], &[], &[]);
    assert_eq!(scalar.project(&zr(&[])).unwrap().to_string(), "zr[]");
    assert_eq!(zr(&[]).size(), 1);
}

#[test]
fn splits_round_up() {
    // The author's split bug: n = 10 in chunks of 4 is [4, 4, 2] (3 chunks), n = 11 is [4, 4, 3].
    let extents =
        |r: &ZRange, c: u64| -> Vec<u64> { r.split_chunks(0, c).unwrap().iter().map(|p| p.shape()[0]).collect() };
    assert_eq!(extents(&zr(&[(0, 10)]), 4), [4, 4, 2]);
    assert_eq!(extents(&zr(&[(0, 11)]), 4), [4, 4, 3]);
    // Into N parts: ceil(n / N) each, the last ones shorter.
    let parts: Vec<u64> = zr(&[(0, 10)]).split(0, 4).unwrap().iter().map(|p| p.shape()[0]).collect();
    assert_eq!(parts, [3, 3, 3, 1]);
    assert!(zr(&[(0, 4)]).split(0, 0).is_err());
}

#[test]
fn covers_are_checked_pairwise() {
    // Summed sizes match (4 = 2 + 2) but [0,2) and [1,3) overlap at 1 and leave 3 out.
    let e = check_cover(&zr(&[(0, 4)]), &[zr(&[(0, 2)]), zr(&[(1, 3)])]).unwrap_err();
    assert_eq!(e.0, "pieces 0 zr[0:2] and 1 zr[1:3] overlap in zr[1:2]");
    let e = check_cover(&zr(&[(0, 4)]), &[zr(&[(0, 2)])]).unwrap_err();
    assert_eq!(e.0, "the pieces cover 2 of the 4 points of zr[0:4]");
    let e = check_cover(&zr(&[(0, 4)]), &[zr(&[(0, 2)]), zr(&[(2, 5)])]).unwrap_err();
    assert_eq!(e.0, "piece 1 zr[2:5] is not inside zr[0:4]");
    assert!(ZRange::new(vec![3], vec![2]).is_err());
}

#[test]
fn huge_ranges_are_measured_exactly_or_refused() {
    // A mixed-sign row over [0, 2^63-1)^2 spans almost 2^64: the extent fits a u64, not an i64.
    let m = i64::MAX;
    let f = ipf(&[&[1, -1]], &[0], &[1]);
    let r = f.project(&zr(&[(0, m), (0, m)])).unwrap();
    assert_eq!(r.shape(), [u64::MAX - 2]);
    // A cover of more than 2^128 points cannot be counted: an error, not a wrong yes.
    let big = zr(&[(0, 1 << 62), (0, 1 << 62), (0, 1 << 62)]);
    let missing_a_slab = zr(&[(1, 1 << 62), (0, 1 << 62), (0, 1 << 62)]);
    let err = check_cover(&big, &[missing_a_slab]).unwrap_err();
    assert!(err.0.contains("cannot be counted exactly"), "{}", err.0);
}

fn small_range(rank: usize) -> impl Strategy<Value = ZRange> {
    range_with(rank, 0)
}

fn range_with(rank: usize, min_extent: i64) -> impl Strategy<Value = ZRange> {
    prop::collection::vec((-3i64..3, min_extent..4), rank)
        .prop_map(|b| ZRange::new(b.iter().map(|x| x.0).collect(), b.iter().map(|x| x.0 + x.1).collect()).unwrap())
}

fn small_ipf(inputs: usize) -> impl Strategy<Value = Ipf> {
    (1usize..3).prop_flat_map(move |outs| {
        (
            prop::collection::vec(prop::collection::vec(-3i64..4, inputs), outs),
            prop::collection::vec(-4i64..5, outs),
            prop::collection::vec(1u64..4, outs),
        )
            .prop_map(move |(m, b, s)| Ipf::new(ZAffineMap::new(inputs, m, b).unwrap(), s).unwrap())
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// The projection is the exact bounding box of every point's box.
    #[test]
    fn projection_is_the_bounding_box((index, f) in (1usize..4).prop_flat_map(|r| (range_with(r, 1), small_ipf(r)))) {
        let boxes: Vec<ZRange> = index.points().map(|p| f.apply(&p).unwrap()).collect();
        let got = f.project(&index).unwrap();
        for j in 0..got.rank() {
            prop_assert_eq!(got.start()[j], boxes.iter().map(|b| b.start()[j]).min().unwrap());
            prop_assert_eq!(got.end()[j], boxes.iter().map(|b| b.end()[j]).max().unwrap());
        }
    }

    /// Splitting covers the range exactly, with pieces of at most ceil(n / parts).
    #[test]
    fn splits_cover((r, dim, parts) in (1usize..4).prop_flat_map(|n| (small_range(n), 0..n, 1u64..6))) {
        let pieces = r.split(dim, parts).unwrap();
        prop_assert_eq!(pieces.len() as u64, parts);
        check_cover(&r, &pieces).unwrap();
        let n = r.shape()[dim];
        prop_assert!(pieces.iter().all(|p| p.shape()[dim] <= n.div_ceil(parts)));
    }

    /// The cover decision agrees with counting how often each point is covered.
    #[test]
    fn cover_agrees_with_counting(target in small_range(2), parts in prop::collection::vec(small_range(2), 0..4)) {
        let exact = target.points().all(|p| parts.iter().filter(|q| q.contains(&p)).count() == 1)
            && parts.iter().all(|q| q.points().all(|p| target.contains(&p)));
        prop_assert_eq!(check_cover(&target, &parts).is_ok(), exact);
    }
}

#[test]
fn preimages_bound_the_points_that_write_a_box() {
    // A window of 3 at stride 2: output rows [2, 4) are written by points whose windows meet them.
    let f = ipf(&[&[2]], &[-1], &[3]);
    assert_eq!(f.preimage(&zr(&[(2, 4)]), &zr(&[(0, 10)])).unwrap(), zr(&[(1, 3)]));
    // Reversed: row 9 - i.
    let rev = ipf(&[&[-1]], &[9], &[1]);
    assert_eq!(rev.preimage(&zr(&[(2, 5)]), &zr(&[(0, 10)])).unwrap(), zr(&[(5, 8)]));
    // An interleave's row 2·outer + lane: cells [3, 6) come from outer [1, 3) (a bounding box) and both lanes.
    let inter = ipf(&[&[2, 1]], &[0], &[1]);
    assert_eq!(inter.preimage(&zr(&[(3, 6)]), &zr(&[(0, 5), (0, 2)])).unwrap(), zr(&[(1, 3), (0, 2)]));
    // A box outside every point's reach gives an empty range.
    assert!(f.preimage(&zr(&[(40, 50)]), &zr(&[(0, 10)])).unwrap().is_empty());
}

proptest! {
    /// The preimage holds every point whose box meets the target.
    #[test]
    fn preimages_hold_every_writing_point(
        a in -3i64..4, b in -3i64..4, off in -5i64..5, s in 1u64..4,
        t0 in -8i64..12, t1 in 0i64..6,
    ) {
        let f = ipf(&[&[a, b]], &[off], &[s]);
        let within = zr(&[(0, 5), (0, 4)]);
        let target = zr(&[(t0, t0 + t1)]);
        let pre = f.preimage(&target, &within).unwrap();
        for p in within.points() {
            if f.apply(&p).unwrap().overlaps(&target) {
                prop_assert!(pre.contains(&p), "{p:?} writes into {target:?} but {pre:?} misses it");
            }
        }
    }
}

/// A layout read through a map is the strided function of the map's input: its value agrees with applying the
/// map, then the layout, at every point (a transpose with a reversed, offset dimension).
#[test]
fn strides_pull_back_through_a_map() {
    let map = ZAffineMap::new(2, vec![vec![0, -1], vec![1, 0]], vec![4, 1]).unwrap();
    let (strides, base) = map.pull_strides(&[16, 1], 3).unwrap();
    for p in [[0i64, 0], [2, 3], [5, 4]] {
        let q = map.apply(&p).unwrap();
        assert_eq!(base + strides[0] * p[0] + strides[1] * p[1], 3 + 16 * q[0] + q[1]);
    }
    assert_eq!(map.pull_strides(&[i64::MAX, 1], 0), None);
}
