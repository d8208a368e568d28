//! `teg-conv-dense` preserves values: random strided, dilated and padded convolutions (one-tap kernels included)
//! give exactly the same outputs through the reference evaluator before and after the rewrite, and the rewritten
//! graph has no convolution left that reads rows no window uses.

use proptest::prelude::*;
use tapestry::array::{Array, Data};
use tapestry::dialects::teg::eval::evaluate;
use tapestry::dialects::teg::find_graph;
use tapestry::dialects::teg::ops::conv2d::conv_extent;
use tapestry::dialects::teg::ops::{decode, Io, OpKind};
use tapestry::dialects::teg::tensor_type::as_tensor;
use tapestry::indexmap::IndexMap;

/// A graph convolving an `[n=2, c=2, h, w]` image with `[o=3, c=2, kh, kw]` kernels by `s`, `d`, `p` per axis.
fn graph(h: u64, w: u64, kh: u64, kw: u64, s: [i64; 2], d: [i64; 2], p: [i64; 2]) -> Option<String> {
    let oh = conv_extent(h, kh, s[0], d[0], p[0])?;
    let ow = conv_extent(w, kw, s[1], d[1], p[1])?;
    let img = format!("!teg.tensor<[n=2, c=2, h={h}, w={w}] x f32>");
    let k = format!("!teg.tensor<[o=3, c=2, kh={kh}, kw={kw}] x f32>");
    let y = format!("!teg.tensor<[n=2, o=3, h={oh}, w={ow}] x f32>");
    Some(format!(
        "teg.graph @g {{
  %img = teg.source @img : {img}
  %k = teg.source @k : {k}
  %y = teg.conv2d %img, %k strides [{}, {}] dilations [{}, {}] padding [{}, {}] : {img}, {k}
  %s = teg.sink @y %y : {y} -> !teg.token
  teg.sequence_point %s : !teg.token
}}
",
        s[0], s[1], d[0], d[1], p[0], p[1]
    ))
}

/// The outputs of `text` after `pipeline` (none: as written), on small integer inputs; and whether every
/// convolution left is dense (per axis, dilation 1 and a stride no longer than the window, unless the axis is
/// padded by more than half its extent).
fn run(text: &str, pipeline: Option<&str>) -> (IndexMap<String, Array>, bool) {
    let mut ctx = tapestry::context();
    let module = tapestry::parse_and_verify(&mut ctx, "g.tap", text).unwrap();
    if let Some(p) = pipeline {
        tapestry::run_pipeline(&mut ctx, module, p).unwrap_or_else(|d| panic!("{d:?}"));
        let diags = tapestry::ir::verify::verify(&ctx, module, Default::default());
        assert!(diags.is_empty(), "{diags:?}");
    }
    let graph = find_graph(&ctx, module, "g").unwrap();
    let mut values = IndexMap::new();
    let mut dense = true;
    for op in tapestry::ir::walk::preorder(&ctx.body, graph) {
        let tensor = |i: usize| {
            let v = if i == 0 { ctx.body.results(op).next().unwrap() } else { ctx.body.operand(op, i) };
            as_tensor(&ctx, ctx.body.value_type(v)).unwrap().clone()
        };
        match decode(&ctx, op) {
            Ok(OpKind::Io(Io::Source { name })) => {
                let t = tensor(0);
                let n = t.size() as usize;
                let data: Vec<f32> = (0..n).map(|i| ((i * 7 + n) % 11) as f32 - 5.0).collect();
                values.insert(name, Array::new(t.shape(), Data::F32(data)).unwrap());
            }
            Ok(OpKind::Conv2d(c)) => {
                let (k, x) = (tensor(1), as_tensor(&ctx, ctx.body.value_type(ctx.body.operand(op, 0))).unwrap());
                let taps = |i: usize| k.dims[2 + i].1 as i64;
                // An axis padded by more than half its extent is left as it is, by design.
                let left = |i: usize| 2 * c.padding[i] as u64 > x.dims[2 + i].1;
                dense &= (0..2).all(|i| {
                    left(i)
                        || match taps(i) {
                            1 => c.strides[i] == 1,
                            t => c.dilations[i] == 1 && c.strides[i] <= t,
                        }
                });
            }
            _ => {}
        }
    }
    (evaluate(&ctx, graph, &values).unwrap(), dense)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn dense_convolutions_keep_values(
        (h, w) in (1u64..14, 1u64..14),
        (kh, kw) in (1u64..4, 1u64..4),
        s in (1i64..5, 1i64..5),
        d in (1i64..5, 1i64..5),
        p in (0i64..3, 0i64..3),
    ) {
        let Some(text) = graph(h, w, kh, kw, [s.0, s.1], [d.0, d.1], [p.0, p.1]) else { return Ok(()) };
        let (want, _) = run(&text, None);
        let (got, dense) = run(&text, Some("builtin.module(teg-conv-dense)"));
        prop_assert_eq!(got, want, "{}", text);
        prop_assert!(dense, "{}", text);
    }
}
