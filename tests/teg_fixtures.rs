//! The TEG evaluator against NumPy: every op's result on random inputs, compared with what NumPy computes for the
//! op's definition (fixtures written by `scripts/teg-fixtures.py` into `tests/data/teg/`; this test needs no
//! Python). Floats agree to a few ulps (NumPy sums pairwise, the evaluator in f64); integers, booleans and f16
//! exactly.

use indexmap::IndexMap;
use tapestry::array::{npy, Array};
use tapestry::dialects::teg::eval::evaluate;
use tapestry::ir::verify::{verify, VerifyOptions};
use tapestry::ir::Context;

fn fixture(name: &str) -> Array {
    let path = format!("{}/tests/data/teg/{name}.npy", env!("CARGO_MANIFEST_DIR"));
    npy::read(&std::fs::read(&path).unwrap()).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The TEG type text of a fixture array with dimension names `names`.
fn ty(a: &Array, names: &[&str]) -> String {
    let dims: Vec<String> = a.shape().iter().zip(names).map(|(n, name)| format!("{name}={n}")).collect();
    format!("!teg.tensor<[{}] x {}>", dims.join(", "), a.dtype())
}

/// Runs `body` (defining `%r` of type `$R`, the type of the fixture `expected` with dimension names
/// `result_names`) on sources named after the fixtures `inputs` (dimension names `names`) and compares `%r` with
/// `expected` to a relative tolerance `tol` (0: exactly).
fn check(inputs: &[&str], names: &[&'static str], body: &str, expected: &str, result_names: &[&str], tol: f64) {
    check_with(inputs, &|_| names.to_vec(), body, expected, result_names, tol)
}

/// [`check`] with each input's dimension names from `names_of`.
fn check_with(
    inputs: &[&str],
    names_of: &dyn Fn(&str) -> Vec<&'static str>,
    body: &str,
    expected: &str,
    result_names: &[&str],
    tol: f64,
) {
    let want = fixture(expected);
    let result = ty(&want, result_names);
    let mut text = String::from("teg.graph @g {\n");
    let mut bound = IndexMap::new();
    for name in inputs {
        let a = fixture(name);
        text += &format!("  %{name} = teg.source @{name} : {}\n", ty(&a, &names_of(name)));
        bound.insert(name.to_string(), a);
    }
    let body = body.replace("$R", &result);
    text += &format!(
        "  {body}\n  %s = teg.sink @r %r : {result} -> !teg.token\n  teg.sequence_point %s : !teg.token\n}}\n"
    );
    let mut ctx = Context::new(tapestry::dialects::all());
    let module = tapestry::parse::parse_file(&mut ctx, "f.tap", &text).unwrap_or_else(|d| panic!("{text}\n{d:?}"));
    let diags = verify(&ctx, module, VerifyOptions::default());
    assert!(diags.is_empty(), "{text}\n{diags:?}");
    let region = ctx.body.regions(module)[0];
    let graph = ctx.body.block_ops(ctx.body.region(region).blocks[0]).next().unwrap();
    let got = evaluate(&ctx, graph, &bound).unwrap_or_else(|e| panic!("{text}\n{e}"))["r"].clone();
    assert_eq!((got.shape(), got.dtype()), (want.shape(), want.dtype()), "{expected}");
    for (i, (g, w)) in got.to_f64().iter().zip(want.to_f64()).enumerate() {
        let ok =
            if tol == 0.0 { g == &w || (g.is_nan() && w.is_nan()) } else { (g - w).abs() <= tol * w.abs().max(1.0) };
        assert!(ok, "{expected}[{i}]: evaluator {g}, NumPy {w}");
    }
}

const HW: &[&str] = &["h", "w"];

#[test]
fn cell_ops_match_numpy() {
    for op in ["add", "sub", "mul", "div", "max", "min"] {
        check(&["a", "b"], HW, &format!("%r = teg.{op} %a, %b : $R"), op, HW, 0.0);
    }
    for op in ["abs", "neg", "relu"] {
        check(&["a"], HW, &format!("%r = teg.{op} %a : $R"), op, HW, 0.0);
    }
    for op in ["exp", "tanh", "gelu"] {
        check(&["a"], HW, &format!("%r = teg.{op} %a : $R"), op, HW, 4e-7);
    }
    for op in ["log", "sqrt"] {
        check(&["pos"], HW, &format!("%r = teg.{op} %pos : $R"), op, HW, 4e-7);
    }
    check(&["a"], HW, "%r = teg.clip %a min -0.5 max 0.5 : $R", "clip", HW, 0.0);
    check(&["a"], HW, "%r = teg.clip %a min -0.5 : $R", "clip_min", HW, 0.0);
    check(&["a"], HW, "%r = teg.clip %a max 0.5 : $R", "clip_max", HW, 0.0);
    let tanh_form = "%r = teg.gelu %a attributes {approximate = \"tanh\"} : $R";
    check(&["a"], HW, tanh_form, "gelu_tanh", HW, 2e-7);
    let ab = "!teg.tensor<[h=3, w=5] x f32>";
    check(&["a", "b"], HW, &format!("%r = teg.compare \"lt\" %a, %b : {ab}, {ab} -> $R"), "lt", HW, 0.0);
    let cond = format!("%c = teg.compare \"lt\" %a, %b : {ab}, {ab} -> !teg.tensor<[h=3, w=5] x i1>\n  %r = teg.where %c, %a, %b : !teg.tensor<[h=3, w=5] x i1>, {ab}, {ab} -> $R");
    check(&["a", "b"], HW, &cond, "where", HW, 0.0);
    check(&["a"], HW, &format!("%r = teg.cast %a : {ab} -> $R"), "cast_i32", HW, 0.0);
    check(&["a"], HW, &format!("%r = teg.cast %a : {ab} -> $R"), "cast_f16", HW, 0.0);
    check(&["a16", "b16"], HW, "%r = teg.add %a16, %b16 : $R", "add16", HW, 0.0);
    check(&["a16", "b16"], HW, "%r = teg.mul %a16, %b16 : $R", "mul16", HW, 0.0);
    check(&["ai", "bi"], HW, "%r = teg.div %ai, %bi : $R", "divi", HW, 0.0);
}

#[test]
fn reductions_match_numpy() {
    let a = "!teg.tensor<[h=3, w=5] x f32>";
    check(&["a"], HW, &format!("%r = teg.reduce %a along [\"w\"] by \"sum\" : {a} -> $R"), "sum_w", &["h"], 1e-6);
    check(&["a"], HW, &format!("%r = teg.reduce %a along [\"w\"] by \"mean\" : {a} -> $R"), "mean_w", &["h"], 1e-6);
    check(&["a"], HW, &format!("%r = teg.reduce %a along [\"h\"] by \"max\" : {a} -> $R"), "max_h", &["w"], 0.0);
    check(&["a"], HW, &format!("%r = teg.reduce %a along [\"h\", \"w\"] by \"min\" : {a} -> $R"), "min_all", &[], 0.0);
    check(&["a"], HW, &format!("%r = teg.reduce %a along [\"h\"] by \"prod\" : {a} -> $R"), "prod_h", &["w"], 1e-6);
}

#[test]
fn views_match_numpy() {
    let a = "!teg.tensor<[h=3, w=5] x f32>";
    check(&["a"], HW, &format!("%r = teg.permute %a to [\"w\", \"h\"] : {a} -> $R"), "permute", &["w", "h"], 0.0);
    check(&["a"], HW, &format!("%r = teg.reverse %a along [\"w\"] : {a} -> $R"), "reverse", HW, 0.0);
    check(&["a"], HW, &format!("%r = teg.slice %a along \"w\" from 1 to 5 step 2 : {a} -> $R"), "slice", HW, 0.0);
    let down = format!("%r = teg.slice %a along \"w\" from 4 to -1 step -2 : {a} -> $R");
    check(&["a"], HW, &down, "slice_down", HW, 0.0);
    let back = format!("%r = teg.slice %a along \"w\" from 3 to 0 step -1 : {a} -> $R");
    check(&["a"], HW, &back, "slice_back", HW, 0.0);
    let select = format!("%r = teg.select %a along \"w\" at 2 : {a} -> $R");
    check(&["a"], HW, &select, "select", &["h"], 0.0);
    let last = format!("%r = teg.select %a along \"h\" at -1 : {a} -> $R");
    check(&["a"], HW, &last, "select_last", &["w"], 0.0);
    check(&["a", "b"], HW, &format!("%r = teg.concat %a, %b along \"h\" : {a}, {a} -> $R"), "concat", HW, 0.0);
    check(&["a", "b"], HW, &format!("%r = teg.interleave %a, %b along \"w\" : {a}, {a} -> $R"), "interleave", HW, 0.0);
    check(&["a"], HW, &format!("%r = teg.repeat %a along \"w\" times 3 : {a} -> $R"), "repeat", HW, 0.0);
    let pads = [
        ("pad_reflect", "along \"w\" low 2 high 1 \"reflect\" 0.0"),
        ("pad_wrap", "along \"h\" low 1 high 2 \"wrap\" 0.0"),
        ("pad_constant", "along \"w\" low 1 high 1 \"constant\" 7.5"),
        ("pad_reflect_wide", "along \"w\" low 9 high 11 \"reflect\" 0.0"),
        ("pad_wrap_wide", "along \"h\" low 7 high 4 \"wrap\" 0.0"),
    ];
    for (name, args) in pads {
        check(&["a"], HW, &format!("%r = teg.pad %a {args} : {a} -> $R"), name, HW, 0.0);
    }
}

#[test]
fn block_ops_match_numpy() {
    let names_of = |name: &str| -> Vec<&'static str> {
        match name {
            "x" => vec!["n", "i"],
            "w" => vec!["i", "o"],
            "bias" => vec!["o"],
            "img" => vec!["n", "c", "h", "w"],
            _ => vec!["o", "c", "kh", "kw"],
        }
    };
    let (x, w, b) = ("!teg.tensor<[n=16, i=24] x f32>", "!teg.tensor<[i=24, o=8] x f32>", "!teg.tensor<[o=8] x f32>");
    let run = |inputs: &[&str], body: &str, expected: &str, out: &[&str]| {
        check_with(inputs, &names_of, body, expected, out, 1e-5)
    };
    run(&["x", "w"], &format!("%r = teg.matmul %x, %w : {x}, {w} -> $R"), "matmul", &["n", "o"]);
    run(&["x", "w", "bias"], &format!("%r = teg.linear %x, %w, %bias : {x}, {w}, {b} -> $R"), "linear", &["n", "o"]);
    run(&["x", "w"], &format!("%r = teg.prod %x, %w : {x}, {w} -> $R"), "prod", &["n", "i", "o"]);
    let (img, ker) = ("!teg.tensor<[n=2, c=3, h=9, w=8] x f32>", "!teg.tensor<[o=4, c=3, kh=3, kw=2] x f32>");
    let conv =
        format!("%r = teg.conv2d %img, %ker strides [2, 1] dilations [1, 2] padding [1, 1] : {img}, {ker} -> $R");
    run(&["img", "ker"], &conv, "conv", &["n", "o", "h", "w"]);
}

#[test]
fn broadcasting_by_name_matches_numpy() {
    let names_of = |name: &str| -> Vec<&'static str> {
        match name {
            "row" | "rowi" => vec!["w"],
            "p3" | "q3" => vec!["n", "h", "w"],
            _ => vec!["h", "w"],
        }
    };
    let run = |inputs: &[&str], body: &str, expected: &str, out: &[&str]| {
        check_with(inputs, &names_of, body, expected, out, 0.0)
    };
    for op in ["add", "sub", "mul", "div", "max", "min"] {
        run(&["a", "row"], &format!("%r = teg.{op} %a, %row : $R"), &format!("{op}_row"), HW);
    }
    run(&["a", "col"], "%r = teg.add %a, %col : $R", "add_col", HW);
    run(&["col", "a"], "%r = teg.add %col, %a : $R", "add_col", HW);
    run(&["p3", "q3"], "%r = teg.mul %p3, %q3 : $R", "mul_both", &["n", "h", "w"]);
    run(&["ai", "rowi"], "%r = teg.div %ai, %rowi : $R", "divi_row", HW);
    let (a, row) = ("!teg.tensor<[h=3, w=5] x f32>", "!teg.tensor<[w=5] x f32>");
    run(&["a", "row"], &format!("%r = teg.compare \"lt\" %a, %row : {a}, {row} -> $R"), "lt_row", HW);
    let cond = format!(
        "%c = teg.compare \"lt\" %a, %row : {a}, {row} -> !teg.tensor<[h=3, w=5] x i1>\n  %r = teg.where %c, %a, %row : !teg.tensor<[h=3, w=5] x i1>, {a}, {row} -> $R"
    );
    run(&["a", "row"], &cond, "where_row", HW);
    run(&["row"], &format!("%r = teg.broadcast %row : {row} -> $R"), "broadcast_row", HW);
    let col = "!teg.tensor<[h=3, w=1] x f32>";
    run(&["col"], &format!("%r = teg.broadcast %col : {col} -> $R"), "broadcast_col", &["n", "h", "w"]);
}

#[test]
fn masked_reductions_match_numpy() {
    let names_of = |name: &str| -> Vec<&'static str> {
        match name {
            "rowmask" => vec!["h"],
            _ => vec!["h", "w"],
        }
    };
    let run = |inputs: &[&str], body: &str, expected: &str, out: &[&str], tol: f64| {
        check_with(inputs, &names_of, body, expected, out, tol)
    };
    let (a, m, ai) = ("!teg.tensor<[h=3, w=5] x f32>", "!teg.tensor<[h=3, w=5] x i1>", "!teg.tensor<[h=3, w=5] x i32>");
    let reduce = |x: &str, mask: &str, tx: &str, tm: &str, how: &str| {
        format!("%r = teg.reduce %{x}, %{mask} {how} : {tx}, {tm} -> $R")
    };
    let min_w = reduce("a", "mask", a, m, "along [\"w\"] by \"min\" default -1.0");
    run(&["a", "mask"], &min_w, "masked_min_w", &["h"], 0.0);
    let sum_h = reduce("a", "mask", a, m, "along [\"h\"] by \"sum\"");
    run(&["a", "mask"], &sum_h, "masked_sum_h", &["w"], 1e-6);
    let mean_h = reduce("a", "mask", a, m, "along [\"h\"] by \"mean\" default 7.0");
    run(&["a", "mask"], &mean_h, "masked_mean_h", &["w"], 1e-6);
    let rows = reduce("a", "rowmask", a, "!teg.tensor<[h=3] x i1>", "along [\"h\"] by \"max\"");
    run(&["a", "rowmask"], &rows, "masked_max_rows", &["w"], 0.0);
    let max_i = reduce("ai", "mask", ai, m, "along [\"h\"] by \"max\" default -1.0");
    run(&["ai", "mask"], &max_i, "masked_max_i", &["w"], 0.0);
}

#[test]
fn contractions_by_name_match_numpy() {
    let names_of = |name: &str| -> Vec<&'static str> {
        match name {
            "x" => vec!["n", "i"],
            "g" => vec!["n", "o"],
            "xb" => vec!["b", "m", "k"],
            "wb" => vec!["b", "k", "n"],
            "x2" => vec!["m", "a", "c"],
            "w2" => vec!["c", "a", "n"],
            "row" => vec!["m"],
            "bias" => vec!["n"],
            _ => vec!["h", "w"],
        }
    };
    let run = |inputs: [&str; 2], types: (&str, &str), expected: &str, out: &[&str]| {
        let body = format!("%r = teg.contract %{}, %{} : {}, {} -> $R", inputs[0], inputs[1], types.0, types.1);
        check_with(&inputs, &names_of, &body, expected, out, 1e-5)
    };
    run(["x", "g"], ("!teg.tensor<[n=16, i=24] x f32>", "!teg.tensor<[n=16, o=8] x f32>"), "xt_g", &["i", "o"]);
    let (xb, wb) = ("!teg.tensor<[b=3, m=4, k=5] x f32>", "!teg.tensor<[b=3, k=5, n=6] x f32>");
    run(["xb", "wb"], (xb, wb), "batched", &["b", "m", "n"]);
    run(["xb", "wb"], (xb, wb), "batched_nbm", &["n", "b", "m"]);
    let (x2, w2) = ("!teg.tensor<[m=4, a=3, c=5] x f32>", "!teg.tensor<[c=5, a=3, n=2] x f32>");
    run(["x2", "w2"], (x2, w2), "two_summed", &["m", "n"]);
    run(["row", "bias"], ("!teg.tensor<[m=5] x f32>", "!teg.tensor<[n=8] x f32>"), "outer", &["m", "n"]);
    let ints = "!teg.tensor<[h=3, w=5] x i32>";
    run(["ai", "bi"], (ints, ints), "int_contract", &["w"]);
}
