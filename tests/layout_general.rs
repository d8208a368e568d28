//! The general core form: what no sum of digits can say (Furiosa skew and sampled axes, XLA's `*` combination
//! split inside a digit, CK modulo and xor, CuTe swizzles) lowered to coordinate stages and a swizzle around a
//! strided layout, checked on the worked examples; and property tests that normalization keeps the meaning and
//! that the structural decision agrees with brute-force tables.

use proptest::prelude::*;
use tapestry::dialects::layout::attr::LayoutAttr;
use tapestry::dialects::layout::syntax::{parse_ck, parse_cute, parse_furiosa, parse_xla};
use tapestry::layout::core_form::{canonical_general, equivalent_general, GeneralLayout};
use tapestry::layout::stage::Stage;
use tapestry::layout::strided::{Dim, Factor, Layout};
use tapestry::layout::swizzle::Swizzle;
use tapestry::layout::table::{Order, Slot};

fn core(attr: LayoutAttr) -> GeneralLayout {
    attr.validate().unwrap_or_else(|e| panic!("{e}"));
    attr.to_core().unwrap()
}

fn xla(t: &str) -> GeneralLayout {
    core(LayoutAttr::Xla(parse_xla(t).unwrap()))
}

fn furiosa(t: &str) -> GeneralLayout {
    core(LayoutAttr::Furiosa(parse_furiosa(t).unwrap()))
}

fn ck(t: &str) -> GeneralLayout {
    core(LayoutAttr::Ck(parse_ck(t).unwrap()))
}

/// Row-major element number of a coordinate.
fn index(coord: &[u64], extents: &[u64]) -> usize {
    coord.iter().zip(extents).fold(0, |acc, (c, n)| acc * n + c) as usize
}

#[test]
fn xla_combined_tile_example() {
    // The layout notes' derived example: combined (75, 45) in [112, 110] → 8307, footprint 12,432.
    let g = xla("F32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}");
    assert_eq!(g.stages, vec![Stage::Regroup(vec![vec![0, 1, 2], vec![3, 4]])]);
    assert_eq!(g.cosize(), 12_432);
    let offsets = g.offsets(Order::RowMajor).unwrap();
    assert_eq!(offsets[index(&[1, 2, 3, 4, 5], &[2, 7, 8, 11, 10])], Some(8307));
    // Combination that splits on a digit boundary needs no stage.
    assert!(xla("f32[4,8]{1,0:T(*,16)}").stages.is_empty());
}

#[test]
fn furiosa_skew_is_the_seed_table() {
    // Seed 000: axes A = 4, B = 4, B' = B − A; position (A, B') holds (A, B) with B = (B' + A) mod 4.
    let g = furiosa("axes[A = 4, B = 4, B' = B - A], m[A, B' = 4]");
    let offsets = g.offsets(Order::RowMajor).unwrap();
    for a in 0..4u64 {
        for b_skewed in 0..4u64 {
            let b = (b_skewed + a) % 4;
            assert_eq!(offsets[index(&[a, b], &[4, 4])], Some((4 * a + b_skewed) as i64), "A={a} B'={b_skewed}");
        }
    }
    // Skewing by an axis of size 1 changes nothing: the same meaning as the plain mapping.
    let plain = furiosa("axes[A = 1, B = 4], m[A, B]");
    assert!(equivalent_general(&furiosa("axes[A = 1, B = 4, B' = B - A], m[A, B']"), &plain).unwrap());
}

#[test]
fn furiosa_sampled_axis() {
    // `m[A, B / 64]` stores only the elements at multiples of 64 along B.
    let g = furiosa("axes[A = 2, B = 256], m[A, B / 64]");
    assert_eq!((g.size(), g.cosize()), (512, 8));
    let offsets = g.offsets(Order::RowMajor).unwrap();
    assert_eq!(offsets[index(&[1, 128], &[2, 256])], Some(6));
    assert_eq!(offsets[index(&[1, 129], &[2, 256])], None);
    assert_eq!(offsets.iter().flatten().count(), 8);
    // A gap between the digits: `[B / 64, B % 2]` stores B = 64q + r (r < 2) at 2q + r.
    let g = furiosa("axes[B = 512], m[B / 64, B % 2]");
    assert_eq!(g.stages, vec![Stage::Sample { dim: 0, place: 2, step: 32, keep: 1 }]);
    let offsets = g.offsets(Order::RowMajor).unwrap();
    assert_eq!((offsets[129], offsets[130], offsets[1]), (Some(5), None, Some(1)));
    // Digits that do not nest: `[B / 4, B % 3]` stores B = 4q + r (r < 3) at 3q + r; B = 3, 7, 11 are not stored.
    let g = furiosa("axes[B = 12], m[B / 4, B % 3]");
    assert_eq!(g.stages, vec![Stage::Sample { dim: 0, place: 1, step: 4, keep: 3 }]);
    let offsets = g.offsets(Order::RowMajor).unwrap();
    assert_eq!(offsets, [0, 1, 2, -1, 3, 4, 5, -1, 6, 7, 8, -1].map(|o| (o >= 0).then_some(o)));
    // Padding and a gap: of B < 61, only B = 0 and 1 have a zero gap digit.
    let g = furiosa("axes[B = 61], m[B # 128 / 64, B # 128 % 2]");
    let offsets = g.offsets(Order::RowMajor).unwrap();
    assert_eq!(offsets.iter().flatten().count(), 2);
}

#[test]
fn notation_functions_where_nothing_else_fits() {
    // XLA: a repeated tile splitting a combined coordinate: [3,5] in 2x2 tiles, then (*,3) over the in-tile part.
    let g = xla("f32[3,5]{1,0:T(2,2)(*,3)}");
    assert_eq!(g.stages[0].kind(), "computed");
    assert_eq!(g.cosize(), 36);
    let offsets = g.offsets(Order::RowMajor).unwrap();
    assert_eq!(&offsets[..5], [0, 1, 6, 7, 12].map(Some));
    // CK: padding a coordinate that mixes two unevenly (a + 3b, a < 2): 6 and 7 are past the pad, not stored.
    let g = ck("packed([6]), transform(right_pad(6, 2) [0] -> [0]), transform(embed([2, 3], [1, 3]) [0] -> [0, 1])");
    assert_eq!(g.offsets(Order::RowMajor).unwrap(), [Some(0), Some(3), None, Some(1), Some(4), None]);
    // The same function is the same layout; a function equal to a strided layout is decided by table.
    let same = ck("packed([6]), transform(right_pad(6, 2) [0] -> [0]), transform(embed([2, 3], [1, 3]) [0] -> [0, 1])");
    assert!(equivalent_general(&g, &same).unwrap());
}

#[test]
fn ck_xor_and_modulo() {
    // xor: low1 = up1 XOR (up0 mod 4) on a packed 4×4.
    let g = ck("packed([4, 4]), transform(xor([4, 4]) [0, 1] -> [0, 1])");
    let offsets = g.offsets(Order::RowMajor).unwrap();
    for (up0, up1) in [(0u64, 3u64), (1, 0), (2, 1), (3, 3)] {
        assert_eq!(offsets[index(&[up0, up1], &[4, 4])], Some((4 * up0 + (up1 ^ up0)) as i64));
    }
    // modulo: 8 coordinates share 4 positions.
    let m = ck("packed([4]), transform(modulo(8, 4) [0] -> [0])");
    assert_eq!(m.offsets(Order::RowMajor).unwrap(), [0, 1, 2, 3, 0, 1, 2, 3].map(Some));
    assert_eq!(m.positions(Order::RowMajor).unwrap()[1], Slot::Live(vec![1, 5]));
    let err = LayoutAttr::Ck(parse_ck("packed([3, 3]), transform(xor([3, 3]) [0, 1] -> [0, 1])").unwrap());
    assert!(err.validate().unwrap_err().0.contains("power-of-two"));
}

#[test]
fn cute_swizzle_core() {
    // Swizzle(3,4,3)(128) = 144 (the layout notes); the swizzled layout is a bijection on its buffer.
    let c = parse_cute("Sw<3,4,3> o (8,64):(64,1)").unwrap();
    let g = core(LayoutAttr::Cute(c));
    assert_eq!(g.cosize(), 512);
    assert_eq!(g.offsets(Order::Colex).unwrap()[2], Some(144));
    let positions = g.positions(Order::Colex).unwrap();
    assert!(positions.iter().all(|s| matches!(s, Slot::Live(e) if e.len() == 1)));
    // The strided form refuses it with the reason.
    let c = LayoutAttr::Cute(parse_cute("Sw<3,4,3> o (8,64):(64,1)").unwrap());
    assert!(c.to_repr().unwrap_err().0.contains("swizzle Sw<3,4,3> has no strided form"));
}

/// The whole meaning of a general layout, tabulated: dimensions, buffer size, offsets, positions.
type Table = (Vec<(Option<String>, u64)>, u64, Vec<Option<i64>>, Vec<Slot>);

fn table(g: &GeneralLayout) -> Table {
    let dims = g.logical.iter().map(|d| (d.name.clone(), d.extent)).collect();
    (dims, g.cosize(), g.offsets(Order::RowMajor).unwrap(), g.positions(Order::RowMajor).unwrap())
}

/// A stage drawn for a space of extents `n`, or `None` when the draw does not fit it.
fn stage(pick: u8, a: usize, b: usize, k: u64, n: &[u64]) -> Option<Stage> {
    let (a, b) = (a % n.len(), b % n.len());
    match pick % 5 {
        0 if a != b => Some(Stage::Skew { dim: a, by: b, sign: if k.is_multiple_of(2) { -1 } else { 1 } }),
        1 if a != b && n[a].is_power_of_two() => Some(Stage::Xor { dim: a, by: b }),
        2 => Some(Stage::Modulo { dim: a, modulus: 1 + k % n[a] }),
        3 => Some(Stage::Sample { dim: a, place: 1 + b as u64 % 2, step: 2 + k % 3, keep: 1 + k % 2 })
            .filter(|s| s.extents_after(n).is_ok()),
        4 if a + 1 < n.len() || a > 0 => {
            // Combine two neighbours.
            let lo = a.min(n.len() - 2);
            let mut groups: Vec<Vec<usize>> = (0..lo).map(|j| vec![j]).collect();
            groups.push(vec![lo, lo + 1]);
            groups.extend((lo + 2..n.len()).map(|j| vec![j]));
            Some(Stage::Regroup(groups))
        }
        _ => None,
    }
}

/// A general layout: logical extents, stages, then a dense layout of the staged extents with the dimensions in
/// the buffer in the order `perm` (strides scaled by `gap`), and maybe a swizzle.
fn general(
    extents: Vec<u64>,
    draws: Vec<(u8, usize, usize, u64)>,
    perm: usize,
    gap: i64,
    swizzle: Option<(u32, u32, i32)>,
) -> GeneralLayout {
    let mut n = extents.clone();
    let mut stages = Vec::new();
    for (pick, a, b, k) in draws {
        if let Some(s) = stage(pick, a, b, k, &n) {
            n = s.extents_after(&n).unwrap();
            stages.push(s);
        }
    }
    let mut order: Vec<usize> = (0..n.len()).collect();
    order.rotate_left(perm % n.len());
    let mut stride = gap;
    let mut factors = Vec::new();
    for &k in order.iter().rev() {
        factors.push(Factor { dim: Some(k), place: 1, extent: n[k], stride });
        stride *= n[k] as i64;
    }
    let dims = n.iter().map(|&e| Dim::new(e)).collect();
    let inner = Layout { dims, factors, base: 0, cosize: 1 + (stride - gap) as u64 };
    let logical = extents.iter().map(|&e| Dim::new(e)).collect();
    let swizzle = swizzle.map(|(b, m, s)| Swizzle::new(b, m, s).unwrap());
    let g = GeneralLayout { logical, stages, inner, swizzle };
    g.validate().unwrap();
    g
}

fn arb_general() -> impl Strategy<Value = GeneralLayout> {
    (
        prop::collection::vec(1u64..6, 1..4),
        prop::collection::vec((0u8..5, 0usize..3, 0usize..3, 0u64..6), 0..3),
        0usize..3,
        1i64..3,
        prop::option::weighted(0.3, prop_oneof![Just((1u32, 0u32, 1i32)), Just((1, 1, 2)), Just((2, 0, -2))]),
    )
        .prop_map(|(e, d, p, g, s)| general(e, d, p, g, s))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    /// Dropping the stages that change nothing keeps the meaning.
    #[test]
    fn normalization_keeps_the_meaning(g in arb_general()) {
        prop_assert_eq!(table(&g), table(&g.normalized()));
    }

    /// With the same stages and swizzle and a different buffer order, the structural decision agrees with the
    /// tables (the stages reach their whole output space, so this is exact).
    #[test]
    fn decision_agrees_with_tables(g in arb_general(), perm in 0usize..3, gap in 1i64..3) {
        let mut h = general(g.extents(), Vec::new(), perm, gap, None);
        h.stages.clone_from(&g.stages);
        h.swizzle = g.swizzle;
        h.inner = general(g.inner.dims.iter().map(|d| d.extent).collect(), Vec::new(), perm, gap, None).inner;
        h.validate().unwrap();
        let same = table(&g) == table(&h);
        prop_assert_eq!(equivalent_general(&g, &h).unwrap(), same);
        prop_assert_eq!(canonical_general(&g).unwrap() == canonical_general(&h).unwrap(), same);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    /// XLA's function evaluated per coordinate agrees with the strided lowering wherever that exists.
    #[test]
    fn xla_function_matches_its_strided_form(
        dims in prop::collection::vec(1u64..7, 1..4),
        perm in 0usize..6,
        tiles in prop::collection::vec(prop::collection::vec(1u64..5, 1..3), 0..3),
    ) {
        let rank = dims.len();
        let mut m2m: Vec<u64> = (0..rank as u64).rev().collect();
        m2m.rotate_left(perm % rank);
        let tiles = tiles.into_iter().map(|t| t.into_iter().map(tapestry::layout::notation::xla::TileDim::Size).collect()).collect();
        let x = tapestry::layout::notation::xla::XlaLayout { elem: "f32".into(), dims: dims.clone(), minor_to_major: Some(m2m), tiles };
        if let Ok(strided) = x.to_repr() {
            let logical = dims.iter().map(|&n| Dim::new(n)).collect();
            let computed = GeneralLayout::computed(logical, x.clone()).unwrap();
            let strided: GeneralLayout = strided.into();
            prop_assert_eq!(computed.offsets(Order::RowMajor).unwrap(), strided.offsets(Order::RowMajor).unwrap());
            prop_assert_eq!(computed.cosize(), strided.cosize());
        }
    }

    /// CK's function evaluated per coordinate agrees with the strided lowering of the descriptors CK conversion
    /// writes (merges, slices, pads over a naive base).
    #[test]
    fn ck_function_matches_its_strided_form(g in arb_general()) {
        let Ok(layout) = g.normalized().into_strided() else { return Ok(()) };
        let Ok(ck) = tapestry::layout::notation::ck::CkLayout::from_repr(&layout) else { return Ok(()) };
        let strided = ck.to_core().unwrap();
        let logical = layout.dims.iter().map(|d| Dim::new(d.extent)).collect();
        let computed = GeneralLayout::computed(logical, ck).unwrap();
        prop_assert_eq!(computed.offsets(Order::RowMajor).unwrap(), strided.offsets(Order::RowMajor).unwrap());
    }
}
