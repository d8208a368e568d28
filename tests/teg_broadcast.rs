//! Broadcasting by dimension name in cell ops, against a direct computation: random operand shapes that drop
//! dimensions or hold them at extent 1, small and large (so that the threaded kernels split rows between tasks),
//! for float and integer cells.

use indexmap::IndexMap;
use proptest::prelude::*;
use tapestry::array::{Array, DType, Data};
use tapestry::dialects::teg::eval::evaluate;

const NAMES: [&str; 3] = ["n", "h", "w"];

/// How an operand holds each result dimension.
#[derive(Copy, Clone, Debug)]
enum Hold {
    Full,
    One,
    Absent,
}

fn hold() -> impl Strategy<Value = Hold> {
    prop_oneof![Just(Hold::Full), Just(Hold::One), Just(Hold::Absent)]
}

/// The operand's dimensions `(name, extent, result position)`.
fn dims(shape: &[u64], holds: &[Hold]) -> Vec<(&'static str, u64, usize)> {
    (0..3)
        .filter_map(|k| match holds[k] {
            Hold::Full => Some((NAMES[k], shape[k], k)),
            Hold::One => Some((NAMES[k], 1, k)),
            Hold::Absent => None,
        })
        .collect()
}

fn ty(dims: &[(&str, u64, usize)], dtype: &str) -> String {
    let d: Vec<String> = dims.iter().map(|(n, e, _)| format!("{n}={e}")).collect();
    format!("!teg.tensor<[{}] x {dtype}>", d.join(", "))
}

/// The value of an operand at a result coordinate.
fn at(values: &[i64], dims: &[(&str, u64, usize)], coord: &[u64]) -> i64 {
    let index = dims.iter().fold(0u64, |acc, &(_, e, k)| acc * e + if e == 1 { 0 } else { coord[k] });
    values[index as usize]
}

fn check(shape: [u64; 3], ha: [Hold; 3], hb: [Hold; 3], dtype: &str) {
    // The result has every dimension; `a` keeps all three so that it is the widest.
    let ha = [Hold::Full, ha[1], ha[2]].map(|h| if matches!(h, Hold::Absent) { Hold::One } else { h });
    // A dimension no operand holds in full has extent 1 in the result.
    let full = |k: usize| matches!(ha[k], Hold::Full) || matches!(hb[k], Hold::Full);
    let shape: [u64; 3] = std::array::from_fn(|k| if full(k) { shape[k] } else { 1 });
    let (da, db) = (dims(&shape, &ha), dims(&shape, &hb));
    let result: Vec<(&str, u64, usize)> = (0..3).map(|k| (NAMES[k], shape[k], k)).collect();
    let size = |d: &[(&str, u64, usize)]| d.iter().map(|x| x.1).product::<u64>() as usize;
    let va: Vec<i64> = (0..size(&da)).map(|i| (i as i64 * 7) % 23 - 11).collect();
    let vb: Vec<i64> = (0..size(&db)).map(|i| (i as i64 * 5) % 17 - 8).collect();
    let text = format!(
        "teg.graph @g {{\n  %a = teg.source @a : {ta}\n  %b = teg.source @b : {tb}\n  %r = teg.sub %a, %b : {tr}\n  %s = teg.sink @r %r : {tr} -> !teg.token\n  teg.sequence_point %s : !teg.token\n}}\n",
        ta = ty(&da, dtype),
        tb = ty(&db, dtype),
        tr = ty(&result, dtype)
    );
    let mut ctx = tapestry::context();
    let module = tapestry::parse_and_verify(&mut ctx, "t.tap", &text).unwrap_or_else(|e| panic!("{text}\n{e:?}"));
    let graph = tapestry::dialects::teg::find_graph(&ctx, module, "g").unwrap();
    let dt = DType::from_name(dtype).unwrap();
    let array = |d: &[(&str, u64, usize)], v: &[i64]| {
        Array::new(d.iter().map(|x| x.1).collect(), Data::from_i64(dt, v)).unwrap()
    };
    let inputs: IndexMap<String, Array> =
        [("a".to_string(), array(&da, &va)), ("b".to_string(), array(&db, &vb))].into();
    let got = evaluate(&ctx, graph, &inputs).unwrap()["r"].to_f64();
    let mut i = 0;
    for n in 0..shape[0] {
        for h in 0..shape[1] {
            for w in 0..shape[2] {
                let c = [n, h, w];
                assert_eq!(got[i], (at(&va, &da, &c) - at(&vb, &db, &c)) as f64, "{text} at {c:?}");
                i += 1;
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]
    #[test]
    fn broadcast_sub_matches_direct(
        shape in [1u64..7, 0u64..9, 0u64..11],
        ha in [hold(), hold(), hold()],
        hb in [hold(), hold(), hold()],
        float in any::<bool>(),
    ) {
        check(shape, ha, hb, if float { "f32" } else { "i32" });
    }
}

#[test]
fn large_broadcasts_split_rows_between_tasks() {
    use Hold::*;
    for (ha, hb) in
        [([Full; 3], [Absent, Absent, Full]), ([Full; 3], [Full, Full, One]), ([Full, One, Full], [Absent, Full, One])]
    {
        check([3, 301, 257], ha, hb, "f32");
        check([2, 70_000, 1], ha, hb, "f64");
    }
}

/// A chain of cell ops computes over the buffers of values that die with each op: the results must be those of
/// fresh buffers, also where a value is still read later or read twice by one op.
#[test]
fn chains_of_cell_ops_compute_in_place() {
    let (h, w) = (300u64, 257u64);
    for dtype in ["f32", "f64"] {
        let (t, row) = (format!("!teg.tensor<[h={h}, w={w}] x {dtype}>"), format!("!teg.tensor<[w={w}] x {dtype}>"));
        let text = format!(
            "teg.graph @g {{\n  %x = teg.source @x : {t}\n  %r = teg.source @r : {row}\n  %a = teg.neg %x\n  %b = teg.abs %a\n  %c = teg.add %b, %a\n  %d = teg.mul %c, %c\n  %e = teg.sub %d, %r\n  %f = teg.relu %e\n  %s = teg.sink @f %f : {t} -> !teg.token\n  %s2 = teg.sink @c %c : {t} -> !teg.token\n  teg.sequence_point %s, %s2 : !teg.token, !teg.token\n}}\n"
        );
        let mut ctx = tapestry::context();
        let module = tapestry::parse_and_verify(&mut ctx, "t.tap", &text).unwrap_or_else(|e| panic!("{text}\n{e:?}"));
        let graph = tapestry::dialects::teg::find_graph(&ctx, module, "g").unwrap();
        let dt = DType::from_name(dtype).unwrap();
        let xv: Vec<f64> = (0..h * w).map(|i| ((i % 17) as f64 - 8.0) / 4.0).collect();
        let rv: Vec<f64> = (0..w).map(|i| (i % 5) as f64).collect();
        let inputs: IndexMap<String, Array> = [
            ("x".to_string(), Array::new(vec![h, w], Data::from_f64(dt, xv.iter().copied())).unwrap()),
            ("r".to_string(), Array::new(vec![w], Data::from_f64(dt, rv.iter().copied())).unwrap()),
        ]
        .into();
        let out = evaluate(&ctx, graph, &inputs).unwrap();
        let round = |v: f64| if dt == DType::F32 { v as f32 as f64 } else { v };
        for (i, (&f, &c)) in out["f"].to_f64().iter().zip(&out["c"].to_f64()).enumerate() {
            let a = round(-xv[i]);
            let want_c = round(a.abs() + a);
            let want_f = round(round(want_c * want_c) - rv[i % w as usize]).max(0.0);
            assert_eq!((c, f), (want_c, want_f), "{dtype} cell {i}");
        }
    }
}
