//! Furiosa mapping expressions: the worked examples and doc tests of seed 000 (tensor index held at each buffer
//! position), the composite stride/modulo trap rows of the layout notes, and the equivalence laws of seed 000 as
//! property tests over generated expressions.

use proptest::prelude::*;
use tapestry::dialects::layout::syntax::parse_furiosa;
use tapestry::layout::canonical::equivalent;
use tapestry::layout::notation::furiosa_to_core::to_core;
use tapestry::layout::strided::{Layout, PadKind};
use tapestry::layout::table::{positions, Order, Slot};

fn lower(text: &str) -> Result<Layout, String> {
    let f = parse_furiosa(text).map_err(|e| format!("{e:?}"))?;
    f.validate().map_err(|e| e.0.clone())?;
    to_core(&f).and_then(|g| g.into_strided()).map_err(|e| e.0)
}

fn layout(text: &str) -> Layout {
    lower(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

/// What buffer position `p` holds, as Furiosa's `map(p)`: `Some(index)` (non-zero coordinates by axis name),
/// `Err(kind)` for padding, `None` out of bounds.
fn map(l: &Layout, p: u64) -> Option<Result<Vec<(String, u64)>, PadKind>> {
    let table = positions(l, Order::RowMajor);
    match table.get(p as usize)? {
        Slot::Padding(kind) => Some(Err(*kind)),
        Slot::Live(elems) => {
            let mut n = elems[0];
            let mut coord = vec![0; l.dims.len()];
            for k in (0..l.dims.len()).rev() {
                coord[k] = n % l.dims[k].extent;
                n /= l.dims[k].extent;
            }
            let named = l.dims.iter().zip(coord).filter(|(_, c)| *c != 0);
            Some(Ok(named.map(|(d, c)| (d.name.clone().unwrap(), c)).collect()))
        }
    }
}

fn idx(pairs: &[(&str, u64)]) -> Option<Result<Vec<(String, u64)>, PadKind>> {
    Some(Ok(pairs.iter().map(|(a, v)| (a.to_string(), *v)).collect()))
}

#[test]
fn symbol_and_pair() {
    let l = layout("axes[A = 8], m[A]");
    for i in 0..8 {
        assert_eq!(map(&l, i), if i == 0 { idx(&[]) } else { idx(&[("A", i)]) });
    }
    assert_eq!(map(&l, 8), None);
    let l = layout("axes[A = 8, B = 512], m[A, B]");
    assert_eq!(map(&l, 519), idx(&[("A", 1), ("B", 7)]));
    assert_eq!(map(&l, 2 * 512 + 7), idx(&[("A", 2), ("B", 7)]));
    assert_eq!(l.cosize, 4096);
}

#[test]
fn padding_aligns_rows() {
    let l = layout("axes[C = 13, D = 61], m[C, D # 64]");
    assert_eq!(l.cosize, 832);
    assert_eq!(map(&l, 0), idx(&[]));
    assert_eq!(map(&l, 60), idx(&[("D", 60)]));
    for p in [61, 62, 63] {
        assert_eq!(map(&l, p), Some(Err(PadKind::Top)));
    }
    assert_eq!(map(&l, 64), idx(&[("C", 1)]));
    let pads: Vec<u64> = (0..832).filter(|&p| matches!(map(&l, p), Some(Err(_)))).collect();
    assert_eq!(pads.len(), 39);
    assert_eq!(&pads[36..], &[829, 830, 831]);
    // Zero and bottom padding keep their kinds.
    let z = layout("axes[C = 13, D = 61], m[C, D #{0} 64]");
    assert_eq!(map(&z, 61), Some(Err(PadKind::Zero)));
    let b = layout("axes[C = 13, D = 61], m[C, D #{!} 64]");
    assert_eq!(map(&b, 63), Some(Err(PadKind::Bottom)));
}

#[test]
fn resize_takes_a_prefix() {
    let l = layout("axes[C = 2, D = 3], m[C, D = 2]");
    let got: Vec<_> = (0..5).map(|p| map(&l, p)).collect();
    assert_eq!(got, vec![idx(&[]), idx(&[("D", 1)]), idx(&[("C", 1)]), idx(&[("C", 1), ("D", 1)]), None]);
    assert_eq!(l.offset(&[0, 2]), None, "D = 2 is not stored");
}

#[test]
fn stride_and_modulo() {
    let l = layout("axes[A = 8, B = 512], m[B / 64, B % 64]");
    assert!(equivalent(&l, &layout("axes[A = 8, B = 512], m[B]")).unwrap());
    let l = layout("axes[B = 16], m[B / 4, B % 4]");
    for p in 0..16 {
        assert_eq!(map(&l, p), if p == 0 { idx(&[]) } else { idx(&[("B", p)]) });
    }
    // Bit rearrangement: buffer 67 = 64·1 + 2·1 + 1 holds B = 64 + 1 + 32 = 97.
    let l = layout("axes[A = 8, B = 512], m[B / 64, B % 32, B / 32 % 2]");
    assert_eq!(map(&l, 67), idx(&[("B", 97)]));
    for i in 0..8 {
        for j in 0..32 {
            for k in 0..2 {
                assert_eq!(
                    map(&l, 64 * i + 2 * j + k).unwrap().unwrap().first().map(|x| x.1).unwrap_or(0),
                    64 * i + j + 32 * k
                );
            }
        }
    }
}

#[test]
fn composite_stride_and_modulo_keep_carries() {
    // The literal rule gives {B: 6} (out of range) at 6; composite semantics gives {A: 1, B: 0}.
    let l = layout("axes[A = 2, B = 6], m[[A, B] / 4, [A, B] % 4]");
    assert_eq!(map(&l, 6), idx(&[("A", 1)]));
    assert!(equivalent(&l, &layout("axes[A = 2, B = 6], m[A, B]")).unwrap());
    // The literal rule turns padding live at 61; composite semantics keeps it padding.
    let l = layout("axes[C = 13, D = 61], m[[C, D # 64] / 32, [C, D # 64] % 32]");
    assert_eq!(map(&l, 61), Some(Err(PadKind::Top)));
    assert!(equivalent(&l, &layout("axes[C = 13, D = 61], m[C, D # 64]")).unwrap());
}

#[test]
fn escapes_aliases_and_operands() {
    let l = layout("axes[A = 8, B = 512], L = m[A], R = m[B], m[{L}, {R}]");
    assert!(equivalent(&l, &layout("axes[A = 8, B = 512], m[A, B]")).unwrap());
    let l = layout("axes[C = 13, D = 61], N = 64, m[C, D # {N}]");
    assert!(equivalent(&l, &layout("axes[C = 13, D = 61], m[C, D # 64]")).unwrap());
    // An axis or a parenthesized mapping as an operand stands for its size.
    let l = layout("axes[A = 4, B = 8], m[[A, B] / B, B]");
    assert!(equivalent(&l, &layout("axes[A = 4, B = 8], m[A, B]")).unwrap());
    let l = layout("axes[A = 4, B = 8], m[[A, B] % (B)]");
    assert!(equivalent(&l, &layout("axes[A = 4, B = 8], m[B]")).unwrap());
}

#[test]
fn tile_views() {
    // B = 2 # 4: two columns of B in a footprint of four.
    let l = layout("axes[A = 8, B = 512], m[A, B = 2 # 4]");
    assert_eq!(l.cosize, 32);
    assert_eq!(map(&l, 5), idx(&[("A", 1), ("B", 1)]));
    assert_eq!(map(&l, 6), Some(Err(PadKind::Top)));
    let l = layout("axes[A = 8, B = 512], m[A, B / 32 = 2 # 16, B % 32]");
    assert_eq!(map(&l, 32 + 5), idx(&[("B", 37)]));
    assert_eq!(map(&l, 64), Some(Err(PadKind::Top)));
    assert_eq!(map(&l, 512), idx(&[("A", 1)]));
}

#[test]
fn sliding_window() {
    let l = layout("axes[N = 5, F = 3], m[$(N:1, F:2)]");
    assert_eq!(l.cosize, 9);
    for n in 0..5 {
        for f in 0..3 {
            assert_eq!(l.offset(&[n, f]), Some((n + 2 * f) as i64));
        }
    }
    // Position 4 holds {N: 4}, {N: 2, F: 1} and {F: 2}.
    let Slot::Live(elems) = &positions(&l, Order::RowMajor)[4] else { panic!() };
    assert_eq!(elems, &vec![2, 7, 12]);
}

#[test]
fn broadcast_stores_copies() {
    let l = layout("axes[A = 4], m[2, A]");
    assert_eq!(l.cosize, 8);
    assert_eq!(map(&l, 5), idx(&[("A", 1)]));
    assert_eq!(map(&l, 1), idx(&[("A", 1)]));
}

#[test]
fn not_expressible_or_invalid() {
    assert!(lower("axes[A = 8], m[A / 3]").unwrap_err().contains("stride 3 must divide"));
    assert!(lower("axes[A = 8], m[A # 4]").unwrap_err().contains("padding to 4 is less"));
    assert!(lower("axes[A = 8], m[A = 9]").unwrap_err().contains("resize to 9 exceeds"));
    assert!(lower("axes[A = 8], m[B]").unwrap_err().contains("undeclared axis 'B'"));
    assert!(lower("axes[A = 8], m[{L}]").unwrap_err().contains("undefined alias"));
    assert!(lower("axes[A = 2, B = 6], m[[A, B] / 4, 3]").unwrap_err().contains("no strided form"));
    // Skew and sampling have general core forms (tests/layout_general.rs), not strided ones.
    assert!(lower("axes[A = 4, B = 4, B' = B - A], m[A, B' = 4]").unwrap_err().contains("skew stage"));
    assert!(lower("axes[A = 8, B = 512], m[B / 64]").unwrap_err().contains("sample stage"));
    assert!(lower("axes[B = 512], m[B / 64, B % 2]").unwrap_err().contains("sample stage"));
    assert!(lower("axes[B = 12], m[B / 4, B % 3]").unwrap_err().contains("sample stage"));
    let overlap = lower("axes[B = 8], m[B / 2, B % 4]").unwrap_err();
    assert!(overlap.contains("digits of axis B overlap: one at weight 2 inside one ending at 4"), "{overlap}");
}

#[test]
fn prints_in_furiosa_notation() {
    for text in [
        "axes[A = 8, B = 512], m[A, B # 64]",
        "axes[A = 8, B = 512], L = m[B / 32 = 2 # 16, B % 32], N = 4, m[A, {L}, 1 # {N}]",
        "axes[C = 13, D = 61], m[[C, D #{0} 64] / 32, [C, D #{!} 64] % 32]",
        "axes[N = 5, F = 3], m[$(N:1, F:2)]",
        "axes[A = 4, B = 4, B' = B - A], m[A, B' = 4]",
    ] {
        assert_eq!(parse_furiosa(text).unwrap().to_string(), text);
    }
}

/// Random mapping expressions over axes A = 4, B = 6, C = 2 that lower (most do; the rest are skipped).
fn expr() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![Just("A".to_string()), Just("B".to_string()), Just("C".to_string()), Just("1".to_string())];
    leaf.prop_recursive(3, 12, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(l, r)| format!("[{l}, {r}]")),
            (inner.clone(), 1u64..4).prop_map(|(e, n)| format!("[{e}] / {n}")),
            (inner.clone(), 1u64..4).prop_map(|(e, n)| format!("[{e}] % {n}")),
            (inner.clone(), 0u64..3).prop_map(|(e, n)| format!("[{e}] # ([{e}], {})", n + 1)),
        ]
    })
}

fn law(lhs: &str, rhs: &str) -> Result<(), TestCaseError> {
    let (Ok(a), Ok(b)) = (lower(lhs), lower(rhs)) else {
        // Either side has no strided form or fails a precondition: the law says nothing about it here.
        return Ok(());
    };
    prop_assert!(equivalent(&a, &b).unwrap(), "{lhs} vs {rhs}");
    prop_assert_eq!(positions(&a, Order::RowMajor), positions(&b, Order::RowMajor), "{} vs {}", lhs, rhs);
    Ok(())
}

const AXES: &str = "axes[A = 4, B = 6, C = 2]";

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, ..ProptestConfig::default() })]

    #[test]
    fn identity_of_pairs(e in expr()) {
        law(&format!("{AXES}, m[{e}]"), &format!("{AXES}, E = m[{e}], m[{{E}}, 1]"))?;
        law(&format!("{AXES}, m[{e}]"), &format!("{AXES}, E = m[{e}], m[1, {{E}}]"))?;
    }

    #[test]
    fn stride_modulo_decomposition(e in expr(), n in 1u64..5) {
        law(&format!("{AXES}, m[{e}]"), &format!("{AXES}, E = m[{e}], m[{{E}} / {n}, {{E}} % {n}]"))?;
    }

    #[test]
    fn pair_projection(a in expr(), b in expr()) {
        let defs = format!("{AXES}, X = m[{a}], Y = m[{b}]");
        law(&format!("{defs}, m[{{X}}]"), &format!("{defs}, m[[{{X}}, {{Y}}] / {{Y}}]"))?;
        law(&format!("{defs}, m[{{Y}}]"), &format!("{defs}, m[[{{X}}, {{Y}}] % {{Y}}]"))?;
    }

    #[test]
    fn associativity(a in expr(), b in expr(), c in expr()) {
        let defs = format!("{AXES}, X = m[{a}], Y = m[{b}], Z = m[{c}]");
        law(&format!("{defs}, m[{{X}}, {{Y}}, {{Z}}]"), &format!("{defs}, m[[{{X}}, {{Y}}], {{Z}}]"))?;
        law(&format!("{defs}, m[{{X}}, {{Y}}, {{Z}}]"), &format!("{defs}, m[{{X}}, [{{Y}}, {{Z}}]]"))?;
    }

    #[test]
    fn idempotent_operations(e in expr()) {
        let defs = format!("{AXES}, E = m[{e}]");
        law(&format!("{defs}, m[{{E}}]"), &format!("{defs}, m[{{E}} / 1]"))?;
        law(&format!("{defs}, m[{{E}}]"), &format!("{defs}, m[{{E}} # ({{E}})]"))?;
        law(&format!("{defs}, m[{{E}}]"), &format!("{defs}, m[{{E}} = ({{E}})]"))?;
    }

    #[test]
    fn modulo_by_one(e in expr()) {
        law(&format!("{AXES}, m[{e} % 1]"), &format!("{AXES}, m[1]"))?;
    }
}
