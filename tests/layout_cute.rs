//! CuTe layouts: the worked examples of the CuTe documents (seed 001, the layout notes), and the cases where
//! pycute returns a wrong or truncated result, which must be rejected with a reason instead.

use tapestry::dialects::layout::syntax::parse_cute;
use tapestry::layout::notation::cute::{crd2idx, idx2crd, idx2crd_strided, CuteLayout, IntTuple};
use tapestry::layout::notation::cute_algebra::*;
use tapestry::layout::swizzle::Swizzle;

fn l(text: &str) -> CuteLayout {
    let a = parse_cute(text).unwrap_or_else(|e| panic!("{text}: {e:?}"));
    a.layout().unwrap()
}

fn t(text: &str) -> IntTuple {
    l(&format!("{text}:{text}")).shape
}

#[test]
fn idx2crd_colexicographic_with_last_mode_absorbing() {
    assert_eq!(idx2crd(16, &t("(3,(2,3))")).to_string(), "(1,(1,2))");
    assert_eq!(idx2crd(16, &t("(3,6)")).to_string(), "(1,5)");
    // The last mode is not wrapped.
    assert_eq!(idx2crd(7, &t("(2,3)")).to_string(), "(1,3)");
}

#[test]
fn crd2idx_agrees_for_every_coordinate_form() {
    let layout = l("(3,(2,3)):(3,(12,1))");
    for coord in ["16", "(1,5)", "(1,(1,2))"] {
        assert_eq!(crd2idx(&t(coord), &layout.shape, &layout.stride).unwrap(), 17, "{coord}");
    }
    assert_eq!(l("(2,3):(1,10)").call(7), 31);
    assert!(crd2idx(&t("(1,2,3)"), &layout.shape, &layout.stride).is_err());
}

#[test]
fn layout_function_and_compact_inverse() {
    assert_eq!(l("(3,2):(2,3)").call(5), 7);
    // idx2crd with strides inverts a compact layout.
    let compact = l("(4,(2,3)):(6,(1,2))");
    for i in 0..compact.size() {
        let c = idx2crd(i, &compact.shape);
        let off = compact.call(i);
        assert_eq!(idx2crd_strided(off, &compact.shape, &compact.stride), c);
    }
}

#[test]
fn coalesce_and_filter() {
    assert_eq!(coalesce(&l("(2,(1,6)):(1,(6,2))")).to_string(), "12:1");
    assert_eq!(coalesce(&l("(2,4):(4,1)")).to_string(), "(2,4):(4,1)");
    assert_eq!(coalesce(&l("(1,1):(3,5)")).to_string(), "1:0");
    assert_eq!(filter(&l("(2,3,2):(1,0,2)")).to_string(), "4:1");
}

#[test]
fn complement_examples() {
    let cases = [
        ("4:1", "6:4"),
        ("6:4", "4:1"),
        ("(4,6):(1,4)", "1:0"),
        ("4:2", "(2,3):(1,8)"),
        ("(2,4):(1,6)", "3:2"),
        ("(2,2):(1,6)", "(3,2):(2,12)"),
    ];
    for (a, want) in cases {
        assert_eq!(complement(&l(a), 24).unwrap().to_string(), want, "complement({a}, 24)");
    }
    let err = complement(&l("(2,3):(1,3)"), 24).unwrap_err();
    assert!(err.0.contains("not a multiple"), "{err}");
}

#[test]
fn composition_examples() {
    let r = composition(&l("(6,2):(8,2)"), &l("(4,3):(3,1)")).unwrap();
    assert_eq!(r.to_string(), "((2,2),3):((24,2),8)");
    let a = l("(6,2):(8,2)");
    let b = l("(4,3):(3,1)");
    for i in 0..b.size() {
        assert_eq!(r.call(i), a.call(b.call(i)));
    }
    // Stride 0 in B gives stride 0.
    assert_eq!(composition(&l("8:2"), &l("4:0")).unwrap().to_string(), "4:0");
}

#[test]
fn composition_rejects_what_pycute_gets_wrong() {
    // pycute truncates to 5:3 (size 5, not 8).
    let e = composition(&l("(5,3):(3,10)"), &l("8:1")).unwrap_err();
    assert!(e.0.contains("do not split evenly"), "{e}");
    // pycute gives (3,2):(2,3), whose R(5) = 7 while A(B(5)) = 8.
    let e = composition(&l("(6,2):(1,7)"), &l("(3,2):(2,3)")).unwrap_err();
    assert!(e.0.contains("carries"), "{e}");
    // pycute asserts; C++ CuTe returns a wrong layout.
    let e = composition(&l("(4,6,8):(2,3,5)"), &l("6:3")).unwrap_err();
    assert!(e.0.contains("neither divides"), "{e}");
}

#[test]
fn inverses() {
    let r = right_inverse(&l("(4,3):(8,1)"));
    assert_eq!(r.to_string(), "3:4");
    let li = left_inverse(&l("(4,(2,3)):(2,(1,8))")).unwrap();
    let src = l("(4,(2,3)):(2,(1,8))");
    for i in 0..src.size() {
        assert_eq!(li.call(src.call(i)), i);
    }
    // pycute returns 2:1 and 6:4, which invert only part of the domain.
    assert!(left_inverse(&l("(2,3):(1,3)")).is_err());
    assert!(left_inverse(&l("(4,3):(8,1)")).is_err());
}

#[test]
fn logical_divide_and_product() {
    let d = logical_divide(&l("(4,2,3):(2,1,8)"), &l("4:2")).unwrap();
    assert_eq!(d.to_string(), "((2,2),(2,3)):((4,1),(2,8))");
    // An integer tiler n is the layout n:1 (pycute routes it to logical_divide).
    let p = logical_product(&l("(2,2):(4,1)"), &l("6:1")).unwrap();
    assert_eq!(p.to_string(), "((2,2),(2,3)):((4,1),(2,8))");
}

#[test]
fn swizzle() {
    let sw = Swizzle::new(3, 4, 3).unwrap();
    assert_eq!(sw.apply(128), 144);
    assert!(Swizzle::new(3, 4, 2).is_err());
    // A swizzle is a bijection on every aligned block of its reach.
    let mut seen: Vec<i64> = (0..1024).map(|x| sw.apply(x)).collect();
    seen.sort();
    assert_eq!(seen, (0..1024).collect::<Vec<_>>());
}

#[test]
fn notation_round_trips_with_and_without_spaces() {
    for (text, printed) in [
        ("(2, (2, 2)):(4, (1, 2))", "(2,(2,2)):(4,(1,2))"),
        ("(2,):(1,)", "(2):(1)"),
        ("Sw<3,4,3> o 32 o (8,8):(8,1)", "Sw<3,4,3> o 32 o (8,8):(8,1)"),
        ("8:-1", "8:-1"),
    ] {
        assert_eq!(parse_cute(text).unwrap().to_string(), printed);
    }
    let e = parse_cute("(2,3):(1").unwrap_err();
    assert_eq!(e.offset, Some(8));
}
