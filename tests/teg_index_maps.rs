//! Every teg op's index maps against the evaluator: for random ops and random boxes of their result, the input
//! boxes the maps give must hold every input cell the evaluator reads for that box. Checked by evaluating twice,
//! the second time with every input cell outside its box changed: the result inside the box must not move.

use indexmap::IndexMap;
use proptest::prelude::*;
use tapestry::array::{Array, DType, Data};
use tapestry::dialects::teg::eval::evaluate;
use tapestry::interfaces::sharding::index_maps_of;
use tapestry::zspace::ZRange;

/// A small deterministic generator for the op's shape and parameters (proptest picks the seed).
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number in `[lo, hi]`.
    fn int(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo + 1) as u64) as i64
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.next() as usize % items.len()]
    }
}

/// A source: name, dimensions, element type.
type Source = (&'static str, Vec<(&'static str, u64)>, &'static str);

fn ty(dims: &[(&str, u64)], dtype: &str) -> String {
    let d: Vec<String> = dims.iter().map(|(n, e)| format!("{n}={e}")).collect();
    format!("!teg.tensor<[{}] x {dtype}>", d.join(", "))
}

/// A random op: its sources, the line defining `%r` (with `$T(name)` for a source's type) and `%r`'s dimensions
/// and element type.
fn random_op(g: &mut Gen) -> (Vec<Source>, String, Vec<(&'static str, u64)>, &'static str) {
    let (h, w) = (g.int(1, 5) as u64, g.int(1, 6) as u64);
    let hw = vec![("h", h), ("w", w)];
    let x = ("x", hw.clone(), "f32");
    let xt = ty(&hw, "f32");
    match g.int(0, 26) {
        0 => {
            let op = g.pick(&["add", "sub", "mul", "max", "min"]);
            let row = ("y", vec![("w", w)], "f32");
            (vec![x, row], format!("%r = teg.{op} %x, %y : {xt}"), hw, "f32")
        }
        1 => {
            let col = ("y", vec![("h", h), ("w", 1)], "f32");
            (vec![col, x], format!("%r = teg.mul %y, %x : {xt}"), hw, "f32")
        }
        2 => {
            let op = g.pick(&["exp", "neg", "relu", "tanh"]);
            (vec![x], format!("%r = teg.{op} %x : {xt}"), hw, "f32")
        }
        3 => (vec![x], format!("%r = teg.cast %x : {xt} -> {}", ty(&hw, "i32")), hw, "i32"),
        4 => {
            let c = ("c", vec![("w", w)], "i1");
            let line = format!(
                "%r = teg.where %c, %x, %y : {}, {xt}, {} -> {xt}",
                ty(&[("w", w)], "i1"),
                ty(&[("h", h), ("w", 1)], "f32")
            );
            (vec![c, x, ("y", vec![("h", h), ("w", 1)], "f32")], line, hw, "f32")
        }
        5 => {
            let line =
                format!("%r = teg.compare \"lt\" %x, %y : {xt}, {} -> {}", ty(&[("w", w)], "f32"), ty(&hw, "i1"));
            (vec![x, ("y", vec![("w", w)], "f32")], line, hw, "i1")
        }
        6 | 7 => {
            let (dim, kept) = if g.int(0, 1) == 0 { ("h", vec![("w", w)]) } else { ("w", vec![("h", h)]) };
            let monoid = g.pick(&["sum", "max", "min", "prod"]);
            if g.int(0, 1) == 0 {
                let line =
                    format!("%r = teg.reduce %x along [\"{dim}\"] by \"{monoid}\" : {xt} -> {}", ty(&kept, "f32"));
                (vec![x], line, kept, "f32")
            } else {
                let m = ("m", hw.clone(), "i1");
                let line = format!(
                    "%r = teg.reduce %x, %m along [\"{dim}\"] by \"{monoid}\" default 3.0 : {xt}, {} -> {}",
                    ty(&hw, "i1"),
                    ty(&kept, "f32")
                );
                (vec![x, m], line, kept, "f32")
            }
        }
        8 => {
            let out = vec![("w", w), ("h", h)];
            (vec![x], format!("%r = teg.permute %x to [\"w\", \"h\"] : {xt} -> {}", ty(&out, "f32")), out, "f32")
        }
        9 => (vec![x], format!("%r = teg.reverse %x along [\"w\"] : {xt} -> {xt}"), hw, "f32"),
        10 => {
            let step = *g.pick(&[1i64, 2, 3, -1, -2]);
            let (start, stop) = if step > 0 {
                let a = g.int(0, w as i64);
                (a, g.int(a, w as i64))
            } else {
                let a = g.int(0, w as i64 - 1);
                (a, g.int(-1, a))
            };
            let n = start.abs_diff(stop).div_ceil(step.unsigned_abs());
            let out = vec![("h", h), ("w", n)];
            let line = format!(
                "%r = teg.slice %x along \"w\" from {start} to {stop} step {step} : {xt} -> {}",
                ty(&out, "f32")
            );
            (vec![x], line, out, "f32")
        }
        11 => {
            let at = g.int(-(h as i64), h as i64 - 1);
            let out = vec![("w", w)];
            (vec![x], format!("%r = teg.select %x along \"h\" at {at} : {xt} -> {}", ty(&out, "f32")), out, "f32")
        }
        12 => {
            let out = vec![("h", h), ("c", 1), ("w", w)];
            (vec![x], format!("%r = teg.unsqueeze %x as \"c\" at 1 : {xt} -> {}", ty(&out, "f32")), out, "f32")
        }
        13 => {
            let one = vec![("h", h), ("c", 1), ("w", w)];
            let line = format!("%r = teg.squeeze %x along \"c\" : {} -> {xt}", ty(&one, "f32"));
            (vec![("x", one, "f32")], line, hw, "f32")
        }
        14 => {
            let out = vec![("n", 3), ("h", h), ("w", w)];
            let src = vec![("h", h), ("w", 1)];
            let line = format!("%r = teg.broadcast %x : {} -> {}", ty(&src, "f32"), ty(&out, "f32"));
            (vec![("x", src, "f32")], line, out, "f32")
        }
        15 => {
            let y = ("y", vec![("h", 2), ("w", w)], "f32");
            let out = vec![("h", h + 2), ("w", w)];
            let line = format!(
                "%r = teg.concat %x, %y along \"h\" : {xt}, {} -> {}",
                ty(&[("h", 2), ("w", w)], "f32"),
                ty(&out, "f32")
            );
            (vec![x, y], line, out, "f32")
        }
        16 => {
            let out = vec![("h", h), ("w", 2 * w)];
            let line = format!("%r = teg.interleave %x, %y along \"w\" : {xt}, {xt} -> {}", ty(&out, "f32"));
            (vec![x, ("y", hw.clone(), "f32")], line, out, "f32")
        }
        17 => {
            let out = vec![("h", 3 * h), ("w", w)];
            (vec![x], format!("%r = teg.repeat %x along \"h\" times 3 : {xt} -> {}", ty(&out, "f32")), out, "f32")
        }
        18 => {
            let (low, high) = (g.int(0, 7), g.int(0, 7));
            let mode = *g.pick(&["constant", "reflect", "wrap"]);
            let out = vec![("h", h), ("w", w + (low + high) as u64)];
            let line = format!(
                "%r = teg.pad %x along \"w\" low {low} high {high} \"{mode}\" 1.5 : {xt} -> {}",
                ty(&out, "f32")
            );
            (vec![x], line, out, "f32")
        }
        19 => {
            let n = g.int(1, 4) as u64;
            let wt = vec![("w", w), ("n", n)];
            let out = vec![("h", h), ("n", n)];
            let line = format!("%r = teg.matmul %x, %y : {xt}, {} -> {}", ty(&wt, "f32"), ty(&out, "f32"));
            (vec![x, ("y", wt, "f32")], line, out, "f32")
        }
        20 => {
            // x^T · y over h.
            let y = vec![("h", h), ("o", 3)];
            let out = vec![("w", w), ("o", 3)];
            let line = format!("%r = teg.contract %x, %y : {xt}, {} -> {}", ty(&y, "f32"), ty(&out, "f32"));
            (vec![x, ("y", y, "f32")], line, out, "f32")
        }
        21 => {
            let n = g.int(1, 4) as u64;
            let (wt, bt, out) = (vec![("w", w), ("n", n)], vec![("n", n)], vec![("h", h), ("n", n)]);
            let line = format!(
                "%r = teg.linear %x, %y, %b : {xt}, {}, {} -> {}",
                ty(&wt, "f32"),
                ty(&bt, "f32"),
                ty(&out, "f32")
            );
            (vec![x, ("y", wt, "f32"), ("b", bt, "f32")], line, out, "f32")
        }
        22 => {
            let n = g.int(1, 3) as u64;
            let wt = vec![("w", w), ("n", n)];
            let out = vec![("h", h), ("w", w), ("n", n)];
            let line = format!("%r = teg.prod %x, %y : {xt}, {} -> {}", ty(&wt, "f32"), ty(&out, "f32"));
            (vec![x, ("y", wt, "f32")], line, out, "f32")
        }
        23 => {
            let op = g.pick(&["teg.clip %x min -1.0 max 2.0", "teg.clip %x max 0.5", "teg.gelu %x", "teg.abs %x"]);
            (vec![x], format!("%r = {op} : {xt}"), hw, "f32")
        }
        24 => {
            let op = g.pick(&["teg.iota along \"w\"", "teg.random seed 3", "teg.full 2.5", "teg.zeros"]);
            let dtype = if op.contains("iota") { "i32" } else { "f32" };
            (vec![], format!("%r = {op} : {}", ty(&hw, dtype)), hw, dtype)
        }
        25 => {
            // A user block: row sums, one index point per cell, the columns a sum reduction.
            let out = vec![("h", h)];
            let line = format!(
                "%r = teg.block @rowsum %x over [\"b\", \"i\"] [{h}, {w}] maps [affine_map<(b, i) -> (b, i)>, affine_map<(b, i) -> (b)>] boxes [[1, 1], [1]] reduce [\"i\"] by \"sum\" : {xt} -> {} {{\n  ^bb0(%v: {}):\n    %q = teg.squeeze %v along \"w\" : {} -> {}\n    teg.yield %q : {}\n  }}",
                ty(&out, "f32"),
                ty(&[("h", 1), ("w", 1)], "f32"),
                ty(&[("h", 1), ("w", 1)], "f32"),
                ty(&[("h", 1)], "f32"),
                ty(&[("h", 1)], "f32")
            );
            (vec![x], line, out, "f32")
        }
        _ => {
            let (hh, ww) = (g.int(3, 7) as u64, g.int(3, 7) as u64);
            let img = vec![("n", 1), ("c", 2), ("h", hh), ("w", ww)];
            let k = vec![("o", 2), ("c", 2), ("kh", 3), ("kw", 2)];
            let (s, p) = (g.int(1, 2), g.int(0, 1));
            let oh = (hh as i64 + 2 * p - 3) / s + 1;
            let ow = (ww as i64 + 2 * p - 2) / s + 1;
            let out = vec![("n", 1), ("o", 2), ("h", oh as u64), ("w", ow as u64)];
            let line = format!(
                "%r = teg.conv2d %x, %y strides [{s}, {s}] dilations [1, 1] padding [{p}, {p}] : {}, {} -> {}",
                ty(&img, "f32"),
                ty(&k, "f32"),
                ty(&out, "f32")
            );
            (vec![("x", img, "f32"), ("y", k, "f32")], line, out, "f32")
        }
    }
}

/// Cells of `shape` with values from `g`; `keep` holds, for each cell, the original value (when `Some`) to use
/// inside the box.
fn cells(shape: &[u64], dtype: &str, g: &mut Gen) -> Array {
    let n = shape.iter().product::<u64>();
    let values: Vec<f64> = (0..n).map(|_| g.int(-40, 40) as f64 / 8.0).collect();
    let dt = DType::from_name(dtype).unwrap();
    let values = values.into_iter().map(|v| if dt == DType::I1 { (v > 0.0) as u8 as f64 } else { v });
    Array::new(shape.to_vec(), Data::from_f64(dt, values)).unwrap()
}

/// `a` with every cell outside `inside` changed.
fn changed_outside(a: &Array, inside: Option<&ZRange>) -> Array {
    let shape = a.shape().to_vec();
    let values: Vec<f64> = (0..a.len())
        .map(|i| {
            let mut rest = i as u64;
            let mut coord = vec![0i64; shape.len()];
            for k in (0..shape.len()).rev() {
                coord[k] = (rest % shape[k]) as i64;
                rest /= shape[k];
            }
            let v = a.data().get_f64(i);
            match inside.is_some_and(|r| r.contains(&coord)) {
                true => v,
                false if a.dtype() == DType::I1 => 1.0 - v,
                false => v + 17.25,
            }
        })
        .collect();
    Array::new(shape, Data::from_f64(a.dtype(), values.into_iter())).unwrap()
}

fn check(seed: u64) {
    let mut g = Gen(seed | 1);
    let (sources, line, out_dims, out_dtype) = random_op(&mut g);
    let mut text = String::from("teg.graph @g {\n");
    for (name, dims, dtype) in &sources {
        text += &format!("  %{name} = teg.source @{name} : {}\n", ty(dims, dtype));
    }
    let result = ty(&out_dims, out_dtype);
    text += &format!(
        "  {line}\n  %s = teg.sink @r %r : {result} -> !teg.token\n  teg.sequence_point %s : !teg.token\n}}\n"
    );
    let mut ctx = tapestry::context();
    let module = tapestry::parse_and_verify(&mut ctx, "t.tap", &text).unwrap_or_else(|e| panic!("{text}\n{e:?}"));
    let graph = tapestry::dialects::teg::find_graph(&ctx, module, "g").unwrap();
    let block = ctx.body.region(ctx.body.regions(graph)[0]).blocks[0];
    // The op is the one whose result the sink reads.
    let sink = ctx.body.block_ops(block).find(|&op| ctx.op_name(op) == "teg.sink").unwrap();
    let read = ctx.body.operand(sink, 0);
    let op = ctx.body.block_ops(block).find(|&op| ctx.body.results(op).any(|v| v == read)).unwrap();
    let maps = index_maps_of(&ctx, op).unwrap_or_else(|| panic!("{text}\nno index maps"));
    // A random non-empty box of the result.
    let shape: Vec<u64> = out_dims.iter().map(|d| d.1).collect();
    if shape.contains(&0) {
        return;
    }
    let start: Vec<i64> = shape.iter().map(|&n| g.int(0, n as i64 - 1)).collect();
    let end: Vec<i64> = shape.iter().zip(&start).map(|(&n, &s)| g.int(s + 1, n as i64)).collect();
    let out = ZRange::new(start, end).unwrap();
    let boxes = maps.input_boxes(0, &out).unwrap_or_else(|e| panic!("{text}\n{e}"));
    let inputs: IndexMap<String, Array> = sources
        .iter()
        .map(|(name, dims, dtype)| {
            (name.to_string(), cells(&dims.iter().map(|d| d.1).collect::<Vec<_>>(), dtype, &mut g))
        })
        .collect();
    let changed: IndexMap<String, Array> =
        inputs.iter().zip(&boxes).map(|((name, a), b)| (name.clone(), changed_outside(a, b.as_ref()))).collect();
    let before = evaluate(&ctx, graph, &inputs).unwrap_or_else(|e| panic!("{text}\n{e}"))["r"].clone();
    let after = evaluate(&ctx, graph, &changed).unwrap_or_else(|e| panic!("{text}\n{e}"))["r"].clone();
    let strides = tapestry::array::strides(&shape);
    for p in out.points() {
        let i: usize = p.iter().zip(&strides).map(|(&c, &s)| c as usize * s).sum();
        let (b, a) = (before.data().get_f64(i), after.data().get_f64(i));
        assert!(
            b == a || (b.is_nan() && a.is_nan()),
            "{text}\nresult box {out:?}, input boxes {boxes:?}: cell {p:?} was {b}, is {a}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]
    #[test]
    fn index_maps_cover_what_the_evaluator_reads(seed in any::<u64>()) {
        check(seed);
    }
}
