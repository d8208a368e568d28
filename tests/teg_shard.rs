//! `teg-shard` preserves values: for graphs of contractions, elementwise ops with broadcasting and reductions,
//! every plan of each op alone and many random joint plans on a 2 × 2 mesh (even and uneven splits), the reference
//! evaluator gives the same outputs before and after the rewrite. Inputs are small integers in f32, so sums are
//! exact in any order and the comparison is exact; one property test uses multiples of 0.1 and a stated tolerance.
//! The same plans also run through `teg-keep-partial` (partial sums kept across adds, subs and negs), and random
//! plans of the sources through `teg-propagate-shard`.

use proptest::prelude::*;
use tapestry::array::{Array, Data};
use tapestry::dialects::teg::eval::evaluate;
use tapestry::dialects::teg::find_graph;
use tapestry::dialects::teg::shard_plan::{set_placement, set_plan, Placement};
use tapestry::dialects::teg::shard_problem::mesh_of;
use tapestry::indexmap::IndexMap;
use tapestry::interfaces::sharding::index_maps_of;
use tapestry::ir::{Context, OpId};
use tapestry::shard::{AxisSet, Plan};

const GRAPHS: &[(&str, &str)] = &[
    (
        "mlp",
        r#"teg.graph @mlp attributes {teg.mesh = {axes = ["x", "y"], shape = [2, 2]}} {
  %x = teg.source @x : !teg.tensor<[b=4, k=6] x f32>
  %w = teg.source @w : !teg.tensor<[k=6, n=3] x f32>
  %c = teg.source @c : !teg.tensor<[n=3] x f32>
  %h = teg.matmul %x, %w : !teg.tensor<[b=4, k=6] x f32>, !teg.tensor<[k=6, n=3] x f32>
  %a = teg.add %h, %c
  %r = teg.relu %a
  %t = teg.reduce %r along ["b"] by "max" : !teg.tensor<[b=4, n=3] x f32>
  %u = teg.reduce %r along ["n"] by "sum" : !teg.tensor<[b=4, n=3] x f32>
  %s = teg.sink @t %t : !teg.tensor<[n=3] x f32> -> !teg.token
  %s2 = teg.sink @u %u : !teg.tensor<[b=4] x f32> -> !teg.token
  teg.sequence_point %s, %s2 : !teg.token, !teg.token
}"#,
    ),
    (
        "einsum",
        r#"teg.graph @einsum attributes {teg.mesh = {axes = ["x", "y"], shape = [2, 2]}} {
  %p = teg.source @p : !teg.tensor<[i=3, j=5, k=2] x f32>
  %q = teg.source @q : !teg.tensor<[k=2, j=5, l=4] x f32>
  %e = teg.contract %p, %q : !teg.tensor<[i=3, j=5, k=2] x f32>, !teg.tensor<[k=2, j=5, l=4] x f32> -> !teg.tensor<[l=4, i=3] x f32>
  %m = teg.mul %e, %e
  %s = teg.sink @e %m : !teg.tensor<[l=4, i=3] x f32> -> !teg.token
  teg.sequence_point %s : !teg.token
}"#,
    ),
    (
        "residual",
        r#"teg.graph @residual attributes {teg.mesh = {axes = ["x", "y"], shape = [2, 2]}} {
  %x1 = teg.source @x1 : !teg.tensor<[b=4, k=6] x f32>
  %x2 = teg.source @x2 : !teg.tensor<[b=4, k=6] x f32>
  %w1 = teg.source @w1 : !teg.tensor<[k=6, n=3] x f32>
  %w2 = teg.source @w2 : !teg.tensor<[k=6, n=3] x f32>
  %p = teg.matmul %x1, %w1 : !teg.tensor<[b=4, k=6] x f32>, !teg.tensor<[k=6, n=3] x f32>
  %q = teg.matmul %x2, %w2 : !teg.tensor<[b=4, k=6] x f32>, !teg.tensor<[k=6, n=3] x f32>
  %d = teg.sub %p, %q
  %n = teg.neg %d
  %s = teg.add %n, %p
  %f = teg.full 2.0 : !teg.tensor<[b=4, n=3] x f32>
  %m = teg.mul %s, %f
  %o = teg.sink @y %m : !teg.tensor<[b=4, n=3] x f32> -> !teg.token
  teg.sequence_point %o : !teg.token
}"#,
    ),
];

/// Keeps partial results across linear ops after splitting.
const KEEP_PARTIAL: &str = "builtin.module(teg-shard, teg-keep-partial, cse)";

/// Small integers, different per input and cell.
fn inputs(ctx: &Context, graph: OpId) -> IndexMap<String, Array> {
    inputs_scaled(ctx, graph, 1.0)
}

/// The inputs of [`inputs`] times `scale` (not exactly representable sums for a scale like 0.1).
fn inputs_scaled(ctx: &Context, graph: OpId, scale: f32) -> IndexMap<String, Array> {
    let mut out = IndexMap::new();
    for op in tapestry::ir::walk::preorder(&ctx.body, graph) {
        if ctx.op_name(op) != "teg.source" {
            continue;
        }
        let name = ctx.attr_data(ctx.op_attr(op, "name").unwrap()).as_str().unwrap().to_string();
        let v = ctx.body.results(op).next().unwrap();
        let t = tapestry::dialects::teg::tensor_type::as_tensor(ctx, ctx.body.value_type(v)).unwrap();
        let n = t.size() as usize;
        let seed = name.len() * 7 + 3;
        let data: Vec<f32> = (0..n).map(|i| (((i * 5 + seed) % 9) as f32 - 4.0) * scale).collect();
        out.insert(name, Array::new(t.shape(), Data::F32(data)).unwrap());
    }
    out
}

/// Every plan of an op with `dims` index dimensions on two axes: each axis on one dimension or none.
fn plans(dims: usize) -> Vec<Plan> {
    let mut out = Vec::new();
    for x in 0..=dims {
        for y in 0..=dims {
            let mut p = Plan::replicated(dims);
            if x > 0 {
                p.0[x - 1] = p.0[x - 1].union(AxisSet::one(0));
            }
            if y > 0 {
                p.0[y - 1] = p.0[y - 1].union(AxisSet::one(1));
            }
            out.push(p);
        }
    }
    out
}

/// Explicit part sizes for `plan` over `index` from random `cuts`: each split dimension's extent cut at sorted
/// points (parts may be empty).
fn random_sizes(plan: &Plan, index: &[(String, u64)], mesh: &tapestry::machine::Mesh, cuts: &[u64]) -> Placement {
    let sizes = plan
        .0
        .iter()
        .zip(index)
        .enumerate()
        .map(|(i, (set, d))| {
            let parts = set.parts(mesh) as usize;
            if parts <= 1 {
                return None;
            }
            let mut at: Vec<u64> = (0..parts - 1).map(|j| cuts[(i * 7 + j) % cuts.len()] % (d.1 + 1)).collect();
            at.sort_unstable();
            at.push(d.1);
            Some(at.iter().scan(0, |prev, &c| Some(c - std::mem::replace(prev, c))).collect())
        })
        .collect();
    Placement { plan: plan.clone(), sizes }
}

/// The outputs of `text` with `choice[k]` the plan of the k-th op (sources included: a planned source is cut into
/// its devices' boxes), after `teg-shard`; with `cuts`, each split dimension in parts of random explicit sizes.
fn sharded_outputs(
    text: &str,
    name: &str,
    choice: &dyn Fn(usize, usize) -> Option<Plan>,
    cuts: Option<&[u64]>,
) -> IndexMap<String, Array> {
    planned_outputs(text, name, choice, cuts, "builtin.module(teg-shard)")
}

/// The outputs of `text` with the plans of [`sharded_outputs`], after `pipeline`.
fn planned_outputs(
    text: &str,
    name: &str,
    choice: &dyn Fn(usize, usize) -> Option<Plan>,
    cuts: Option<&[u64]>,
    pipeline: &str,
) -> IndexMap<String, Array> {
    let mut ctx = tapestry::context();
    let module = tapestry::parse_and_verify(&mut ctx, "g.tap", text).unwrap();
    let graph = find_graph(&ctx, module, name).unwrap();
    let machine = mesh_of(&ctx, graph).unwrap().unwrap();
    let ops: Vec<OpId> = tapestry::ir::walk::preorder(&ctx.body, graph)
        .into_iter()
        .filter(|&op| !matches!(ctx.op_name(op), "teg.sink" | "teg.sequence_point" | "teg.graph"))
        .collect();
    for (k, &op) in ops.iter().enumerate() {
        let maps = index_maps_of(&ctx, op).unwrap();
        // A plan that splits a dimension into more parts than its extent is an error; such picks stay unplanned.
        let valid = |p: &Plan| p.0.iter().zip(&maps.index).all(|(set, d)| set.parts(machine.mesh()) <= d.1);
        let Some(plan) = choice(k, maps.index.len()).filter(valid) else { continue };
        match cuts {
            Some(cuts) => set_placement(
                &mut ctx,
                op,
                &random_sizes(&plan, &maps.index, machine.mesh(), cuts),
                &maps.index,
                &machine,
            ),
            None => set_plan(&mut ctx, op, &plan, &maps.index, &machine),
        }
    }
    let values = inputs(&ctx, graph);
    tapestry::run_pipeline(&mut ctx, module, pipeline).unwrap_or_else(|d| panic!("{d:?}"));
    let diags = tapestry::ir::verify::verify(&ctx, module, Default::default());
    assert!(diags.is_empty(), "{diags:?}");
    evaluate(&ctx, graph, &values).unwrap()
}

fn reference(text: &str, name: &str) -> IndexMap<String, Array> {
    sharded_outputs(text, name, &|_, _| None, None)
}

/// The positions of the sources among the ops [`sharded_outputs`] plans (graph `@g`).
fn sources_of(text: &str) -> Vec<usize> {
    let mut ctx = tapestry::context();
    let module = tapestry::parse_and_verify(&mut ctx, "g.tap", text).unwrap();
    let graph = find_graph(&ctx, module, "g").unwrap();
    let skip = ["teg.sink", "teg.sequence_point", "teg.graph"];
    let ops = tapestry::ir::walk::preorder(&ctx.body, graph).into_iter().filter(|&op| !skip.contains(&ctx.op_name(op)));
    ops.enumerate().filter(|(_, op)| ctx.op_name(*op) == "teg.source").map(|(k, _)| k).collect()
}

fn ops_of(text: &str, name: &str) -> usize {
    let mut ctx = tapestry::context();
    let module = tapestry::parse_and_verify(&mut ctx, "g.tap", text).unwrap();
    let graph = find_graph(&ctx, module, name).unwrap();
    let skip = ["teg.sink", "teg.sequence_point", "teg.graph"];
    tapestry::ir::walk::preorder(&ctx.body, graph).into_iter().filter(|&op| !skip.contains(&ctx.op_name(op))).count()
}

#[test]
fn every_plan_of_each_op_alone_keeps_values() {
    for (name, text) in GRAPHS {
        let want = reference(text, name);
        for op in 0..ops_of(text, name) {
            for (p, _) in plans(4).iter().enumerate() {
                let choice = |k: usize, dims: usize| {
                    let all = plans(dims);
                    (k == op && p < all.len()).then(|| all[p].clone())
                };
                assert_eq!(sharded_outputs(text, name, &choice, None), want, "{name}: op {op}, plan {p}");
                let kept = planned_outputs(text, name, &choice, None, KEEP_PARTIAL);
                assert_eq!(kept, want, "{name}: partials kept, op {op}, plan {p}");
            }
        }
    }
}

#[test]
fn random_joint_plans_keep_values() {
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for (name, text) in GRAPHS {
        let want = reference(text, name);
        for _ in 0..25 {
            let picks: Vec<u64> = (0..8).map(|_| next()).collect();
            let choice = |k: usize, dims: usize| {
                let all = plans(dims);
                Some(all[(picks[k % picks.len()] % all.len() as u64) as usize].clone())
            };
            assert_eq!(sharded_outputs(text, name, &choice, None), want, "{name}: plans {picks:?}");
            assert_eq!(sharded_outputs(text, name, &choice, Some(&picks)), want, "{name}: uneven {picks:?}");
            let kept = planned_outputs(text, name, &choice, None, KEEP_PARTIAL);
            assert_eq!(kept, want, "{name}: partials kept, plans {picks:?}");
        }
    }
}

/// One step of a random graph, applied to the current `[b, d_i]` value.
#[derive(Clone, Copy, Debug)]
enum Step {
    /// `matmul` by a `[d_i, d_{i+1}]` weight of width `w`.
    Linear(u64),
    /// `matmul`, a broadcast bias add and `relu`.
    LinearBiasRelu(u64),
    /// `linear` (matmul and bias in one op), then `relu`.
    AffineRelu(u64),
    /// `contract` into `[d_{i+1}, b]`, then `permute` back (a view).
    ContractPermute(u64),
    /// `slice` off the first column (a view), when there are two.
    Slice,
    /// A `max` over `d_i`, broadcast back and subtracted.
    MaxSubtract,
    /// `reverse` along `b`.
    Reverse,
    /// `select` one column, `unsqueeze` it back and `broadcast` it over the columns.
    SelectBroadcast(u64),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (1u64..5).prop_map(Step::Linear),
        (1u64..5).prop_map(Step::LinearBiasRelu),
        (1u64..5).prop_map(Step::AffineRelu),
        (1u64..5).prop_map(Step::ContractPermute),
        Just(Step::Slice),
        Just(Step::MaxSubtract),
        Just(Step::Reverse),
        (0u64..8).prop_map(Step::SelectBroadcast),
    ]
}

/// The text of a graph on a `rows × cols` mesh: `x [b, d0]` through `steps`, sunk with its column sums; and,
/// with `conv = Some((stride, dilation, padding))`, a 2-channel convolution of an image, a relu and a "same"
/// 3 × 3 convolution sunk beside it.
fn random_graph(rows: u64, cols: u64, b: u64, d0: u64, steps: &[Step], conv: Option<(u64, u64, u64)>) -> String {
    let mut body = vec![format!("  %x = teg.source @x : !teg.tensor<[b={b}, d0={d0}] x f32>")];
    let (mut cur, mut width, mut dim) = ("%x".to_string(), d0, 0);
    for (i, s) in steps.iter().enumerate() {
        let t = |d: usize, w: u64| format!("!teg.tensor<[b={b}, d{d}={w}] x f32>");
        let (from, next) = (t(dim, width), dim + 1);
        match *s {
            Step::Linear(w) | Step::LinearBiasRelu(w) => {
                body.push(format!("  %w{i} = teg.source @w{i} : !teg.tensor<[d{dim}={width}, d{next}={w}] x f32>"));
                body.push(format!(
                    "  %m{i} = teg.matmul {cur}, %w{i} : {from}, !teg.tensor<[d{dim}={width}, d{next}={w}] x f32>"
                ));
                cur = format!("%m{i}");
                if let Step::LinearBiasRelu(_) = s {
                    body.push(format!("  %c{i} = teg.source @c{i} : !teg.tensor<[d{next}={w}] x f32>"));
                    body.push(format!("  %a{i} = teg.add {cur}, %c{i}"));
                    body.push(format!("  %r{i} = teg.relu %a{i}"));
                    cur = format!("%r{i}");
                }
                (width, dim) = (w, next);
            }
            Step::AffineRelu(w) => {
                let wt = format!("!teg.tensor<[d{dim}={width}, d{next}={w}] x f32>");
                let bt = format!("!teg.tensor<[d{next}={w}] x f32>");
                body.push(format!("  %w{i} = teg.source @w{i} : {wt}"));
                body.push(format!("  %c{i} = teg.source @c{i} : {bt}"));
                body.push(format!("  %l{i} = teg.linear {cur}, %w{i}, %c{i} : {from}, {wt}, {bt}"));
                body.push(format!("  %r{i} = teg.relu %l{i}"));
                cur = format!("%r{i}");
                (width, dim) = (w, next);
            }
            Step::ContractPermute(w) => {
                let wt = format!("!teg.tensor<[d{dim}={width}, d{next}={w}] x f32>");
                body.push(format!("  %w{i} = teg.source @w{i} : {wt}"));
                body.push(format!(
                    "  %e{i} = teg.contract {cur}, %w{i} : {from}, {wt} -> !teg.tensor<[d{next}={w}, b={b}] x f32>"
                ));
                body.push(format!(
                    "  %p{i} = teg.permute %e{i} to [\"b\", \"d{next}\"] : !teg.tensor<[d{next}={w}, b={b}] x f32>"
                ));
                cur = format!("%p{i}");
                (width, dim) = (w, next);
            }
            Step::Slice if width > 1 => {
                body.push(format!("  %v{i} = teg.slice {cur} along \"d{dim}\" from 1 to {width} step 1 : {from}"));
                cur = format!("%v{i}");
                width -= 1;
            }
            Step::Slice => {}
            Step::Reverse => {
                body.push(format!("  %q{i} = teg.reverse {cur} along [\"b\"] : {from}"));
                cur = format!("%q{i}");
            }
            Step::SelectBroadcast(k) => {
                let k = k % width;
                body.push(format!("  %t{i} = teg.select {cur} along \"d{dim}\" at {k} : {from}"));
                body.push(format!("  %u{i} = teg.unsqueeze %t{i} as \"d{dim}\" at 1 : !teg.tensor<[b={b}] x f32>"));
                let one = format!("!teg.tensor<[b={b}, d{dim}=1] x f32>");
                body.push(format!("  %o{i} = teg.broadcast %u{i} along \"d{dim}\" to {width} : {one}"));
                cur = format!("%o{i}");
            }
            Step::MaxSubtract => {
                body.push(format!("  %x{i} = teg.reduce {cur} along [\"d{dim}\"] by \"max\" : {from}"));
                body.push(format!("  %d{i} = teg.sub {cur}, %x{i}"));
                cur = format!("%d{i}");
            }
        }
    }
    body.push(format!(
        "  %sum = teg.reduce {cur} along [\"b\"] by \"sum\" : !teg.tensor<[b={b}, d{dim}={width}] x f32>"
    ));
    body.push(format!("  %s1 = teg.sink @y {cur} : !teg.tensor<[b={b}, d{dim}={width}] x f32> -> !teg.token"));
    body.push(format!("  %s2 = teg.sink @sum %sum : !teg.tensor<[d{dim}={width}] x f32> -> !teg.token"));
    let mut points = vec!["%s1", "%s2"];
    if let Some((s, d, p)) = conv {
        let img = "!teg.tensor<[n=1, c=2, h=7, w=6] x f32>";
        let k = "!teg.tensor<[o=2, c=2, kh=2, kw=3] x f32>";
        body.push(format!("  %img = teg.source @img : {img}"));
        body.push(format!("  %k = teg.source @k : {k}"));
        body.push(format!(
            "  %conv = teg.conv2d %img, %k strides [{s}, {s}] dilations [{d}, {d}] padding [{p}, {p}] : {img}, {k}"
        ));
        body.push("  %cr = teg.relu %conv".to_string());
        let (h, w) = ((7 + 2 * p - d - 1) / s + 1, (6 + 2 * p - 2 * d - 1) / s + 1);
        // A second, "same" convolution reads the first one's output: split spatially, its windows need halos.
        let y = format!("!teg.tensor<[n=1, o=2, h={h}, w={w}] x f32>");
        let k2 = "!teg.tensor<[o2=3, o=2, kh=3, kw=3] x f32>";
        body.push(format!("  %k2 = teg.source @k2 : {k2}"));
        body.push(format!("  %conv2 = teg.conv2d %cr, %k2 strides [1, 1] dilations [1, 1] padding [1, 1] : {y}, {k2}"));
        body.push(format!(
            "  %s3 = teg.sink @conv %conv2 : !teg.tensor<[n=1, o2=3, h={h}, w={w}] x f32> -> !teg.token"
        ));
        points.push("%s3");
    }
    let tokens = vec!["!teg.token"; points.len()].join(", ");
    body.push(format!("  teg.sequence_point {} : {tokens}", points.join(", ")));
    let mesh = format!("{{teg.mesh = {{axes = [\"x\", \"y\"], shape = [{rows}, {cols}]}}}}");
    format!("teg.graph @g attributes {mesh} {{\n{}\n}}\n", body.join("\n"))
}

/// The outputs of `text` (graph `@g`) after `pipeline`, on the inputs of [`inputs`].
fn run(text: &str, pipeline: Option<&str>) -> IndexMap<String, Array> {
    run_scaled(text, pipeline, 1.0)
}

/// [`run`] on inputs times `scale`.
fn run_scaled(text: &str, pipeline: Option<&str>, scale: f32) -> IndexMap<String, Array> {
    let mut ctx = tapestry::context();
    let module = tapestry::parse_and_verify(&mut ctx, "g.tap", text).unwrap_or_else(|d| panic!("{text}\n{d:?}"));
    let graph = find_graph(&ctx, module, "g").unwrap();
    let values = inputs_scaled(&ctx, graph, scale);
    if let Some(p) = pipeline {
        tapestry::run_pipeline(&mut ctx, module, p).unwrap_or_else(|d| panic!("{text}\n{d:?}"));
        let diags = tapestry::ir::verify::verify(&ctx, module, Default::default());
        assert!(diags.is_empty(), "{diags:?}");
    }
    evaluate(&ctx, graph, &values).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Random graphs (matmul, matmul + bias + relu and linear + relu stacks, einsums with a permute, slices,
    /// reverses, a column selected and broadcast back, max-subtract reductions, a strided and dilated convolution
    /// and a "same" one) on 2 × 2 and 3 × 1 meshes: the plans `teg-auto-shard` picks for a random seed, carried out
    /// by `teg-shard` (after `teg-conv-dense` or not, followed by `teg-keep-partial` or not), give exactly the
    /// values of the graph as written.
    #[test]
    fn random_graphs_keep_values_through_auto_shard(
        mesh in prop_oneof![Just((2u64, 2u64)), Just((3, 1))],
        b in 1u64..7,
        d0 in 1u64..6,
        steps in proptest::collection::vec(step(), 1..5),
        conv in proptest::option::of((1u64..3, 1u64..3, 0u64..2)),
        seed in 0u64..1000,
        dense in any::<bool>(),
        keep in any::<bool>(),
    ) {
        let text = random_graph(mesh.0, mesh.1, b, d0, &steps, conv);
        let want = run(&text, None);
        let first = if dense { "teg-conv-dense, " } else { "" };
        let last = if keep { ", teg-keep-partial, cse" } else { "" };
        let search = format!("teg-auto-shard{{seed={seed} max-rounds=4 budget-ms=600000}}");
        let pipeline = format!("builtin.module({first}{search}, teg-shard{last})");
        prop_assert_eq!(run(&text, Some(&pipeline)), want, "{}", text);
    }

    /// The same graphs with a random plan on every op (`teg-shard` carries out any plan of the ops it splits; the
    /// others keep none).
    #[test]
    fn random_graphs_keep_values_under_random_plans(
        b in 1u64..7,
        d0 in 1u64..6,
        steps in proptest::collection::vec(step(), 1..5),
        conv in proptest::option::of((1u64..3, 1u64..3, 0u64..2)),
        picks in proptest::collection::vec(0usize..1000, 32),
        cuts in proptest::option::of(proptest::collection::vec(0u64..1000, 16)),
    ) {
        let text = random_graph(2, 2, b, d0, &steps, conv);
        let want = run(&text, None);
        let choice = |k: usize, dims: usize| {
            let all = plans(dims);
            Some(all[picks[k % picks.len()] % all.len()].clone())
        };
        let got = sharded_outputs(&text, "g", &choice, cuts.as_deref());
        prop_assert_eq!(got, want, "{}", text);
    }

    /// The same graphs with random plans on the sources only, propagated to the other ops by
    /// `teg-propagate-shard`, then split.
    #[test]
    fn random_graphs_keep_values_through_propagation(
        b in 1u64..7,
        d0 in 1u64..6,
        steps in proptest::collection::vec(step(), 1..5),
        conv in proptest::option::of((1u64..3, 1u64..3, 0u64..2)),
        picks in proptest::collection::vec(0usize..1000, 8),
    ) {
        let text = random_graph(2, 2, b, d0, &steps, conv);
        let want = run(&text, None);
        let sources = sources_of(&text);
        let choice = |k: usize, dims: usize| {
            let all = plans(dims);
            sources.contains(&k).then(|| all[picks[k % picks.len()] % all.len()].clone())
        };
        let pipeline = "builtin.module(teg-propagate-shard, teg-shard)";
        prop_assert_eq!(planned_outputs(&text, "g", &choice, None, pipeline), want, "{}", text);
    }

    /// On inputs whose sums are not exact in f32 (multiples of 0.1), the split graph agrees within a relative
    /// tolerance of 1e-5 (sums of split reduced dimensions add in another order).
    #[test]
    fn random_graphs_agree_on_floats_within_tolerance(
        b in 1u64..7,
        d0 in 1u64..6,
        steps in proptest::collection::vec(step(), 1..5),
        seed in 0u64..1000,
    ) {
        let text = random_graph(2, 2, b, d0, &steps, Some((1, 1, 1)));
        let want = run_scaled(&text, None, 0.1);
        let pipeline = format!("builtin.module(teg-auto-shard{{seed={seed} max-rounds=4 budget-ms=600000}}, teg-shard)");
        let got = run_scaled(&text, Some(&pipeline), 0.1);
        for (name, w) in &want {
            let (w, g) = (w.to_f64(), got[name].to_f64());
            prop_assert_eq!(w.len(), g.len());
            for (x, y) in w.iter().zip(&g) {
                prop_assert!((x - y).abs() <= 1e-5 * (1.0 + x.abs()), "{}: {} vs {}\n{}", name, x, y, text);
            }
        }
    }
}
