//! Views: each view reads the same buffer as its source, checked element by element on generated layouts
//! (`offset(view, c) == offset(source, f(c))`), and the requests no view can express say they need a copy.

use proptest::prelude::*;
use tapestry::dialects::layout::syntax::parse_xla;
use tapestry::layout::strided::{Dim, Factor, Layout};
use tapestry::layout::views::*;

fn coords(l: &Layout) -> Vec<Vec<u64>> {
    let mut out = vec![vec![]];
    for d in &l.dims {
        out = out.into_iter().flat_map(|c| (0..d.extent).map(move |e| [c.clone(), vec![e]].concat())).collect();
    }
    out
}

/// A layout with fully stored dimensions (views of padded ones are tested separately).
fn layout() -> impl Strategy<Value = Layout> {
    let dim = (prop::collection::vec(1u64..4, 1..3), prop::collection::vec(-4i64..10, 2));
    prop::collection::vec(dim, 1..4)
        .prop_map(|dims| {
            let mut l = Layout { dims: Vec::new(), factors: Vec::new(), base: 0, cosize: 0 };
            for (k, (extents, strides)) in dims.iter().enumerate() {
                let mut place = 1;
                for (e, s) in extents.iter().zip(strides) {
                    l.factors.push(Factor { dim: Some(k), place, extent: *e, stride: *s });
                    place *= e;
                }
                l.dims.push(Dim::new(place));
            }
            let (lo, hi) = l.offset_bounds();
            l.base = -lo as i64;
            l.cosize = (hi - lo + 1) as u64;
            l
        })
        .prop_filter("valid", |l| l.validate().is_ok())
}

fn same_buffer(view: &Layout, src: &Layout, f: impl Fn(&[u64]) -> Vec<u64>) -> Result<(), TestCaseError> {
    prop_assert_eq!(view.cosize, src.cosize);
    for c in coords(view) {
        prop_assert_eq!(view.offset(&c), src.offset(&f(&c)), "at {:?}", c);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    #[test]
    fn permute_reverse_and_broadcast(l in layout(), k in 0usize..3) {
        let k = k % l.dims.len();
        let rank = l.dims.len();
        let perm: Vec<usize> = (0..rank).map(|i| (i + 1) % rank).collect();
        let v = permute(&l, &perm).unwrap();
        same_buffer(&v, &l, |c| { let mut o = vec![0; rank]; for i in 0..rank { o[perm[i]] = c[i]; } o })?;
        let n = l.dims[k].extent;
        let v = reverse(&l, k).unwrap();
        same_buffer(&v, &l, |c| { let mut o = c.to_vec(); o[k] = n - 1 - c[k]; o })?;
        let v = broadcast(&l, k, 3).unwrap();
        same_buffer(&v, &l, |c| { let mut o = c.to_vec(); o.remove(k); o })?;
    }

    #[test]
    fn slices(l in layout(), k in 0usize..3, start in 0u64..3, step in 1u64..3) {
        let k = k % l.dims.len();
        let n = l.dims[k].extent;
        prop_assume!(start < n);
        let size = (n - 1 - start) / step + 1;
        match slice(&l, k, start, size, step) {
            Ok(v) => same_buffer(&v, &l, |c| { let mut o = c.to_vec(); o[k] = start + c[k] * step; o })?,
            Err(ViewError::NeedsCopy { .. }) => prop_assert!(l.factors.iter().filter(|f| f.dim == Some(k) && f.extent > 1).count() > 1),
            Err(e) => prop_assert!(false, "{}", e),
        }
    }

    #[test]
    fn split_then_merge_is_the_identity(l in layout(), k in 0usize..3, a in 1u64..4) {
        let k = k % l.dims.len();
        let n = l.dims[k].extent;
        prop_assume!(n % a == 0);
        match split(&l, k, &[a, n / a]) {
            Ok(v) => {
                let b = n / a;
                same_buffer(&v, &l, |c| { let mut o = c.to_vec(); o.splice(k..k + 2, [c[k] * b + c[k + 1]]); o })?;
                let back = merge(&v, k).unwrap();
                same_buffer(&back, &l, |c| c.to_vec())?;
            }
            Err(ViewError::NeedsCopy { reason, .. }) => prop_assert!(reason.contains("unevenly"), "{}", reason),
            Err(e) => prop_assert!(false, "{}", e),
        }
    }
}

#[test]
fn tiles_and_squeezes() {
    let l = Layout::row_major(&[8, 512]);
    let t = tile(&l, 1, 2, 4).unwrap();
    assert_eq!(t.offset(&[1, 1]), Some(512 + 5));
    let u = unsqueeze(&l, 0).unwrap();
    assert_eq!(u.dims.len(), 3);
    assert_eq!(squeeze(&u, 0).unwrap(), l);
    assert!(matches!(squeeze(&l, 0), Err(ViewError::Invalid(_))));
    assert!(matches!(permute(&l, &[0, 0]), Err(ViewError::Invalid(_))));
    assert!(matches!(slice(&l, 1, 510, 4, 1), Err(ViewError::Invalid(_))));
}

#[test]
fn views_of_tiled_layouts_need_copies_where_digits_do_not_align() {
    let x = parse_xla("f32[8,8]{1,0:T(2,4)}").unwrap().to_repr().unwrap();
    // Rows 2..6 step 1: the row coordinate is split in digits of 2; an offset slice cuts them.
    assert!(matches!(slice(&x, 0, 1, 4, 1), Err(ViewError::NeedsCopy { .. })));
    // A prefix is a view (the rest of the tile becomes padding).
    let p = slice(&x, 0, 0, 3, 1).unwrap();
    assert_eq!(p.offset(&[2, 5]), x.offset(&[2, 5]));
    // Splitting the rows at the tile boundary is a view; at 4 columns in a tile of 4 too.
    let s = split(&x, 1, &[2, 4]).unwrap();
    assert_eq!(s.offset(&[3, 1, 2]), x.offset(&[3, 6]));
}

#[test]
fn alignment() {
    // Rows of 61 f32 aligned to 64 bytes (16 elements): a compact 13x61 layout needs a copy into pitch 64.
    let l = Layout::row_major(&[13, 61]);
    match align_minor(&l, 64, 32) {
        Err(ViewError::NeedsCopy { target: Some(t), .. }) => {
            assert_eq!(t.offset(&[1, 0]), Some(64));
            assert_eq!(t.cosize, 13 * 64);
            assert_eq!(t.dims[1].extent, 61);
        }
        other => panic!("{other:?}"),
    }
    // Already at a pitch of 64: a view.
    let pitched = align_minor(&l, 64, 32).unwrap_err();
    let ViewError::NeedsCopy { target: Some(t), .. } = pitched else { panic!() };
    assert_eq!(align_minor(&t, 64, 32).unwrap().offset(&[2, 3]), Some(131));
    assert!(matches!(align_minor(&l, 3, 32), Err(ViewError::Invalid(_))));
}
