//! XLA tiled layouts: the worked examples of XLA's tiling document (seed 002) and the layout notes, through the
//! core representation.

use tapestry::dialects::layout::syntax::parse_xla;
use tapestry::layout::strided::Layout;

fn repr(text: &str) -> Layout {
    let x = parse_xla(text).unwrap_or_else(|e| panic!("{text}: {e:?}"));
    x.validate().unwrap_or_else(|e| panic!("{text}: {e}"));
    x.to_repr().unwrap()
}

#[test]
fn figure_1_element_2_3_is_at_17() {
    let l = repr("F32[3,5]{1,0:T(2,2)}");
    assert_eq!(l.offset(&[2, 3]), Some(17));
    assert_eq!(l.cosize, 24);
}

#[test]
fn repeated_tiles() {
    let l = repr("f32[8,8]{1,0:T(2,4)(2,1,1,1)}");
    assert_eq!(l.offset(&[6, 5]), Some(51));
    let l = repr("bf16[4,8]{1,0:T(2,4)(2,1)}");
    assert_eq!([l.offset(&[1, 0]), l.offset(&[0, 1]), l.offset(&[3, 5])], [Some(1), Some(2), Some(27)]);
}

#[test]
fn every_tile_counts_in_the_footprint() {
    // XLA's ArraySize uses the first tile only and says 24.
    let l = repr("F32[3,5]{1,0:T(2,2)(4,1)}");
    assert_eq!(l.cosize, 48);
    let max = (0..3).flat_map(|i| (0..5).map(move |j| [i, j])).map(|c| l.offset(&c).unwrap()).max();
    assert_eq!(max, Some(40));
}

#[test]
fn default_and_permuted_layouts() {
    let l = repr("f32[3,5]");
    assert_eq!(l.offset(&[1, 2]), Some(7));
    let l = repr("f32[3,5]{0,1}");
    assert_eq!(l.offset(&[1, 2]), Some(7));
    assert_eq!(repr("f32[3,5]{0,1}").offset(&[2, 0]), Some(2));
    let l = repr("f32[2,3,4]{0,2,1}");
    // Physical order major to minor: dims 1, 2, 0.
    assert_eq!(l.offset(&[1, 2, 3]), Some(2 * 8 + 3 * 2 + 1));
}

#[test]
fn combined_dimensions() {
    // `*` merges dimension 0 into dimension 1 before tiling: [2,4,4] tiled (*,2,2) as [8,4] tiled (2,2).
    let l = repr("f32[2,4,4]{2,1,0:T(*,2,2)}");
    let plain = repr("f32[8,4]{1,0:T(2,2)}");
    assert_eq!(l.cosize, plain.cosize);
    for a in 0..2 {
        for b in 0..4 {
            for c in 0..4 {
                assert_eq!(l.offset(&[a, b, c]), plain.offset(&[a * 4 + b, c]), "{a},{b},{c}");
            }
        }
    }
}

#[test]
fn rejected_forms_say_why() {
    let err = |text: &str| parse_xla(text).map_err(|e| e.message).and_then(|x| x.validate().map_err(|e| e.0));
    assert!(err("f32[3,5]{1,1}").unwrap_err().contains("appears twice"));
    assert!(err("f32[3,5]{1}").unwrap_err().contains("minor_to_major has 1 entries"));
    assert!(err("q32[3]{0}").unwrap_err().contains("unknown XLA element type"));
    assert!(err("f32[3,5]{1,0:T(2,2,2)}").unwrap_err().contains("tile 1 has 3 dimensions"));
    assert!(err("f32[3,5]{1,0:U(2)}").unwrap_err().contains("expected tiles"));
    assert!(err("f32[6,10]{1,0:T(4,4)(3,*)}").unwrap_err().contains("'*' on the most minor dimension"));
}

#[test]
fn prints_as_written() {
    for text in ["F32[3,5]{1,0:T(2,2)}", "bf16[4,8]{1,0:T(2,4)(2,1)}", "f32[3,5]", "f32[6]{0:T(*)}"] {
        if let Ok(x) = parse_xla(text) {
            assert_eq!(x.to_string(), text);
        }
    }
}

#[test]
fn tiles_of_size_one_dimensions() {
    // A later tile over the empty in-tile part of a 1-wide tile (found by the fuzzer: it once panicked).
    let l = repr("F32[3,5]{1,0:T(2,1)(4,1)}");
    assert_eq!((l.offset(&[0, 1]), l.offset(&[1, 0]), l.offset(&[2, 0])), (Some(4), Some(1), Some(20)));
    assert_eq!(l.cosize, 40);
    let l = repr("f32[1,5]{1,0:T(4,4)}");
    assert_eq!((l.offset(&[0, 4]), l.cosize), (Some(16), 32));
}
