//! Conversions between notations, on generated layouts: whenever a layout can be written in CuTe, CK, Furiosa or XLA
//! notation, the text printed for it parses back to a layout that places every element where the source does.

use proptest::prelude::*;
use tapestry::dialects::layout::syntax::{parse_ck, parse_cute, parse_furiosa, parse_xla};
use tapestry::layout::canonical::same_placement;
use tapestry::layout::notation::ck::CkLayout;
use tapestry::layout::notation::cute::CuteLayout;
use tapestry::layout::notation::furiosa::FuriosaLayout;
use tapestry::layout::notation::furiosa_to_core;
use tapestry::layout::notation::xla::XlaLayout;
use tapestry::layout::strided::{Dim, Factor, Layout};

/// Row-major-ish layouts: dimensions split into digits, placed in a shuffled nest with optional slack per digit.
fn layout() -> impl Strategy<Value = Layout> {
    let dim = (prop::collection::vec(1u64..4, 1..3), 0u64..2);
    (prop::collection::vec(dim, 1..4), prop::collection::vec(0u64..2, 8), any::<prop::sample::Index>())
        .prop_map(|(dims, slack, shuffle)| {
            let mut l = Layout { dims: Vec::new(), factors: Vec::new(), base: 0, cosize: 0 };
            for (k, (extents, cut)) in dims.iter().enumerate() {
                let mut place = 1;
                for &e in extents {
                    l.factors.push(Factor { dim: Some(k), place, extent: e, stride: 0 });
                    place *= e;
                }
                let stored = place.saturating_sub(*cut).max(1);
                l.dims.push(Dim { stored, ..Dim::new(stored) });
            }
            let n = l.factors.len();
            l.factors.rotate_left(shuffle.index(n.max(1)));
            let mut stride = 1i64;
            for (i, f) in l.factors.iter_mut().enumerate().rev() {
                f.stride = stride;
                stride *= (f.extent + slack[i % slack.len()]) as i64;
            }
            l.cosize = stride as u64;
            l
        })
        .prop_filter("valid", |l| l.validate().is_ok())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    #[test]
    fn printed_conversions_parse_back_to_the_same_placement(l in layout()) {
        if let Ok(c) = CuteLayout::from_repr(&l) {
            let back = parse_cute(&c.to_string()).unwrap().layout().unwrap().to_repr().unwrap();
            prop_assert!(same_placement(&back, &l).unwrap(), "cute {}", c);
        }
        if let Ok(c) = CkLayout::from_repr(&l) {
            let back = parse_ck(&c.to_string()).unwrap().to_core().unwrap().into_strided().unwrap();
            prop_assert!(same_placement(&back, &l).unwrap(), "ck {}", c);
        }
        if let Ok(x) = XlaLayout::from_repr(&l) {
            let back = parse_xla(&x.to_string()).unwrap().to_repr().unwrap();
            prop_assert!(same_placement(&back, &l).unwrap(), "xla {}", x);
        }
        match FuriosaLayout::from_repr(&l) {
            Ok(f) => {
                let parsed = parse_furiosa(&f.to_string()).unwrap();
                parsed.validate().unwrap();
                let back = furiosa_to_core::to_core(&parsed).unwrap().into_strided().unwrap();
                prop_assert!(same_placement(&back, &l).unwrap(), "furiosa {}", f);
                prop_assert_eq!(back.cosize, l.cosize);
            }
            // Every generated layout nests by stride, so Furiosa can always write it.
            Err(e) => prop_assert!(false, "{}", e),
        }
    }
}

#[test]
fn xla_is_found_for_dense_tiled_layouts() {
    let xla = |t: &str| parse_xla(t).unwrap().to_repr().unwrap();
    for text in ["f32[4,8]{1,0:T(2,4)}", "f32[3,5]{0,1}", "f32[3,5]{1,0:T(2,2)}", "f32[2,3,4]{0,2,1:T(2,2)}", "f32[6]"]
    {
        let found = XlaLayout::from_repr(&xla(text)).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert!(same_placement(&xla(&found.to_string()), &xla(text)).unwrap(), "{text} -> {found}");
    }
    // CuTe's (3,5):(8,1) ends its buffer after the last element: still XLA's pitch-8 rows.
    let cute = parse_cute("(3,5):(8,1)").unwrap().layout().unwrap().to_repr().unwrap();
    assert_eq!(XlaLayout::from_repr(&cute).unwrap().to_string(), "f32[3,5]{1,0:T(8)}");
    // A stride that skips positions inside a row is not XLA.
    let gappy = parse_cute("(4,4):(2,8)").unwrap().layout().unwrap().to_repr().unwrap();
    assert!(XlaLayout::from_repr(&gappy).unwrap_err().0.contains("XLA cannot express"));
}
