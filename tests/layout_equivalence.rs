//! The equivalence decision on canonical forms agrees with brute-force comparison of full tables (every
//! element's positions, every position's class) on thousands of generated small layouts: random pairs, pairs one
//! parameter apart, and rewrites that keep the meaning (digits split, reordered, padded with extent-1 digits,
//! Top padding extended).

use proptest::prelude::*;
use tapestry::layout::canonical::{canonical, equivalent};
use tapestry::layout::strided::{Dim, Factor, Layout, PadKind};
use tapestry::layout::table::{offsets, positions, Order, Slot};

/// The whole meaning, tabulated: the dimensions (name and extent), which elements are stored where (the first
/// copy of each, in row-major order), and what every position holds.
type Table = (Vec<(Option<String>, u64)>, Vec<Option<i64>>, Vec<Slot>);

fn table(l: &Layout) -> Table {
    let dims = l.dims.iter().map(|d| (d.name.clone(), d.extent)).collect();
    (dims, offsets(l, Order::RowMajor), positions(l, Order::RowMajor))
}

fn kind() -> impl Strategy<Value = PadKind> {
    prop_oneof![6 => Just(PadKind::Top), 1 => Just(PadKind::Zero), 1 => Just(PadKind::Bottom)]
}

/// One dimension: digit extents (lowest first), stored count cut, extra unstored extent, padding kind, strides,
/// first stored coordinate (used when the dimension has one digit).
type DimSpec = (Vec<u64>, u64, u64, PadKind, Vec<i64>, u64);

fn dim_spec() -> impl Strategy<Value = DimSpec> {
    (
        prop::collection::vec(1u64..5, 1..4),
        0u64..4,
        0u64..2,
        kind(),
        prop::collection::vec(-6i64..14, 3),
        prop_oneof![3 => Just(0u64), 1 => 1u64..3],
    )
}

fn build(dims: &[DimSpec], replica: Option<(u64, i64)>, slack: (u64, u64)) -> Layout {
    let mut layout = Layout { dims: Vec::new(), factors: Vec::new(), base: 0, cosize: 0 };
    for (k, (extents, cut, extra, pad, strides, start)) in dims.iter().enumerate() {
        let mut place = 1;
        for (e, s) in extents.iter().zip(strides) {
            layout.factors.push(Factor { dim: Some(k), place, extent: *e, stride: *s });
            place *= e;
        }
        let stored = place.saturating_sub(*cut).max(1);
        let start = if extents.iter().filter(|&&e| e > 1).count() <= 1 { (*start).min(stored) } else { 0 };
        layout.dims.push(Dim { name: None, extent: stored + extra, stored, start, pad: *pad });
    }
    if let Some((extent, stride)) = replica {
        layout.factors.push(Factor { dim: None, place: 1, extent, stride });
    }
    let (lo, hi) = layout.offset_bounds();
    layout.base = (-lo) as i64 + slack.0 as i64;
    layout.cosize = (hi - lo + 1) as u64 + slack.0 + slack.1;
    layout
}

fn layout() -> impl Strategy<Value = Layout> {
    (prop::collection::vec(dim_spec(), 1..4), prop::option::weighted(0.15, (2u64..4, 1i64..30)), (0u64..2, 0u64..3))
        .prop_map(|(dims, replica, slack)| build(&dims, replica, slack))
        .prop_filter("valid and small", |l| l.validate().is_ok() && l.cosize <= 4096)
}

/// A rewrite that keeps the meaning, chosen by `pick`.
fn rewrite(l: &Layout, pick: u32, which: usize) -> Layout {
    let mut r = l.clone();
    let n = r.factors.len();
    match pick % 4 {
        0 => r.factors.rotate_left(which % n.max(1)),
        1 => {
            // Split a composite digit e = e1·e2 into two.
            if let Some(i) = (0..n).map(|i| (i + which) % n).find(|&i| {
                r.factors[i].dim.is_some() && r.factors[i].extent.is_multiple_of(2) && r.factors[i].extent > 2
            }) {
                let f = r.factors[i];
                r.factors[i].extent = 2;
                let hi = Factor { place: f.place * 2, extent: f.extent / 2, stride: f.stride * 2, ..f };
                for g in r.factors.iter_mut().filter(|g| g.dim == f.dim && g.place > f.place) {
                    g.place = g.place / f.extent * f.extent;
                }
                r.factors.push(hi);
            }
        }
        2 => {
            let k = which % r.dims.len();
            r.factors.insert(which % (n + 1), Factor { dim: Some(k), place: 1, extent: 1, stride: 99 });
        }
        _ => {
            // Extend the top digit of a dimension when all padding is Top (Top padding and holes look the same;
            // next to Zero or Bottom padding, the extension would be visible).
            let k = which % r.dims.len();
            let strict = (0..r.dims.len()).any(|j| r.dims[j].pad != PadKind::Top && r.padded(j) > r.dims[j].stored);
            if !strict && r.dims[k].pad == PadKind::Top {
                if let Some(top) = r.factors.iter_mut().filter(|f| f.dim == Some(k)).max_by_key(|f| f.place) {
                    top.extent += 1;
                }
            }
        }
    }
    r
}

/// A change of one parameter, which usually changes the meaning (but not always).
fn mutate(l: &Layout, pick: u32, which: usize, delta: i64) -> Layout {
    let mut r = l.clone();
    let n = r.factors.len();
    match pick % 5 {
        0 => r.factors[which % n].stride += delta,
        1 => r.base += delta.signum(),
        2 => r.cosize = (r.cosize as i64 + delta.signum()).max(1) as u64,
        3 => {
            let d = &mut r.dims[which % l.dims.len()];
            d.pad = match d.pad {
                PadKind::Top => PadKind::Zero,
                PadKind::Zero => PadKind::Bottom,
                PadKind::Bottom => PadKind::Top,
            }
        }
        _ => {
            let d = &mut r.dims[which % l.dims.len()];
            d.stored = (d.stored as i64 + delta.signum()).clamp(0, d.extent as i64) as u64;
        }
    }
    r
}

fn check(a: &Layout, b: &Layout) -> Result<(), TestCaseError> {
    if a.validate().is_err() || b.validate().is_err() {
        return Ok(());
    }
    let decided = equivalent(a, b).unwrap();
    let brute = table(a) == table(b);
    prop_assert_eq!(
        decided,
        brute,
        "\na = {:?}\nb = {:?}\ncanonical a = {:?}\ncanonical b = {:?}",
        a,
        b,
        canonical(a),
        canonical(b)
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn random_pairs(a in layout(), b in layout()) {
        check(&a, &b)?;
    }

    #[test]
    fn near_pairs(a in layout(), pick in 0u32..5, which in 0usize..8, delta in prop_oneof![-3i64..0, 1i64..4]) {
        check(&a, &mutate(&a, pick, which, delta))?;
    }

    #[test]
    fn rewrites_keep_the_meaning(a in layout(), picks in prop::collection::vec((0u32..4, 0usize..8), 1..4)) {
        let mut b = a.clone();
        for (pick, which) in picks {
            b = rewrite(&b, pick, which);
        }
        if b.validate().is_ok() {
            prop_assert!(equivalent(&a, &b).unwrap(), "\na = {:?}\nb = {:?}", a, b);
            check(&a, &b)?;
        }
    }

    #[test]
    fn canonical_form_is_idempotent(a in layout()) {
        let c = canonical(&a).unwrap();
        let again = Layout {
            dims: c.dims.clone(),
            factors: c.digits.iter().enumerate().flat_map(|(k, ds)| ds.iter().map(move |&(place, extent, stride)| Factor { dim: Some(k), place, extent, stride }))
                .chain(c.replicas.iter().map(|&(extent, stride)| Factor { dim: None, place: 1, extent, stride }))
                .collect(),
            base: c.base,
            cosize: c.cosize,
        };
        prop_assert_eq!(canonical(&again).unwrap(), c);
    }
}
