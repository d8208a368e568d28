//! Reductions against a direct computation: random shapes (empty ones too), random sets of reduced dimensions,
//! every monoid, with and without a mask that broadcasts by name, on whole-number cells so that any summation
//! order gives the same result.

use indexmap::IndexMap;
use proptest::prelude::*;
use tapestry::array::{Array, Data};
use tapestry::dialects::teg::eval::evaluate;

const NAMES: [&str; 3] = ["n", "h", "w"];
const MONOIDS: [&str; 5] = ["sum", "prod", "max", "min", "mean"];

fn ty(dims: &[(&str, u64)], dtype: &str) -> String {
    let d: Vec<String> = dims.iter().map(|(n, e)| format!("{n}={e}")).collect();
    format!("!teg.tensor<[{}] x {dtype}>", d.join(", "))
}

/// The expected result, cell by cell in row-major order of the kept dimensions.
fn direct(shape: [u64; 3], reduced: [bool; 3], monoid: &str, x: &[f64], mark: &dyn Fn([u64; 3]) -> bool) -> Vec<f64> {
    let kept: Vec<usize> = (0..3).filter(|&k| !reduced[k]).collect();
    let out_len: u64 = kept.iter().map(|&k| shape[k]).product();
    let mut out = Vec::new();
    for o in 0..out_len {
        let mut fixed = [0u64; 3];
        let mut rest = o;
        for &k in kept.iter().rev() {
            fixed[k] = rest % shape[k];
            rest /= shape[k];
        }
        let mut taken = Vec::new();
        for i in 0..shape.iter().product::<u64>() {
            let c = [i / (shape[1] * shape[2]), (i / shape[2]) % shape[1], i % shape[2]];
            if kept.iter().all(|&k| c[k] == fixed[k]) && mark(c) {
                taken.push(x[i as usize]);
            }
        }
        out.push(match (monoid, taken.is_empty()) {
            (_, true) => -7.0, // the default
            ("sum", _) => taken.iter().sum(),
            ("prod", _) => taken.iter().product(),
            ("max", _) => taken.iter().cloned().fold(f64::NEG_INFINITY, f64::max),
            ("min", _) => taken.iter().cloned().fold(f64::INFINITY, f64::min),
            _ => taken.iter().sum::<f64>() / taken.len() as f64,
        });
    }
    out
}

fn check(shape: [u64; 3], reduced: [bool; 3], monoid: &str, masked: Option<[bool; 3]>) {
    let dims: Vec<(&str, u64)> = (0..3).map(|k| (NAMES[k], shape[k])).collect();
    let out: Vec<(&str, u64)> = (0..3).filter(|&k| !reduced[k]).map(|k| dims[k]).collect();
    let along: Vec<String> = (0..3).filter(|&k| reduced[k]).map(|k| format!("\"{}\"", NAMES[k])).collect();
    let len = shape.iter().product::<u64>() as usize;
    let x: Vec<f64> = (0..len).map(|i| ((i * 7) % 5) as f64 - 2.0).collect();
    // The mask holds the dimensions `held` (a subsequence of x's): cell c is marked if the sum of its held
    // coordinates is even.
    let held: Vec<usize> = masked.map_or(Vec::new(), |h| (0..3).filter(|&k| h[k]).collect());
    let mark = |c: [u64; 3]| masked.is_none() || held.iter().map(|&k| c[k]).sum::<u64>() % 2 == 0;
    let mask_dims: Vec<(&str, u64)> = held.iter().map(|&k| dims[k]).collect();
    let mask_cells: Vec<bool> = {
        let n = mask_dims.iter().map(|d| d.1).product::<u64>();
        (0..n)
            .map(|i| {
                let mut rest = i;
                let mut sum = 0;
                for d in mask_dims.iter().rev() {
                    sum += rest % d.1;
                    rest /= d.1;
                }
                sum % 2 == 0
            })
            .collect()
    };
    let (operands, types) = match masked {
        Some(_) => ("%x, %m", format!("{}, {}", ty(&dims, "f64"), ty(&mask_dims, "i1"))),
        None => ("%x", ty(&dims, "f64")),
    };
    let text = format!(
        "teg.graph @g {{\n  %x = teg.source @x : {tx}\n  %m = teg.source @m : {tm}\n  %r = teg.reduce {operands} along [{along}] by \"{monoid}\" default -7.0 : {types} -> {tr}\n  %s = teg.sink @r %r : {tr} -> !teg.token\n  teg.sequence_point %s : !teg.token\n}}\n",
        tx = ty(&dims, "f64"),
        tm = ty(&mask_dims, "i1"),
        along = along.join(", "),
        tr = ty(&out, "f64"),
    );
    let mut ctx = tapestry::context();
    let module = tapestry::parse_and_verify(&mut ctx, "t.tap", &text).unwrap_or_else(|e| panic!("{text}\n{e:?}"));
    let graph = tapestry::dialects::teg::find_graph(&ctx, module, "g").unwrap();
    let mask = Array::new(mask_dims.iter().map(|d| d.1).collect(), Data::I1(mask_cells)).unwrap();
    let inputs: IndexMap<String, Array> =
        [("x".into(), Array::new(shape.to_vec(), Data::F64(x.clone())).unwrap()), ("m".into(), mask)].into();
    let got = evaluate(&ctx, graph, &inputs).unwrap_or_else(|e| panic!("{text}\n{e}"))["r"].to_f64();
    let want = direct(shape, reduced, monoid, &x, &mark);
    assert_eq!(got, want, "{text}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
    #[test]
    fn reduce_matches_direct(
        shape in [0u64..4, 0u64..6, 0u64..13],
        reduced in [any::<bool>(), any::<bool>(), any::<bool>()],
        monoid in 0usize..5,
        mask in proptest::option::of([any::<bool>(), any::<bool>(), any::<bool>()]),
    ) {
        check(shape, reduced, MONOIDS[monoid], mask);
    }
}

/// Large enough that the folds split between tasks: kept innermost columns in strips (the rows grouped by eight),
/// reduced innermost runs by result cell.
#[test]
fn large_reductions_split_columns_between_tasks() {
    let (n, h, w) = (2u64, 700u64, 403u64);
    let x: Vec<f64> = (0..n * h * w).map(|i| ((i * 7) % 13) as f64 - 6.0).collect();
    for (along, monoid) in [("h", "sum"), ("h", "max"), ("n", "min"), ("w", "sum"), ("w", "max")] {
        let kept: Vec<(&str, u64)> = [("n", n), ("h", h), ("w", w)].into_iter().filter(|d| d.0 != along).collect();
        let text = format!(
            "teg.graph @g {{\n  %x = teg.source @x : {tx}\n  %r = teg.reduce %x along [\"{along}\"] by \"{monoid}\" : {tx} -> {tr}\n  %s = teg.sink @r %r : {tr} -> !teg.token\n  teg.sequence_point %s : !teg.token\n}}\n",
            tx = ty(&[("n", n), ("h", h), ("w", w)], "f64"),
            tr = ty(&kept, "f64")
        );
        let mut ctx = tapestry::context();
        let module = tapestry::parse_and_verify(&mut ctx, "t.tap", &text).unwrap();
        let graph = tapestry::dialects::teg::find_graph(&ctx, module, "g").unwrap();
        let inputs: IndexMap<String, Array> =
            [("x".into(), Array::new(vec![n, h, w], Data::F64(x.clone())).unwrap())].into();
        let got = evaluate(&ctx, graph, &inputs).unwrap()["r"].to_f64();
        // The cells of each result cell, in index order, folded by hand.
        let fold = |cells: &mut dyn Iterator<Item = f64>| match monoid {
            "sum" => cells.sum::<f64>(),
            "max" => cells.fold(f64::NEG_INFINITY, f64::max),
            _ => cells.fold(f64::INFINITY, f64::min),
        };
        let at = |b: u64, r: u64, c: u64| x[((b * h + r) * w + c) as usize];
        let want: Vec<f64> = match along {
            "h" => (0..n * w).map(|o| fold(&mut (0..h).map(|r| at(o / w, r, o % w)))).collect(),
            "w" => (0..n * h).map(|o| fold(&mut (0..w).map(|c| at(o / h, o % h, c)))).collect(),
            _ => (0..h * w).map(|o| fold(&mut (0..n).map(|b| at(b, o / w, o % w)))).collect(),
        };
        assert_eq!(got, want, "{along} {monoid}");
    }
}
