//! User blocks whose body is elementwise on one-cell tiles run once over vectors of every index point's cells;
//! they must give exactly what running the body point by point gives. The per-point run is forced by a reverse
//! of the one-cell result (a no-op the vectorized path does not take).

use indexmap::IndexMap;
use proptest::prelude::*;
use tapestry::array::{Array, Data};
use tapestry::dialects::teg::eval::evaluate;

const T: &str = "!teg.tensor<[h=1, w=1] x f32>";

/// A random elementwise body over the tiles `%a` (`[h=1, w=1]`) and `%b` (`[w=1]`), ending in `%z` (`[h=1, w=1]`).
fn body(ops: &[u8]) -> Vec<String> {
    let mut lines = vec![format!("%z0 = teg.add %a, %b : {T}")];
    for (i, op) in ops.iter().enumerate() {
        let (p, z) = (format!("%z{i}"), format!("%z{}", i + 1));
        lines.push(match op % 7 {
            0 => format!("{z} = teg.neg {p} : {T}"),
            1 => format!("{z} = teg.mul {p}, %a : {T}"),
            2 => format!("{z} = teg.max {p}, %b : {T}"),
            3 => format!("{z} = teg.clip {p} min -1.0 max 2.5 : {T}"),
            4 => format!("%c{i} = teg.full 0.75 : {T}\n    {z} = teg.sub {p}, %c{i} : {T}"),
            5 => format!(
                "%k{i} = teg.compare \"lt\" {p}, %a : {T}, {T} -> !teg.tensor<[h=1, w=1] x i1>\n    {z} = teg.where %k{i}, {p}, %a : !teg.tensor<[h=1, w=1] x i1>, {T}, {T} -> {T}"
            ),
            _ => format!("{z} = teg.abs {p} : {T}"),
        });
    }
    lines
}

fn graph(ops: &[u8], reduce: Option<&str>, per_point: bool) -> String {
    let mut lines = body(ops);
    let mut last = format!("%z{}", ops.len());
    if per_point {
        lines.push(format!("%rev = teg.reverse {last} along [\"h\"] : {T} -> {T}"));
        last = "%rev".into();
    }
    let (out, out_map, out_box, tail) = match reduce {
        Some(m) => {
            lines.push(format!("%q = teg.squeeze {last} along \"w\" : {T} -> !teg.tensor<[h=1] x f32>"));
            ("!teg.tensor<[h=3] x f32>", "affine_map<(i, j) -> (i)>", "[1]", format!(" reduce [\"j\"] by \"{m}\""))
        }
        None => ("!teg.tensor<[h=3, w=4] x f32>", "affine_map<(i, j) -> (i, j)>", "[1, 1]", String::new()),
    };
    let yielded = if reduce.is_some() { ("%q", "!teg.tensor<[h=1] x f32>") } else { (last.as_str(), T) };
    format!(
        "teg.graph @g {{\n  %x = teg.source @x : !teg.tensor<[h=3, w=4] x f32>\n  %y = teg.source @y : !teg.tensor<[w=4] x f32>\n  %r = teg.block @b %x, %y over [\"i\", \"j\"] [3, 4] maps [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, {out_map}] boxes [[1, 1], [1], {out_box}]{tail} : !teg.tensor<[h=3, w=4] x f32>, !teg.tensor<[w=4] x f32> -> {out} {{\n  ^bb0(%a: {T}, %b: !teg.tensor<[w=1] x f32>):\n    {}\n    teg.yield {} : {}\n  }}\n  %s = teg.sink @r %r : {out} -> !teg.token\n  teg.sequence_point %s : !teg.token\n}}\n",
        lines.join("\n    "),
        yielded.0,
        yielded.1
    )
}

fn run(text: &str) -> Array {
    let mut ctx = tapestry::context();
    let module = tapestry::parse_and_verify(&mut ctx, "t.tap", text).unwrap_or_else(|e| panic!("{text}\n{e:?}"));
    let graph = tapestry::dialects::teg::find_graph(&ctx, module, "g").unwrap();
    let x = Array::new(vec![3, 4], Data::F32((0..12).map(|i| i as f32 * 0.5 - 2.75).collect())).unwrap();
    let y = Array::new(vec![4], Data::F32(vec![1.5, -0.5, 0.25, -2.0])).unwrap();
    let inputs: IndexMap<String, Array> = [("x".to_string(), x), ("y".to_string(), y)].into();
    evaluate(&ctx, graph, &inputs).unwrap_or_else(|e| panic!("{text}\n{e}"))["r"].clone()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]
    #[test]
    fn vectorized_bodies_equal_point_by_point(ops in proptest::collection::vec(any::<u8>(), 0..6), reduce in 0usize..5) {
        let monoid = [None, Some("sum"), Some("max"), Some("min"), Some("prod")][reduce];
        let (fast, slow) = (graph(&ops, monoid, false), graph(&ops, monoid, true));
        prop_assert_eq!(run(&fast), run(&slow), "{}", fast);
    }
}
