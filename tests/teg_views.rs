//! Strided views (permute, reverse, slice, select, squeeze, unsqueeze, broadcast) share their operand's cells;
//! cell ops read them in place and other ops read dense copies. Random chains of views feeding cell ops must give
//! exactly what the same graph gives with every view copied out (a one-operand concat after each view is a copy).

use indexmap::IndexMap;
use proptest::prelude::*;
use tapestry::array::{Array, Data};
use tapestry::dialects::teg::eval::evaluate;

struct Gen(u64);

impl Gen {
    fn int(&mut self, lo: i64, hi: i64) -> i64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        lo + (self.0 % (hi - lo + 1) as u64) as i64
    }
}

fn ty(dims: &[(String, u64)]) -> String {
    let d: Vec<String> = dims.iter().map(|(n, e)| format!("{n}={e}")).collect();
    format!("!teg.tensor<[{}] x f64>", d.join(", "))
}

/// A random strided view of a value of dimensions `dims`: its op text (`$X` for the operand) and result dims.
fn view(g: &mut Gen, dims: &[(String, u64)], fresh: usize) -> (String, Vec<(String, u64)>) {
    let t = ty(dims);
    let rank = dims.len();
    let k = if rank == 0 { 0 } else { g.int(0, rank as i64 - 1) as usize };
    let name = |k: usize| dims[k].0.clone();
    let mut out = dims.to_vec();
    let text = match (g.int(0, 6), rank) {
        (0, 2..) => {
            let j = (k + 1) % rank;
            out.swap(k, j);
            let order: Vec<String> = out.iter().map(|d| format!("\"{}\"", d.0)).collect();
            format!("teg.permute $X to [{}] : {t} -> {}", order.join(", "), ty(&out))
        }
        (1, 1..) => format!("teg.reverse $X along [\"{}\"] : {t} -> {t}", name(k)),
        (2, 1..) if dims[k].1 > 0 => {
            let n = dims[k].1 as i64;
            let step: i64 = [1, 2, -1, -2][g.int(0, 3) as usize];
            let (start, stop) = if step > 0 {
                let a = g.int(0, n);
                (a, g.int(a, n))
            } else {
                let a = g.int(0, n - 1);
                (a, g.int(-1, a))
            };
            out[k].1 = start.abs_diff(stop).div_ceil(step.unsigned_abs());
            format!("teg.slice $X along \"{}\" from {start} to {stop} step {step} : {t} -> {}", name(k), ty(&out))
        }
        (3, 2..) if dims[k].1 > 0 => {
            let at = g.int(-(dims[k].1 as i64), dims[k].1 as i64 - 1);
            out.remove(k);
            format!("teg.select $X along \"{}\" at {at} : {t} -> {}", name(k), ty(&out))
        }
        (4, _) => {
            let at = g.int(0, rank as i64) as usize;
            out.insert(at, (format!("u{fresh}"), 1));
            format!("teg.unsqueeze $X as \"u{fresh}\" at {at} : {t} -> {}", ty(&out))
        }
        (5, 1..) if dims[k].1 == 1 => {
            out.remove(k);
            format!("teg.squeeze $X along \"{}\" : {t} -> {}", name(k), ty(&out))
        }
        (6, 1..) if dims[k].1 == 1 => {
            out[k].1 = 3;
            format!("teg.broadcast $X along \"{}\" to 3 : {t} -> {}", name(k), ty(&out))
        }
        _ => format!("teg.reverse $X along [] : {t} -> {t}"),
    };
    (text, out)
}

fn check(seed: u64) {
    let mut g = Gen(seed | 1);
    let shape = [g.int(1, 3) as u64, g.int(1, 4) as u64, g.int(1, 5) as u64];
    let mut dims: Vec<(String, u64)> = ["n", "h", "w"].iter().zip(shape).map(|(n, e)| (n.to_string(), e)).collect();
    let (mut lines, mut copied) = (Vec::new(), Vec::new());
    let x_ty = ty(&dims);
    let (mut cur, mut cur_copy) = ("%x".to_string(), "%x".to_string());
    for i in 0..g.int(1, 4) as usize {
        let (text, out) = view(&mut g, &dims, i);
        lines.push(format!("%v{i} = {}", text.replace("$X", &cur)));
        copied.push(format!("%v{i} = {}", text.replace("$X", &cur_copy)));
        // The copy: a one-operand concat along the first dimension gathers the view into an array of its own.
        match out.first() {
            Some((d, _)) => copied.push(format!("%c{i} = teg.concat %v{i} along \"{d}\" : {t} -> {t}", t = ty(&out))),
            None => copied.push(format!("%c{i} = teg.neg %v{i} : {t}\n  %c{i}b = teg.neg %c{i} : {t}", t = ty(&out))),
        }
        cur = format!("%v{i}");
        cur_copy = if out.is_empty() { format!("%c{i}b") } else { format!("%c{i}") };
        dims = out;
    }
    let t = ty(&dims);
    let tail = |v: &str| {
        format!("%a = teg.mul {v}, {v} : {t}\n  %b = teg.sub %a, {v} : {t}\n  %c = teg.neg {v} : {t}\n  %s0 = teg.sink @b %b : {t} -> !teg.token\n  %s1 = teg.sink @c %c : {t} -> !teg.token\n  %s2 = teg.sink @v {v} : {t} -> !teg.token\n  teg.sequence_point %s0, %s1, %s2 : !teg.token, !teg.token, !teg.token")
    };
    let graph = |body: &[String], v: &str| {
        format!("teg.graph @g {{\n  %x = teg.source @x : {x_ty}\n  {}\n  {}\n}}\n", body.join("\n  "), tail(v))
    };
    let (viewed, copied) = (graph(&lines, &cur), graph(&copied, &cur_copy));
    let n = shape.iter().product::<u64>();
    let x = Array::new(shape.to_vec(), Data::F64((0..n).map(|i| i as f64 * 0.5 - 3.0).collect())).unwrap();
    let inputs: IndexMap<String, Array> = [("x".to_string(), x)].into();
    let run = |text: &str| {
        let mut ctx = tapestry::context();
        let module = tapestry::parse_and_verify(&mut ctx, "t.tap", text).unwrap_or_else(|e| panic!("{text}\n{e:?}"));
        let graph = tapestry::dialects::teg::find_graph(&ctx, module, "g").unwrap();
        evaluate(&ctx, graph, &inputs).unwrap_or_else(|e| panic!("{text}\n{e}"))
    };
    assert_eq!(run(&viewed), run(&copied), "{viewed}\n{copied}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, ..ProptestConfig::default() })]
    #[test]
    fn views_read_in_place_equal_copies(seed in any::<u64>()) {
        check(seed);
    }
}
