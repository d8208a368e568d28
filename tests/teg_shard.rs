//! `teg-shard` preserves values: for graphs of contractions, elementwise ops with broadcasting and reductions,
//! every plan of each op alone and many random joint plans on a 2 × 2 mesh (even and uneven splits), the reference
//! evaluator gives the same outputs before and after the rewrite. Inputs are small integers in f32, so sums are
//! exact in any order and the comparison is exact.

use tapestry::array::{Array, Data};
use tapestry::dialects::teg::eval::evaluate;
use tapestry::dialects::teg::find_graph;
use tapestry::dialects::teg::shard_problem::{mesh_of, set_plan};
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
];

/// Small integers, different per input and cell.
fn inputs(ctx: &Context, graph: OpId) -> IndexMap<String, Array> {
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
        let data: Vec<f32> = (0..n).map(|i| ((i * 5 + seed) % 9) as f32 - 4.0).collect();
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

/// The outputs of `text` with `choice[k]` the plan of the k-th op (sources included: a planned source is cut into
/// its devices' boxes), after `teg-shard`.
fn sharded_outputs(text: &str, name: &str, choice: &dyn Fn(usize, usize) -> Option<Plan>) -> IndexMap<String, Array> {
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
        if let Some(plan) = choice(k, maps.index.len()) {
            set_plan(&mut ctx, op, &plan, &maps.index, &machine);
        }
    }
    let values = inputs(&ctx, graph);
    tapestry::run_pipeline(&mut ctx, module, "builtin.module(teg-shard)").unwrap_or_else(|d| panic!("{d:?}"));
    let diags = tapestry::ir::verify::verify(&ctx, module, Default::default());
    assert!(diags.is_empty(), "{diags:?}");
    evaluate(&ctx, graph, &values).unwrap()
}

fn reference(text: &str, name: &str) -> IndexMap<String, Array> {
    sharded_outputs(text, name, &|_, _| None)
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
                let got = sharded_outputs(text, name, &|k, dims| {
                    let all = plans(dims);
                    (k == op && p < all.len()).then(|| all[p].clone())
                });
                assert_eq!(got, want, "{name}: op {op}, plan {p}");
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
            let got = sharded_outputs(text, name, &|k, dims| {
                let all = plans(dims);
                Some(all[(picks[k % picks.len()] % all.len() as u64) as usize].clone())
            });
            assert_eq!(got, want, "{name}: plans {picks:?}");
        }
    }
}
