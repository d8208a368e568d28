//! `teg.conv2d` against a direct loop: random extents, strides, dilations and padding (windows that start and end
//! in the padding, strides larger than the kernel), on integers so that any summation order gives the same result.

use indexmap::IndexMap;
use proptest::prelude::*;
use tapestry::array::{Array, Data};
use tapestry::dialects::teg::eval::evaluate;

#[allow(clippy::too_many_arguments)]
fn check(n: u64, c: u64, h: u64, w: u64, o: u64, kh: u64, kw: u64, s: [i64; 2], d: [i64; 2], p: [i64; 2]) {
    let out = |x: u64, k: u64, i: usize| (x as i64 + 2 * p[i] - (k as i64 - 1) * d[i] - 1).div_euclid(s[i]) + 1;
    let (oh, ow) = (out(h, kh, 0), out(w, kw, 1));
    if oh < 1 || ow < 1 {
        return; // The kernel does not fit: the verifier's business, tested elsewhere.
    }
    let (oh, ow) = (oh as u64, ow as u64);
    let xv: Vec<i64> = (0..n * c * h * w).map(|i| (i as i64 * 7) % 11 - 5).collect();
    let kv: Vec<i64> = (0..o * c * kh * kw).map(|i| (i as i64 * 5) % 7 - 3).collect();
    let t = |d: [(&str, u64); 4]| {
        let parts: Vec<String> = d.iter().map(|(n, e)| format!("{n}={e}")).collect();
        format!("!teg.tensor<[{}] x i64>", parts.join(", "))
    };
    let (tx, tk, ty) = (
        t([("n", n), ("c", c), ("h", h), ("w", w)]),
        t([("o", o), ("c", c), ("kh", kh), ("kw", kw)]),
        t([("n", n), ("o", o), ("h", oh), ("w", ow)]),
    );
    let text = format!(
        "teg.graph @g {{\n  %x = teg.source @x : {tx}\n  %k = teg.source @k : {tk}\n  %y = teg.conv2d %x, %k strides [{}, {}] dilations [{}, {}] padding [{}, {}] : {tx}, {tk} -> {ty}\n  %s = teg.sink @y %y : {ty} -> !teg.token\n  teg.sequence_point %s : !teg.token\n}}\n",
        s[0], s[1], d[0], d[1], p[0], p[1]
    );
    let mut ctx = tapestry::context();
    let module = tapestry::parse_and_verify(&mut ctx, "t.tap", &text).unwrap_or_else(|e| panic!("{text}\n{e:?}"));
    let graph = tapestry::dialects::teg::find_graph(&ctx, module, "g").unwrap();
    let inputs: IndexMap<String, Array> = [
        ("x".into(), Array::new(vec![n, c, h, w], Data::I64(xv.clone())).unwrap()),
        ("k".into(), Array::new(vec![o, c, kh, kw], Data::I64(kv.clone())).unwrap()),
    ]
    .into();
    let got = evaluate(&ctx, graph, &inputs).unwrap_or_else(|e| panic!("{text}\n{e}"))["y"].to_f64();
    let mut want = Vec::new();
    for (b, oc, y, z) in
        (0..n).flat_map(|b| (0..o).flat_map(move |oc| (0..oh).flat_map(move |y| (0..ow).map(move |z| (b, oc, y, z)))))
    {
        let mut acc = 0i64;
        for (ci, i, j) in (0..c).flat_map(|ci| (0..kh).flat_map(move |i| (0..kw).map(move |j| (ci, i, j)))) {
            let r = y as i64 * s[0] - p[0] + i as i64 * d[0];
            let q = z as i64 * s[1] - p[1] + j as i64 * d[1];
            if (0..h as i64).contains(&r) && (0..w as i64).contains(&q) {
                let xi = ((b * c + ci) * h + r as u64) * w + q as u64;
                acc += xv[xi as usize] * kv[(((oc * c + ci) * kh + i) * kw + j) as usize];
            }
        }
        want.push(acc as f64);
    }
    assert_eq!(got, want, "{text}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]
    #[test]
    fn conv2d_matches_direct(
        (n, c, h, w, o) in (1u64..3, 1u64..4, 1u64..9, 1u64..9, 1u64..4),
        (kh, kw) in (1u64..4, 1u64..4),
        s in [1i64..4, 1i64..4],
        d in [1i64..3, 1i64..3],
        p in [0i64..3, 0i64..3],
    ) {
        check(n, c, h, w, o, kh, kw, s, d, p);
    }
}
