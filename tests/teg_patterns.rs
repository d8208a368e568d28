//! The view patterns of `canonicalize` keep values: random chains of slices (forward, strided, of whole
//! dimensions), concats and permutes evaluate exactly the same through the reference evaluator before and after
//! `canonicalize`, and the chains get no longer.

use proptest::prelude::*;
use tapestry::dialects::teg::eval::evaluate;
use tapestry::dialects::teg::find_graph;
use tapestry::indexmap::IndexMap;

/// One step of a chain on the current `[r, c]` value.
#[derive(Clone, Copy, Debug)]
enum Step {
    /// A slice along `c` or `r` (`rows`): start, step and count picked within the extent from three numbers.
    Slice { rows: bool, start: u64, step: u64, count: u64 },
    /// A concat along `c` with a fresh `[r, c = n]` tensor, on the left or the right.
    Concat { n: u64, left: bool },
    /// Two permutes, to `[c, r]` and back.
    PermuteTwice,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (any::<bool>(), 0u64..8, 1u64..4, 0u64..8).prop_map(|(rows, start, step, count)| Step::Slice {
            rows,
            start,
            step,
            count
        }),
        (1u64..4, any::<bool>()).prop_map(|(n, left)| Step::Concat { n, left }),
        Just(Step::PermuteTwice),
    ]
}

/// The chain's graph text, and its number of ops.
fn chain(rows: u64, cols: u64, steps: &[Step]) -> String {
    let ty = |r: u64, c: u64| format!("!teg.tensor<[r={r}, c={c}] x f32>");
    let mut body = vec![format!("  %v0 = teg.random seed 1 : {}", ty(rows, cols))];
    let (mut r, mut c) = (rows, cols);
    for (i, s) in steps.iter().enumerate() {
        let (cur, next) = (format!("%v{i}"), format!("%v{}", i + 1));
        match *s {
            Step::Slice { rows, start, step, count } => {
                let n = if rows { r } else { c };
                let start = start.min(n);
                let count = count.min((n - start).div_ceil(step));
                let stop = if count == 0 { start } else { start + (count - 1) * step + 1 };
                let dim = if rows { "r" } else { "c" };
                body.push(format!(
                    "  {next} = teg.slice {cur} along \"{dim}\" from {start} to {stop} step {step} : {}",
                    ty(r, c)
                ));
                if rows {
                    r = count
                } else {
                    c = count
                }
            }
            Step::Concat { n, left } => {
                body.push(format!("  %f{i} = teg.random seed {} : {}", i + 2, ty(r, n)));
                let (a, b, ta, tb) = match left {
                    true => (format!("%f{i}"), cur, ty(r, n), ty(r, c)),
                    false => (cur, format!("%f{i}"), ty(r, c), ty(r, n)),
                };
                body.push(format!("  {next} = teg.concat {a}, {b} along \"c\" : {ta}, {tb}"));
                c += n;
            }
            Step::PermuteTwice => {
                body.push(format!("  %p{i} = teg.permute {cur} to [\"c\", \"r\"] : {}", ty(r, c)));
                body.push(format!(
                    "  {next} = teg.permute %p{i} to [\"r\", \"c\"] : !teg.tensor<[c={c}, r={r}] x f32>"
                ));
            }
        }
    }
    let last = format!("%v{}", steps.len());
    body.push(format!("  %s = teg.sink @y {last} : {} -> !teg.token", ty(r, c)));
    body.push("  teg.sequence_point %s : !teg.token".into());
    format!("teg.graph @g {{\n{}\n}}\n", body.join("\n"))
}

/// The outputs of `text`, after `pipeline` when given, and the number of ops in the graph then.
fn run(text: &str, pipeline: Option<&str>) -> (IndexMap<String, tapestry::array::Array>, usize) {
    let mut ctx = tapestry::context();
    let module = tapestry::parse_and_verify(&mut ctx, "g.tap", text).unwrap_or_else(|d| panic!("{text}\n{d:?}"));
    if let Some(p) = pipeline {
        tapestry::run_pipeline(&mut ctx, module, p).unwrap_or_else(|d| panic!("{text}\n{d:?}"));
    }
    let graph = find_graph(&ctx, module, "g").unwrap();
    let ops = tapestry::ir::walk::preorder(&ctx.body, graph).len();
    (evaluate(&ctx, graph, &IndexMap::new()).unwrap(), ops)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn view_patterns_keep_values(rows in 1u64..5, cols in 1u64..7, steps in proptest::collection::vec(step(), 1..7)) {
        let text = chain(rows, cols, &steps);
        let (want, before) = run(&text, None);
        let (got, after) = run(&text, Some("builtin.module(canonicalize)"));
        prop_assert_eq!(got, want, "{}", text);
        prop_assert!(after <= before, "{} ops became {}:\n{}", before, after, text);
    }
}
