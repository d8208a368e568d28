//! CK tensor descriptors: the worked examples of CK's tensor-view document (seed 003) and the layout notes,
//! through the core representation.

use tapestry::dialects::layout::attr::LayoutAttr;
use tapestry::dialects::layout::syntax::{parse_ck, parse_cute};
use tapestry::layout::canonical::equivalent;
use tapestry::layout::core_form::equivalent_general;
use tapestry::layout::notation::ck::CkLayout;
use tapestry::layout::strided::Layout;
use tapestry::layout::table::Order;

fn ck(text: &str) -> CkLayout {
    parse_ck(text).unwrap_or_else(|e| panic!("{text}: {e:?}"))
}

fn repr(text: &str) -> Layout {
    ck(text).to_core().and_then(|g| g.into_strided()).unwrap_or_else(|e| panic!("{text}: {e}"))
}

#[test]
fn naive_descriptors_and_views() {
    // Element (1, 2) of a 3×4 row-major view is 6.
    assert_eq!(repr("naive([3, 4], [4, 1])").offset(&[1, 2]), Some(6));
    assert_eq!(repr("packed([3, 4])").offset(&[1, 2]), Some(6));
    assert!(equivalent(&repr("naive([3, 4], [4, 1])"), &repr("packed([3, 4])")).unwrap());
    // Column-major and the transposed view of the same memory: row_major(1,2) == col_major(2,1) == transposed(2,1).
    assert_eq!(repr("naive([3, 4], [1, 3])").offset(&[2, 1]), Some(5));
    assert_eq!(repr("naive([4, 3], [1, 4])").offset(&[2, 1]), Some(6));
    // element_space_size = 1 + Σ (len − 1)·stride.
    assert_eq!(repr("naive([3, 4], [8, 1])").cosize, 20);
}

#[test]
fn merge_splits_row_major() {
    // merge(3, 4) maps upper 7 to lower (1, 3).
    let l = repr("packed([3, 4]), transform(merge([3, 4]) [0, 1] -> [0])");
    assert_eq!(l.dims.len(), 1);
    assert_eq!(l.offset(&[7]), Some(7));
    let l = repr("naive([3, 4], [1, 3]), transform(merge([3, 4]) [0, 1] -> [0])");
    assert_eq!(l.offset(&[7]), Some(1 + 3 * 3));
    // unmerge is merge's inverse.
    let back = repr("packed([12]), transform(unmerge([3, 4]) [0] -> [0, 1])");
    assert!(equivalent(&back, &repr("packed([3, 4])")).unwrap());
}

#[test]
fn subviews_pads_and_broadcasts() {
    // A 5×5 window at (2, 3) of a packed 10×10.
    let l = repr("packed([10, 10]), transform(slice(10, 2, 7) [0] -> [0], slice(10, 3, 8) [1] -> [1])");
    assert_eq!(l.offset(&[0, 0]), Some(23));
    assert_eq!(l.offset(&[4, 4]), Some(67));
    // Right padding: coordinates past the data are not stored.
    let l = repr("packed([3, 4]), transform(pass_through(3) [0] -> [0], right_pad(4, 2) [1] -> [1])");
    assert_eq!(l.dims[1].extent, 6);
    assert_eq!(l.offset(&[1, 3]), Some(7));
    assert_eq!(l.offset(&[1, 4]), None);
    // pad(1, 2) on length 4: upper length 7, valid upper range [1, 5).
    let l = repr("packed([4]), transform(pad(4, 1, 2) [0] -> [0])");
    assert_eq!(l.dims[0].extent, 7);
    let got: Vec<_> = (0..7).map(|u| l.offset(&[u])).collect();
    assert_eq!(got, vec![None, Some(0), Some(1), Some(2), Some(3), None, None]);
    // Conv-style padding of both dimensions of a 3x4 image by 1.
    let l = repr("packed([3, 4]), transform(pad(3, 1, 1) [0] -> [0], pad(4, 1, 1) [1] -> [1])");
    assert_eq!(
        (l.offset(&[1, 1]), l.offset(&[3, 4]), l.offset(&[0, 2]), l.offset(&[4, 5])),
        (Some(0), Some(11), None, None)
    );
    // A replicated dimension is a broadcast: stride 0.
    let l = repr("packed([4]), transform(replicate(3) [] -> [0], pass_through(4) [0] -> [1])");
    assert_eq!(l.offset(&[2, 1]), Some(1));
    // embed is a naive descriptor on a flat buffer.
    let e = repr("packed([12]), transform(embed([3, 4], [4, 1]) [0] -> [0, 1])");
    assert!(equivalent(&e, &repr("packed([3, 4])")).unwrap());
    // freeze fixes a lower coordinate.
    let f = repr("packed([3, 4]), transform(freeze(2) [0] -> [], pass_through(4) [1] -> [0])");
    assert_eq!(f.offset(&[1]), Some(9));
}

#[test]
fn conversions_agree_with_cute() {
    // The CuTe layout (3,4):(4,1) is the naive descriptor ([3,4],[4,1]) (CuTe → CK is an embed).
    let cute = parse_cute("(3,4):(4,1)").unwrap().layout().unwrap().to_repr().unwrap();
    assert!(equivalent(&cute, &repr("naive([3, 4], [4, 1])")).unwrap());
}

#[test]
fn rejected_forms_say_why() {
    let err = |t: &str| parse_ck(t).map_err(|e| e.message).and_then(|c| c.validate().map_err(|e| e.0)).unwrap_err();
    assert!(err("packed([3, 4]), transform(pass_through(3) [0] -> [0])").contains("lower dimension 1 is read 0 times"));
    assert!(
        err("packed([3, 4]), transform(merge([3, 4]) [0, 1] -> [0, 1])").contains("merge reads 2 lower and defines 1")
    );
    assert!(err("packed([4]), transform(spin(4) [0] -> [0])").contains("unknown CK transform"));
    assert!(err("packed([3, 3]), transform(xor([3, 3]) [0, 1] -> [0, 1])").contains("power-of-two"));
    // Padding a coordinate that mixes two with gaps (a + 3b, a < 2) is not a regrouping: CK's own function.
    let combined = "packed([6]), transform(right_pad(6, 2) [0] -> [0]), transform(embed([2, 3], [1, 3]) [0] -> [0, 1])";
    let g = parse_ck(combined).unwrap().to_core().unwrap();
    assert_eq!(g.stages[0].kind(), "computed");
    assert!(err("strided([4])").contains("expected naive"));
}

#[test]
fn reshapes_regroup_their_coordinates() {
    // A (3, 2) view of a packed (2, 3) tensor through its flattening (unmerge above merge): row-major identity.
    let reshape = "packed([2, 3]), transform(merge([2, 3]) [0, 1] -> [0]), transform(unmerge([3, 2]) [0] -> [0, 1])";
    let g = LayoutAttr::Ck(parse_ck(reshape).unwrap()).to_core().unwrap();
    assert!(equivalent_general(&g, &Layout::row_major(&[3, 2]).into()).unwrap());
    // Then a modulo of the flattened coordinate: a regroup, then the modulo stage.
    let m = "packed([4]), transform(modulo(8, 4) [0] -> [0]), transform(unmerge([2, 4]) [0] -> [0, 1])";
    let g = LayoutAttr::Ck(parse_ck(m).unwrap()).to_core().unwrap();
    assert_eq!(g.offsets(Order::RowMajor).unwrap(), [0, 1, 2, 3, 0, 1, 2, 3].map(Some));
}

#[test]
fn prints_as_written() {
    for text in [
        "naive([3, 4], [4, 1])",
        "packed([3, 4]), transform(merge([3, 4]) [0, 1] -> [0])",
        "packed([10, 10]), transform(slice(10, 2, 7) [0] -> [0], slice(10, 3, 8) [1] -> [1])",
        "packed([4]), transform(replicate(3) [] -> [0], pass_through(4) [0] -> [1])",
    ] {
        assert_eq!(ck(text).to_string(), text);
    }
}
