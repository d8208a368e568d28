//! The same layout in the four notations (the side-by-side table of docs/dialect-layout.md) means the same.

use tapestry::dialects::layout::syntax::{parse_ck, parse_cute, parse_furiosa, parse_xla};
use tapestry::layout::canonical::equivalent;
use tapestry::layout::notation::furiosa_to_core;
use tapestry::layout::strided::Layout;

fn all_four(xla: &str, cute: &str, furiosa: &str, ck: &str) -> [Layout; 4] {
    [
        parse_xla(xla).unwrap().to_repr().unwrap(),
        parse_cute(cute).unwrap().layout().unwrap().to_repr().unwrap(),
        furiosa_to_core::to_core(&parse_furiosa(furiosa).unwrap()).unwrap().into_strided().unwrap(),
        parse_ck(ck).unwrap().to_core().unwrap().into_strided().unwrap(),
    ]
}

#[test]
fn a_tiled_matrix_in_four_notations() {
    let ls = all_four(
        "f32[4,8]{1,0:T(2,4)}",
        "((2,2),(4,2)):((4,16),(1,8))",
        "axes[R = 4, C = 8], m[R / 2, C / 4, R % 2, C % 4]",
        "naive([2, 2, 2, 4], [16, 4, 8, 1]), transform(merge([2, 2]) [0, 1] -> [0], merge([2, 4]) [2, 3] -> [1])",
    );
    for l in &ls[1..] {
        // Same placement of every element; Furiosa's dimensions are named, so compare through the CuTe form.
        let mut unnamed = l.clone();
        unnamed.dims.iter_mut().for_each(|d| d.name = None);
        assert!(equivalent(&ls[0], &unnamed).unwrap(), "{l:?}");
    }
}

#[test]
fn a_padded_row_layout_in_three_notations() {
    // 3 rows of 5, each padded to 8 (CK has no padding that holds buffer positions).
    let ls =
        all_four("f32[3,5]{1,0:T(1,8)}", "(3,5):(8,1)", "axes[R = 3, C = 5], m[R, C # 8]", "naive([3, 5], [8, 1])");
    let mut f = ls[2].clone();
    f.dims.iter_mut().for_each(|d| d.name = None);
    assert!(equivalent(&ls[0], &f).unwrap());
    // CuTe and CK end the buffer after the last element (cosize 21); the XLA and Furiosa buffers hold 24.
    assert_eq!((ls[1].cosize, ls[3].cosize, ls[0].cosize), (21, 21, 24));
    assert!(equivalent(&ls[1], &ls[3]).unwrap());
}
