//! Address generation: the loop nest of a layout produces exactly the offsets of its stored elements, in order,
//! for generated layouts (or says why it cannot).

use proptest::prelude::*;
use tapestry::layout::address::access_pattern;
use tapestry::layout::strided::{Dim, Factor, Layout};
use tapestry::layout::table::{offsets, Order};

fn layout() -> impl Strategy<Value = Layout> {
    let dim = (prop::collection::vec(1u64..5, 1..4), 0u64..3, prop::collection::vec(-5i64..12, 3));
    prop::collection::vec(dim, 1..4)
        .prop_map(|dims| {
            let mut l = Layout { dims: Vec::new(), factors: Vec::new(), base: 0, cosize: 0 };
            for (k, (extents, cut, strides)) in dims.iter().enumerate() {
                let mut place = 1;
                for (e, s) in extents.iter().zip(strides) {
                    l.factors.push(Factor { dim: Some(k), place, extent: *e, stride: *s });
                    place *= e;
                }
                let stored = place.saturating_sub(*cut).max(1);
                l.dims.push(Dim { stored, ..Dim::new(stored + 1) });
            }
            let (lo, hi) = l.offset_bounds();
            l.base = -lo as i64;
            l.cosize = (hi - lo + 1) as u64;
            l
        })
        .prop_filter("valid", |l| l.validate().is_ok())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn loops_visit_the_stored_elements_in_order(l in layout(), colex in any::<bool>()) {
        let order = if colex { Order::Colex } else { Order::RowMajor };
        let want: Vec<i64> = offsets(&l, order).into_iter().flatten().collect();
        match access_pattern(&l, order) {
            Ok(p) => {
                let mut got = Vec::new();
                p.expand(&mut got);
                prop_assert_eq!(got, want);
            }
            Err(e) => prop_assert!(e.0.contains("partial"), "{}", e),
        }
    }
}

#[test]
fn a_contiguous_layout_is_one_loop() {
    let l = Layout::row_major(&[4, 8, 16]);
    let p = access_pattern(&l, Order::RowMajor).unwrap();
    assert_eq!(p.loops, vec![(512, 1)]);
    assert_eq!(p.len(), 512);
}
