//! The TEG reference evaluator against known results for every op (values worked out by hand or by the
//! definitions in the whitepaper), and its errors for bad bindings.

use indexmap::IndexMap;
use tapestry::array::{Array, DType, Data};
use tapestry::dialects::teg::eval::evaluate;
use tapestry::ir::verify::{verify, VerifyOptions};
use tapestry::ir::{Context, OpId};

/// Parses and verifies `text` (one graph), evaluates it with `inputs`, returns the sinks.
fn run(text: &str, inputs: &[(&str, Array)]) -> Result<IndexMap<String, Array>, String> {
    let mut ctx = Context::new(tapestry::dialects::all());
    let module = tapestry::parse::parse_file(&mut ctx, "t.tap", text).map_err(|d| format!("{d:?}"))?;
    let diags = verify(&ctx, module, VerifyOptions::default());
    if !diags.is_empty() {
        return Err(format!("{diags:?}"));
    }
    let graph = first_graph(&ctx, module);
    let inputs: IndexMap<String, Array> = inputs.iter().map(|(n, a)| (n.to_string(), a.clone())).collect();
    evaluate(&ctx, graph, &inputs).map_err(|e| e.message)
}

fn first_graph(ctx: &Context, module: OpId) -> OpId {
    let region = ctx.body.regions(module)[0];
    let block = ctx.body.region(region).blocks[0];
    ctx.body.block_ops(block).find(|&op| ctx.op_name(op) == "teg.graph").expect("a graph")
}

fn f32s(shape: &[u64], v: &[f32]) -> Array {
    Array::new(shape.to_vec(), Data::F32(v.to_vec())).unwrap()
}

fn values(a: &Array) -> Vec<f64> {
    a.to_f64()
}

/// A graph with one source `x` of type `t_in`, the op line producing `%r : t_out`, and a sink.
fn unary_graph(t_in: &str, op: &str, t_out: &str) -> String {
    format!(
        "teg.graph @g {{\n  %x = teg.source @x : !teg.tensor<{t_in}>\n  %r = {op}\n  %s = teg.sink @r %r : !teg.tensor<{t_out}> -> !teg.token\n  teg.sequence_point %s : !teg.token\n}}\n"
    )
}

fn eval1(t_in: &str, op: &str, t_out: &str, x: Array) -> Array {
    let text = unary_graph(t_in, op, t_out);
    run(&text, &[("x", x)]).unwrap_or_else(|e| panic!("{text}\n{e}"))["r"].clone()
}

#[test]
fn cell_ops() {
    let t = "[n=4] x f32";
    let x = f32s(&[4], &[-2.0, -0.5, 0.0, 3.0]);
    let un = |name: &str| values(&eval1(t, &format!("teg.{name} %x : !teg.tensor<{t}>"), t, x.clone()));
    assert_eq!(un("abs"), [2.0, 0.5, 0.0, 3.0]);
    assert_eq!(un("neg"), [2.0, 0.5, -0.0, -3.0]);
    assert_eq!(un("relu"), [0.0, 0.0, 0.0, 3.0]);
    let exp = un("exp");
    assert!((exp[3] - 3f32.exp() as f64).abs() < 1e-6);
    let gelu = un("gelu");
    // gelu(3) = 3·Φ(3) = 2.99595...
    assert!((gelu[3] - 2.995_950_4).abs() < 1e-5, "{gelu:?}");
    let clip = values(&eval1(t, &format!("teg.clip %x min -1.0 max 1.0 : !teg.tensor<{t}>"), t, x.clone()));
    assert_eq!(clip, [-1.0, -0.5, 0.0, 1.0]);
    let cast =
        eval1(t, &format!("teg.cast %x : !teg.tensor<{t}> -> !teg.tensor<[n=4] x i32>"), "[n=4] x i32", x.clone());
    assert_eq!(cast.data(), &Data::I32(vec![-2, 0, 0, 3]));
}

#[test]
fn binary_compare_where() {
    let text = r#"teg.graph @g {
  %a = teg.source @a : !teg.tensor<[n=3] x f32>
  %b = teg.source @b : !teg.tensor<[n=3] x f32>
  %s = teg.sub %a, %b : !teg.tensor<[n=3] x f32>
  %m = teg.max %a, %b : !teg.tensor<[n=3] x f32>
  %c = teg.compare "lt" %a, %b : !teg.tensor<[n=3] x f32>, !teg.tensor<[n=3] x f32> -> !teg.tensor<[n=3] x i1>
  %w = teg.where %c, %a, %b : !teg.tensor<[n=3] x i1>, !teg.tensor<[n=3] x f32>, !teg.tensor<[n=3] x f32> -> !teg.tensor<[n=3] x f32>
  %t0 = teg.sink @s %s : !teg.tensor<[n=3] x f32> -> !teg.token
  %t1 = teg.sink @m %m : !teg.tensor<[n=3] x f32> -> !teg.token
  %t2 = teg.sink @w %w : !teg.tensor<[n=3] x f32> -> !teg.token
  teg.sequence_point %t0, %t1, %t2 : !teg.token, !teg.token, !teg.token
}"#;
    let out = run(text, &[("a", f32s(&[3], &[1.0, 5.0, 2.0])), ("b", f32s(&[3], &[4.0, 1.0, 2.0]))]).unwrap();
    assert_eq!(values(&out["s"]), [-3.0, 4.0, 0.0]);
    assert_eq!(values(&out["m"]), [4.0, 5.0, 2.0]);
    assert_eq!(values(&out["w"]), [1.0, 1.0, 2.0]);
}

#[test]
fn reductions() {
    let t = "[a=2, b=3] x f32";
    let x = f32s(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let red = |dims: &str, m: &str, out: &str| {
        values(&eval1(
            t,
            &format!("teg.reduce %x along {dims} by \"{m}\" : !teg.tensor<{t}> -> !teg.tensor<{out}>"),
            out,
            x.clone(),
        ))
    };
    assert_eq!(red("[\"b\"]", "sum", "[a=2] x f32"), [6.0, 15.0]);
    assert_eq!(red("[\"a\"]", "prod", "[b=3] x f32"), [4.0, 10.0, 18.0]);
    assert_eq!(red("[\"a\", \"b\"]", "max", "[] x f32"), [6.0]);
    assert_eq!(red("[\"b\"]", "min", "[a=2] x f32"), [1.0, 4.0]);
    assert_eq!(red("[\"b\"]", "mean", "[a=2] x f32"), [2.0, 5.0]);
}

#[test]
fn views() {
    let t = "[h=2, w=3] x f32";
    let x = f32s(&[2, 3], &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
    let view = |op: &str, out: &str| {
        values(&eval1(t, &format!("{op} : !teg.tensor<{t}> -> !teg.tensor<{out}>"), out, x.clone()))
    };
    assert_eq!(view("teg.permute %x to [\"w\", \"h\"]", "[w=3, h=2] x f32"), [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
    assert_eq!(view("teg.reverse %x along [\"w\"]", t), [2.0, 1.0, 0.0, 5.0, 4.0, 3.0]);
    assert_eq!(view("teg.slice %x along \"w\" from 0 to 3 step 2", "[h=2, w=2] x f32"), [0.0, 2.0, 3.0, 5.0]);
    assert_eq!(
        view("teg.repeat %x along \"h\" times 2", "[h=4, w=3] x f32"),
        [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    );
    assert_eq!(
        view("teg.pad %x along \"w\" low 2 high 1 \"reflect\" 0.0", "[h=2, w=6] x f32"),
        [2.0, 1.0, 0.0, 1.0, 2.0, 1.0, 5.0, 4.0, 3.0, 4.0, 5.0, 4.0]
    );
    assert_eq!(
        view("teg.pad %x along \"w\" low 1 high 2 \"wrap\" 0.0", "[h=2, w=6] x f32"),
        [2.0, 0.0, 1.0, 2.0, 0.0, 1.0, 5.0, 3.0, 4.0, 5.0, 3.0, 4.0]
    );
    assert_eq!(
        view("teg.pad %x along \"h\" low 1 high 0 \"constant\" -1.0", "[h=3, w=3] x f32"),
        [-1.0, -1.0, -1.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    );
    let u = view("teg.unsqueeze %x as \"c\" at 1", "[h=2, c=1, w=3] x f32");
    assert_eq!(u, values(&x));
}

#[test]
fn squeeze_drops_an_extent_one_dimension() {
    let x = f32s(&[1, 3], &[7.0, 8.0, 9.0]);
    let op = "teg.squeeze %x along \"n\" : !teg.tensor<[n=1, m=3] x f32> -> !teg.tensor<[m=3] x f32>";
    let y = eval1("[n=1, m=3] x f32", op, "[m=3] x f32", x);
    assert_eq!((y.shape(), values(&y)), (&[3u64][..], vec![7.0, 8.0, 9.0]));
}

#[test]
fn casts_round_truncate_saturate_and_wrap() {
    let t = "[n=5] x f32";
    let x = f32s(&[5], &[-1.5, 0.0, 2.7, 300.0, f32::NAN]);
    let cast = |to: &str| {
        eval1(
            t,
            &format!("teg.cast %x : !teg.tensor<{t}> -> !teg.tensor<[n=5] x {to}>"),
            &format!("[n=5] x {to}"),
            x.clone(),
        )
    };
    // Floats to integers truncate toward zero and saturate; NaN becomes 0.
    assert_eq!(cast("i8").data(), &Data::I8(vec![-1, 0, 2, 127, 0]));
    // To i1: anything but zero is true (NaN too).
    assert_eq!(cast("i1").data(), &Data::I1(vec![true, false, true, true, true]));
    // To bf16: round to nearest even (2.7 is 0x402CCCCD in f32, 0x402D in bf16).
    let Data::BF16(b) = cast("bf16").data().clone() else { panic!("bf16") };
    assert_eq!(b.iter().map(|v| v.to_bits()).take(4).collect::<Vec<_>>(), [0xBFC0, 0x0000, 0x402D, 0x4396]);
    assert!(b[4].is_nan());
    // Integers to narrower integers wrap; to floats convert exactly.
    let i = Array::new(vec![3], Data::I32(vec![-3, 7, 300])).unwrap();
    let ti = "[n=3] x i32";
    let narrow =
        eval1(ti, &format!("teg.cast %x : !teg.tensor<{ti}> -> !teg.tensor<[n=3] x i8>"), "[n=3] x i8", i.clone());
    assert_eq!(narrow.data(), &Data::I8(vec![-3, 7, 44]));
    let wide = eval1(ti, &format!("teg.cast %x : !teg.tensor<{ti}> -> !teg.tensor<[n=3] x f32>"), "[n=3] x f32", i);
    assert_eq!(wide.data(), &Data::F32(vec![-3.0, 7.0, 300.0]));
}

#[test]
fn every_comparison() {
    let t = "[n=4] x f32";
    let a = f32s(&[4], &[1.0, 2.0, 3.0, f32::NAN]);
    let b = f32s(&[4], &[2.0, 2.0, 2.0, 2.0]);
    let compare = |p: &str| {
        let text = format!(
            "teg.graph @g {{\n  %a = teg.source @a : !teg.tensor<{t}>\n  %b = teg.source @b : !teg.tensor<{t}>\n  %c = teg.compare \"{p}\" %a, %b : !teg.tensor<{t}>, !teg.tensor<{t}> -> !teg.tensor<[n=4] x i1>\n  %s = teg.sink @c %c : !teg.tensor<[n=4] x i1> -> !teg.token\n  teg.sequence_point %s : !teg.token\n}}\n"
        );
        let out = run(&text, &[("a", a.clone()), ("b", b.clone())]).unwrap();
        let Data::I1(c) = out["c"].data().clone() else { panic!("i1") };
        c
    };
    // NaN compares false, but for `ne`.
    assert_eq!(compare("eq"), [false, true, false, false]);
    assert_eq!(compare("ne"), [true, false, true, true]);
    assert_eq!(compare("lt"), [true, false, false, false]);
    assert_eq!(compare("le"), [true, true, false, false]);
    assert_eq!(compare("gt"), [false, false, true, false]);
    assert_eq!(compare("ge"), [false, true, true, false]);
}

#[test]
fn narrow_types_compute_in_their_own_type() {
    let binary = |t: &str, op: &str, a: Array, b: Array| {
        let text = format!(
            "teg.graph @g {{\n  %a = teg.source @a : !teg.tensor<{t}>\n  %b = teg.source @b : !teg.tensor<{t}>\n  %c = teg.{op} %a, %b : !teg.tensor<{t}>\n  %s = teg.sink @c %c : !teg.tensor<{t}> -> !teg.token\n  teg.sequence_point %s : !teg.token\n}}\n"
        );
        run(&text, &[("a", a), ("b", b)]).unwrap()["c"].clone()
    };
    let i8s = |v: Vec<i8>| Array::new(vec![v.len() as u64], Data::I8(v)).unwrap();
    // i8 wraps; integer division truncates toward zero.
    assert_eq!(binary("[n=2] x i8", "add", i8s(vec![100, -7]), i8s(vec![100, 2])).data(), &Data::I8(vec![-56, -5]));
    assert_eq!(binary("[n=2] x i8", "div", i8s(vec![-7, 7]), i8s(vec![2, -2])).data(), &Data::I8(vec![-3, -3]));
    let i64s = |v: Vec<i64>| Array::new(vec![v.len() as u64], Data::I64(v)).unwrap();
    let m = binary("[n=1] x i64", "mul", i64s(vec![3_000_000_000]), i64s(vec![4]));
    assert_eq!(m.data(), &Data::I64(vec![12_000_000_000]));
    // bf16 rounds each result to nearest even: 1 + 2^-8 is a tie that goes down to 1, 1 + 3·2^-8 one that goes
    // up to 1 + 2^-6.
    let bf = |v: &[f32]| {
        Array::new(vec![v.len() as u64], Data::BF16(v.iter().map(|&x| half::bf16::from_f32(x)).collect())).unwrap()
    };
    let s = binary("[n=2] x bf16", "add", bf(&[1.0, 1.0]), bf(&[2f32.powi(-8), 3.0 * 2f32.powi(-8)]));
    assert_eq!(values(&s), [1.0, 1.0 + 2f64.powi(-6)]);
}

#[test]
fn zeros_ones_and_index_tensors_as_data() {
    // The diagonal of x through where(h == w) on its index tensor, and max(x, w) with the w coordinate as data.
    let text = r#"teg.graph @g {
  %x = teg.source @x : !teg.tensor<[h=2, w=3] x f32>
  %i = teg.index : !teg.tensor<[h=2, w=3, axis=2] x i64>
  %ih = teg.slice %i along "axis" from 0 to 1 step 1 : !teg.tensor<[h=2, w=3, axis=2] x i64> -> !teg.tensor<[h=2, w=3, axis=1] x i64>
  %iw = teg.slice %i along "axis" from 1 to 2 step 1 : !teg.tensor<[h=2, w=3, axis=2] x i64> -> !teg.tensor<[h=2, w=3, axis=1] x i64>
  %h = teg.squeeze %ih along "axis" : !teg.tensor<[h=2, w=3, axis=1] x i64> -> !teg.tensor<[h=2, w=3] x i64>
  %w = teg.squeeze %iw along "axis" : !teg.tensor<[h=2, w=3, axis=1] x i64> -> !teg.tensor<[h=2, w=3] x i64>
  %d = teg.compare "eq" %h, %w : !teg.tensor<[h=2, w=3] x i64>, !teg.tensor<[h=2, w=3] x i64> -> !teg.tensor<[h=2, w=3] x i1>
  %z = teg.zeros : !teg.tensor<[h=2, w=3] x f32>
  %diag = teg.where %d, %x, %z : !teg.tensor<[h=2, w=3] x i1>, !teg.tensor<[h=2, w=3] x f32>, !teg.tensor<[h=2, w=3] x f32> -> !teg.tensor<[h=2, w=3] x f32>
  %wf = teg.cast %w : !teg.tensor<[h=2, w=3] x i64> -> !teg.tensor<[h=2, w=3] x f32>
  %m = teg.max %x, %wf : !teg.tensor<[h=2, w=3] x f32>
  %n = teg.min %x, %wf : !teg.tensor<[h=2, w=3] x f32>
  %o = teg.ones : !teg.tensor<[n=2] x i32>
  %t0 = teg.sink @diag %diag : !teg.tensor<[h=2, w=3] x f32> -> !teg.token
  %t1 = teg.sink @max %m : !teg.tensor<[h=2, w=3] x f32> -> !teg.token
  %t2 = teg.sink @min %n : !teg.tensor<[h=2, w=3] x f32> -> !teg.token
  %t3 = teg.sink @ones %o : !teg.tensor<[n=2] x i32> -> !teg.token
  teg.sequence_point %t0, %t1, %t2, %t3 : !teg.token, !teg.token, !teg.token, !teg.token
}"#;
    let x = f32s(&[2, 3], &[5.0, 1.5, 1.0, 0.5, 5.0, 3.0]);
    let out = run(text, &[("x", x)]).unwrap();
    assert_eq!(values(&out["diag"]), [5.0, 0.0, 0.0, 0.0, 5.0, 0.0]);
    assert_eq!(values(&out["max"]), [5.0, 1.5, 2.0, 0.5, 5.0, 3.0]);
    assert_eq!(values(&out["min"]), [0.0, 1.0, 1.0, 0.0, 1.0, 2.0]);
    assert_eq!(out["ones"].data(), &Data::I32(vec![1, 1]));
}

#[test]
fn concat_interleave_broadcast() {
    let text = r#"teg.graph @g {
  %a = teg.source @a : !teg.tensor<[n=2] x f32>
  %b = teg.source @b : !teg.tensor<[n=2] x f32>
  %c = teg.concat %a, %b along "n" : !teg.tensor<[n=2] x f32>, !teg.tensor<[n=2] x f32> -> !teg.tensor<[n=4] x f32>
  %i = teg.interleave %a, %b along "n" : !teg.tensor<[n=2] x f32>, !teg.tensor<[n=2] x f32> -> !teg.tensor<[n=4] x f32>
  %u = teg.unsqueeze %a as "m" at 0 : !teg.tensor<[n=2] x f32> -> !teg.tensor<[m=1, n=2] x f32>
  %r = teg.broadcast %u along "m" to 3 : !teg.tensor<[m=1, n=2] x f32> -> !teg.tensor<[m=3, n=2] x f32>
  %t0 = teg.sink @c %c : !teg.tensor<[n=4] x f32> -> !teg.token
  %t1 = teg.sink @i %i : !teg.tensor<[n=4] x f32> -> !teg.token
  %t2 = teg.sink @r %r : !teg.tensor<[m=3, n=2] x f32> -> !teg.token
  teg.sequence_point %t0, %t1, %t2 : !teg.token, !teg.token, !teg.token
}"#;
    let out = run(text, &[("a", f32s(&[2], &[1.0, 2.0])), ("b", f32s(&[2], &[3.0, 4.0]))]).unwrap();
    assert_eq!(values(&out["c"]), [1.0, 2.0, 3.0, 4.0]);
    assert_eq!(values(&out["i"]), [1.0, 3.0, 2.0, 4.0]);
    assert_eq!(values(&out["r"]), [1.0, 2.0, 1.0, 2.0, 1.0, 2.0]);
}

#[test]
fn generators() {
    let gen = |op: &str, t: &str| {
        let text = format!("teg.graph @g {{\n  %r = {op} : !teg.tensor<{t}>\n  %s = teg.sink @r %r : !teg.tensor<{t}> -> !teg.token\n  teg.sequence_point %s : !teg.token\n}}\n");
        run(&text, &[]).unwrap()["r"].clone()
    };
    assert_eq!(values(&gen("teg.full 2.5", "[n=2] x f64")), [2.5, 2.5]);
    assert_eq!(values(&gen("teg.iota along \"w\"", "[h=2, w=3] x i64")), [0.0, 1.0, 2.0, 0.0, 1.0, 2.0]);
    // The index tensor of a 2x2 grid: each cell's (h, w).
    assert_eq!(values(&gen("teg.index", "[h=2, w=2, axis=2] x i64")), [0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0]);
    // Random values: in [0, 1), the same for the same seed and coordinates, different for another seed.
    let r1 = values(&gen("teg.random seed 7", "[h=4, w=4] x f32"));
    assert!(r1.iter().all(|v| (0.0..1.0).contains(v)));
    assert_eq!(r1, values(&gen("teg.random seed 7", "[h=4, w=4] x f32")));
    assert_ne!(r1, values(&gen("teg.random seed 8", "[h=4, w=4] x f32")));
    // A cell's value depends on its coordinates only: the 2x2 corner of a 4x4 is the 2x2 tensor.
    let small = values(&gen("teg.random seed 7", "[h=2, w=2] x f32"));
    assert_eq!(small, [r1[0], r1[1], r1[4], r1[5]]);
}

#[test]
fn block_ops() {
    let text = r#"teg.graph @g {
  %x = teg.source @x : !teg.tensor<[batch=2, in=3] x f32>
  %w = teg.source @w : !teg.tensor<[in=3, out=2] x f32>
  %b = teg.source @b : !teg.tensor<[out=2] x f32>
  %m = teg.matmul %x, %w : !teg.tensor<[batch=2, in=3] x f32>, !teg.tensor<[in=3, out=2] x f32> -> !teg.tensor<[batch=2, out=2] x f32>
  %l = teg.linear %x, %w, %b : !teg.tensor<[batch=2, in=3] x f32>, !teg.tensor<[in=3, out=2] x f32>, !teg.tensor<[out=2] x f32> -> !teg.tensor<[batch=2, out=2] x f32>
  %p = teg.prod %x, %w : !teg.tensor<[batch=2, in=3] x f32>, !teg.tensor<[in=3, out=2] x f32> -> !teg.tensor<[batch=2, in=3, out=2] x f32>
  %r = teg.reduce %p along ["in"] by "sum" : !teg.tensor<[batch=2, in=3, out=2] x f32> -> !teg.tensor<[batch=2, out=2] x f32>
  %t0 = teg.sink @m %m : !teg.tensor<[batch=2, out=2] x f32> -> !teg.token
  %t1 = teg.sink @l %l : !teg.tensor<[batch=2, out=2] x f32> -> !teg.token
  %t2 = teg.sink @r %r : !teg.tensor<[batch=2, out=2] x f32> -> !teg.token
  teg.sequence_point %t0, %t1, %t2 : !teg.token, !teg.token, !teg.token
}"#;
    let x = f32s(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let w = f32s(&[3, 2], &[1.0, 0.0, 0.0, 1.0, 1.0, 1.0]);
    let b = f32s(&[2], &[10.0, 20.0]);
    let out = run(text, &[("x", x), ("w", w), ("b", b)]).unwrap();
    assert_eq!(values(&out["m"]), [4.0, 5.0, 10.0, 11.0]);
    assert_eq!(values(&out["l"]), [14.0, 25.0, 20.0, 31.0]);
    // Splitting matmul into prod + sum over `in` gives the same values.
    assert_eq!(values(&out["r"]), values(&out["m"]));
}

#[test]
fn large_ops_run_threaded_and_agree_with_the_definitions() {
    // Big enough that the GEMM and the cell ops split across threads, with a ragged last chunk.
    let (m, k, n) = (301u64, 457u64, 65u64);
    let text = format!(
        "teg.graph @g {{\n  %a = teg.source @a : !teg.tensor<[m={m}, k={k}] x f32>\n  %b = teg.source @b : !teg.tensor<[k={k}, n={n}] x f32>\n  %c = teg.matmul %a, %b : !teg.tensor<[m={m}, k={k}] x f32>, !teg.tensor<[k={k}, n={n}] x f32> -> !teg.tensor<[m={m}, n={n}] x f32>\n  %e = teg.exp %a : !teg.tensor<[m={m}, k={k}] x f32>\n  %d = teg.sub %e, %a : !teg.tensor<[m={m}, k={k}] x f32>\n  %t0 = teg.sink @c %c : !teg.tensor<[m={m}, n={n}] x f32> -> !teg.token\n  %t1 = teg.sink @d %d : !teg.tensor<[m={m}, k={k}] x f32> -> !teg.token\n  teg.sequence_point %t0, %t1 : !teg.token, !teg.token\n}}\n"
    );
    let a = Array::from_fn(DType::F32, vec![m, k], |i| ((i * 7919) % 1000) as f64 / 500.0 - 1.0);
    let b = Array::from_fn(DType::F32, vec![k, n], |i| ((i * 104_729) % 997) as f64 / 498.5 - 1.0);
    let out = run(&text, &[("a", a.clone()), ("b", b.clone())]).unwrap();
    let (av, bv, (m, k, n)) = (values(&a), values(&b), (m as usize, k as usize, n as usize));
    let c = values(&out["c"]);
    for i in 0..m {
        for j in 0..n {
            let want: f64 = (0..k).map(|p| av[i * k + p] * bv[p * n + j]).sum();
            assert!((c[i * n + j] - want).abs() < 1e-3, "c[{i}, {j}] = {} but the sum is {want}", c[i * n + j]);
        }
    }
    let d = values(&out["d"]);
    for (i, &x) in av.iter().enumerate() {
        assert_eq!(d[i], ((x as f32).exp() - x as f32) as f64, "cell {i}");
    }
}

#[test]
fn empty_contractions_give_zeros_and_the_bias() {
    let text = r#"teg.graph @g {
  %x = teg.zeros : !teg.tensor<[m=3, k=0] x f32>
  %w = teg.zeros : !teg.tensor<[k=0, n=2] x f32>
  %b = teg.ones : !teg.tensor<[n=2] x f32>
  %y = teg.matmul %x, %w : !teg.tensor<[m=3, k=0] x f32>, !teg.tensor<[k=0, n=2] x f32> -> !teg.tensor<[m=3, n=2] x f32>
  %l = teg.linear %x, %w, %b : !teg.tensor<[m=3, k=0] x f32>, !teg.tensor<[k=0, n=2] x f32>, !teg.tensor<[n=2] x f32> -> !teg.tensor<[m=3, n=2] x f32>
  %s0 = teg.sink @y %y : !teg.tensor<[m=3, n=2] x f32> -> !teg.token
  %s1 = teg.sink @l %l : !teg.tensor<[m=3, n=2] x f32> -> !teg.token
  teg.sequence_point %s0, %s1 : !teg.token, !teg.token
}"#;
    let out = run(text, &[]).unwrap();
    assert_eq!(values(&out["y"]), [0.0; 6]);
    assert_eq!(values(&out["l"]), [1.0; 6]);
}

#[test]
fn empty_batches_and_outputs_verify_and_run() {
    let text = r#"teg.graph @g {
  %x = teg.zeros : !teg.tensor<[b=0, k=3] x f32>
  %w = teg.ones : !teg.tensor<[k=3, n=2] x f32>
  %y = teg.matmul %x, %w : !teg.tensor<[b=0, k=3] x f32>, !teg.tensor<[k=3, n=2] x f32> -> !teg.tensor<[b=0, n=2] x f32>
  %v = teg.ones : !teg.tensor<[b=1099511627776, k=0] x i32>
  %u = teg.zeros : !teg.tensor<[k=0, n=0] x i32>
  %z = teg.matmul %v, %u : !teg.tensor<[b=1099511627776, k=0] x i32>, !teg.tensor<[k=0, n=0] x i32> -> !teg.tensor<[b=1099511627776, n=0] x i32>
  %s0 = teg.sink @y %y : !teg.tensor<[b=0, n=2] x f32> -> !teg.token
  %s1 = teg.sink @z %z : !teg.tensor<[b=1099511627776, n=0] x i32> -> !teg.token
  teg.sequence_point %s0, %s1 : !teg.token, !teg.token
}"#;
    let out = run(text, &[]).unwrap();
    assert_eq!(out["y"].shape(), [0, 2]);
    assert_eq!((out["z"].shape(), out["z"].to_text()), (&[1 << 40, 0][..], "[] (shape [1099511627776, 0])".into()));
}

#[test]
fn an_empty_block_reduction_gives_the_identity_of_the_element_type() {
    let block = |monoid: &str| {
        format!(
            "teg.graph @g {{\n  %x = teg.zeros : !teg.tensor<[s=0] x i8>\n  %y = teg.block @b %x over [\"i\", \"l\"] [2, 0] maps [affine_map<(i, l) -> (l)>, affine_map<(i, l) -> (i)>] boxes [[1], [1]] reduce [\"l\"] by \"{monoid}\" : !teg.tensor<[s=0] x i8> -> !teg.tensor<[u=2] x i8> {{\n  ^bb0(%v: !teg.tensor<[s=1] x i8>):\n    %r = teg.reduce %v along [\"s\"] by \"sum\" : !teg.tensor<[s=1] x i8> -> !teg.tensor<[] x i8>\n    %u = teg.unsqueeze %r as \"u\" at 0 : !teg.tensor<[] x i8> -> !teg.tensor<[u=1] x i8>\n    teg.yield %u : !teg.tensor<[u=1] x i8>\n  }}\n  %s = teg.sink @y %y : !teg.tensor<[u=2] x i8> -> !teg.token\n}}\n"
        )
    };
    let y = |monoid: &str| run(&block(monoid), &[]).unwrap()["y"].data().clone();
    assert_eq!(y("max"), Data::I8(vec![-128, -128]));
    assert_eq!(y("min"), Data::I8(vec![127, 127]));
    assert_eq!(y("prod"), Data::I8(vec![1, 1]));
    assert_eq!(y("sum"), Data::I8(vec![0, 0]));
}

#[test]
fn f16_and_bf16_results_are_rounded_once_from_f64() {
    // 1 + 2^-11 + 2^-30 lies just above a tie of f16 (and 1 + 2^-8 + 2^-30 of bf16): rounding to f32 first would
    // land on the tie and round down.
    let text = r#"teg.graph @g {
  %x = teg.source @x : !teg.tensor<[n=2] x f64>
  %h = teg.cast %x : !teg.tensor<[n=2] x f64> -> !teg.tensor<[n=2] x f16>
  %b = teg.cast %x : !teg.tensor<[n=2] x f64> -> !teg.tensor<[n=2] x bf16>
  %s0 = teg.sink @h %h : !teg.tensor<[n=2] x f16> -> !teg.token
  %s1 = teg.sink @b %b : !teg.tensor<[n=2] x bf16> -> !teg.token
}"#;
    let x = Array::new(
        vec![2],
        Data::F64(vec![1.0 + 2f64.powi(-11) + 2f64.powi(-30), 1.0 + 2f64.powi(-8) + 2f64.powi(-30)]),
    )
    .unwrap();
    let out = run(text, &[("x", x)]).unwrap();
    assert_eq!(values(&out["h"])[0], 1.0 + 2f64.powi(-10));
    assert_eq!(values(&out["b"])[1], 1.0 + 2f64.powi(-7));
}

#[test]
fn conv2d_matches_the_definition() {
    let text = r#"teg.graph @g {
  %x = teg.source @x : !teg.tensor<[n=1, c=2, h=5, w=5] x f64>
  %k = teg.source @k : !teg.tensor<[o=3, c=2, kh=3, kw=2] x f64>
  %y = teg.conv2d %x, %k strides [2, 1] dilations [1, 2] padding [1, 1] : !teg.tensor<[n=1, c=2, h=5, w=5] x f64>, !teg.tensor<[o=3, c=2, kh=3, kw=2] x f64> -> !teg.tensor<[n=1, o=3, h=3, w=5] x f64>
  %t = teg.sink @y %y : !teg.tensor<[n=1, o=3, h=3, w=5] x f64> -> !teg.token
  teg.sequence_point %t : !teg.token
}"#;
    let x = Array::from_fn(DType::F64, vec![1, 2, 5, 5], |i| (i as f64 * 0.37).sin());
    let k = Array::from_fn(DType::F64, vec![3, 2, 3, 2], |i| (i as f64 * 0.11).cos());
    let out = run(text, &[("x", x.clone()), ("k", k.clone())]).unwrap();
    let (xv, kv, yv) = (values(&x), values(&k), values(&out["y"]));
    for o in 0..3i64 {
        for y in 0..3i64 {
            for z in 0..5i64 {
                let mut acc = 0.0;
                for c in 0..2i64 {
                    for i in 0..3i64 {
                        for j in 0..2i64 {
                            let (r, q) = (y * 2 - 1 + i, z - 1 + j * 2);
                            if (0..5).contains(&r) && (0..5).contains(&q) {
                                acc += xv[(c * 25 + r * 5 + q) as usize] * kv[(o * 12 + c * 6 + i * 2 + j) as usize];
                            }
                        }
                    }
                }
                let got = yv[(o * 15 + y * 5 + z) as usize];
                assert!((got - acc).abs() < 1e-12, "o={o} y={y} z={z}: {got} vs {acc}");
            }
        }
    }
}

#[test]
fn bad_bindings_name_the_source() {
    let text = unary_graph("[n=4] x f32", "teg.abs %x : !teg.tensor<[n=4] x f32>", "[n=4] x f32");
    assert_eq!(run(&text, &[]).unwrap_err(), "source 'x' is not bound to an input");
    let wrong = run(&text, &[("x", f32s(&[2], &[1.0, 2.0]))]).unwrap_err();
    assert_eq!(wrong, "source 'x' is f32 of shape [4] but its input is f32 of shape [2]");
    let ints = Array::new(vec![4], Data::I32(vec![1, 2, 3, 4])).unwrap();
    assert!(run(&text, &[("x", ints)]).unwrap_err().contains("is f32 of shape [4] but its input is i32"));
}

#[test]
fn integer_division_by_zero_is_an_error() {
    let text = r#"teg.graph @g {
  %a = teg.source @a : !teg.tensor<[n=2] x i32>
  %d = teg.div %a, %a : !teg.tensor<[n=2] x i32>
  %t = teg.sink @d %d : !teg.tensor<[n=2] x i32> -> !teg.token
  teg.sequence_point %t : !teg.token
}"#;
    let a = Array::new(vec![2], Data::I32(vec![3, 0])).unwrap();
    assert_eq!(run(text, &[("a", a)]).unwrap_err(), "integer division by zero");
}

#[test]
fn user_block_operators_run_their_body_per_index_point() {
    // A matmul declared in the IR: index (i, j, l), l reduced by sum; the body multiplies two 1x1 boxes.
    let ub =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/test/lit/dialect/teg/user-block.tap")).unwrap();
    let x = f32s(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let w = f32s(&[3, 2], &[1.0, 0.0, 0.0, 1.0, 1.0, 1.0]);
    let sig = f32s(&[7], &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let src = f32s(&[12], &(0..12).map(|v| v as f32).collect::<Vec<_>>());
    let out = run(&ub, &[("x", x), ("w", w), ("sig", sig), ("src", src)]).unwrap();
    // The mixed map: output cell a + 4b holds input cell 3a + b.
    let mixed: Vec<f64> = (0..12).map(|u| ((u % 4) * 3 + u / 4) as f64).collect();
    assert_eq!(values(&out["mixed"]), mixed);
    assert_eq!(values(&out["mm"]), [4.0, 5.0, 10.0, 11.0]);
    assert_eq!(values(&out["builtin"]), values(&out["mm"]));
    // A window of 3 summed at stride 2 (a halo of 1): [0+1+2, 2+3+4, 4+5+6].
    assert_eq!(values(&out["window"]), [3.0, 9.0, 15.0]);
}

#[test]
fn evaluating_unverified_ir_is_an_error_not_a_panic() {
    let mut ctx = Context::new(tapestry::dialects::all());
    let text = "teg.graph @g {\n  %x = teg.source @x : !teg.tensor<[m=2, k=3] x f32>\n  %w = teg.source @w : !teg.tensor<[k=3, n=4] x f32>\n  %y = teg.matmul %x, %w : !teg.tensor<[m=2, k=3] x f32>, !teg.tensor<[k=3, n=4] x f32> -> !teg.tensor<[m=2, n=5] x f32>\n  %s = teg.sink @y %y : !teg.tensor<[m=2, n=5] x f32> -> !teg.token\n  teg.sequence_point %s : !teg.token\n}\n";
    let module = tapestry::parse::parse_file(&mut ctx, "t.tap", text).unwrap();
    let graph = tapestry::dialects::teg::find_graph(&ctx, module, "g").unwrap();
    let inputs: tapestry::dialects::teg::eval::Values =
        [("x".to_string(), f32s(&[2, 3], &[1.0; 6])), ("w".to_string(), f32s(&[3, 4], &[1.0; 12]))]
            .into_iter()
            .collect();
    let err = evaluate(&ctx, graph, &inputs).unwrap_err();
    assert!(err.message.starts_with("the graph does not verify: 'teg.matmul' op result type"), "{}", err.message);
    let not_graph = tapestry::ir::walk::preorder(&ctx.body, module)[1];
    assert!(evaluate(&ctx, not_graph, &inputs).unwrap_err().message.contains("is not a teg.graph"));
    assert!(tapestry::dialects::teg::find_graph(&ctx, module, "h").is_none());
}
