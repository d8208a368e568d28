//! TEG rewrites keep values. The view patterns of `canonicalize`: random chains of slices (forward, strided, of
//! whole dimensions), concats and permutes evaluate exactly the same through the reference evaluator before and
//! after `canonicalize`, and the chains get no longer. `teg-fuse-linear`: random matmul + bias + relu stacks agree
//! within a stated tolerance.

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

/// A stack of `widths.len() - 1` layers `matmul + bias (on the left when flipped) + relu` on random data.
fn dense_stack(b: u64, widths: &[u64], flips: &[bool]) -> String {
    let mut body = vec![format!("  %v0 = teg.random seed 1 : !teg.tensor<[b={b}, d0={}] x f32>", widths[0])];
    for (i, pair) in widths.windows(2).enumerate() {
        let (n, m, next) = (pair[0], pair[1], i + 1);
        let wt = format!("!teg.tensor<[d{i}={n}, d{next}={m}] x f32>");
        body.push(format!("  %w{i} = teg.random seed {} : {wt}", 10 + i));
        body.push(format!("  %c{i} = teg.random seed {} : !teg.tensor<[d{next}={m}] x f32>", 100 + i));
        body.push(format!("  %m{i} = teg.matmul %v{i}, %w{i} : !teg.tensor<[b={b}, d{i}={n}] x f32>, {wt}"));
        let (l, r) = if flips[i % flips.len()] {
            (format!("%c{i}"), format!("%m{i}"))
        } else {
            (format!("%m{i}"), format!("%c{i}"))
        };
        body.push(format!("  %a{i} = teg.add {l}, {r}"));
        body.push(format!("  %v{next} = teg.relu %a{i}"));
    }
    let last = widths.len() - 1;
    body.push(format!(
        "  %s = teg.sink @y %v{last} : !teg.tensor<[b={b}, d{last}={}] x f32> -> !teg.token",
        widths[last]
    ));
    body.push("  teg.sequence_point %s : !teg.token".into());
    format!("teg.graph @g {{\n{}\n}}\n", body.join("\n"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// `teg-fuse-linear` turns every matmul + bias of random stacks into a linear and keeps the values within a
    /// relative 1e-5 (the linear adds the bias before the products, in another order).
    #[test]
    fn fuse_linear_keeps_values(
        b in 1u64..5,
        widths in proptest::collection::vec(1u64..6, 2..5),
        flips in proptest::collection::vec(any::<bool>(), 1..4),
    ) {
        let text = dense_stack(b, &widths, &flips);
        let (want, _) = run(&text, None);
        let mut ctx = tapestry::context();
        let module = tapestry::parse_and_verify(&mut ctx, "g.tap", &text).unwrap();
        tapestry::run_pipeline(&mut ctx, module, "builtin.module(teg-fuse-linear)").unwrap();
        let graph = find_graph(&ctx, module, "g").unwrap();
        let names: Vec<&str> = tapestry::ir::walk::preorder(&ctx.body, graph).into_iter().map(|op| ctx.op_name(op)).collect();
        prop_assert_eq!(names.iter().filter(|n| **n == "teg.linear").count(), widths.len() - 1);
        prop_assert!(!names.contains(&"teg.matmul"));
        let got = evaluate(&ctx, graph, &IndexMap::new()).unwrap();
        let (w, g) = (want["y"].to_f64(), got["y"].to_f64());
        for (x, y) in w.iter().zip(&g) {
            prop_assert!((x - y).abs() <= 1e-5 * (1.0 + x.abs()), "{} vs {}\n{}", x, y, text);
        }
    }
}
