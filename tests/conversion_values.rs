//! Values before = values after: random programs of the `pair` test dialect compute the same numbers before and
//! after `test-convert-pairs` (pairs split into two `i32`, signatures flattened), through a small interpreter of
//! `pair`, `arith.addi`, `func.return` and the conversion's casts.

use proptest::prelude::*;
use std::collections::HashMap;
use tapestry::ir::walk::preorder;
use tapestry::ir::{Context, OpId, ValueId};
use tapestry::passes::{Instrumentation, PassManager, PassRegistry};

/// A value of the test programs.
#[derive(Copy, Clone, Debug, PartialEq)]
enum Val {
    I32(i32),
    Pair(i32, i32),
}

fn flat(vals: &[Val]) -> Vec<i32> {
    vals.iter()
        .flat_map(|v| match *v {
            Val::I32(x) => vec![x],
            Val::Pair(x, y) => vec![x, y],
        })
        .collect()
}

/// One step of a random program: which op, and which earlier values (by position among its kind) it reads.
#[derive(Clone, Debug)]
enum Step {
    Make(usize, usize),
    Add(usize, usize),
    First(usize),
    AddI(usize, usize),
}

fn step() -> impl Strategy<Value = Step> {
    let i = || 0usize..64;
    prop_oneof![
        (i(), i()).prop_map(|(a, b)| Step::Make(a, b)),
        (i(), i()).prop_map(|(a, b)| Step::Add(a, b)),
        i().prop_map(Step::First),
        (i(), i()).prop_map(|(a, b)| Step::AddI(a, b)),
    ]
}

/// The program's text: `@f(%a: i32, %b: i32, %p: !pair.pair) -> (i32, !pair.pair)` running `steps`.
fn program(steps: &[Step]) -> String {
    let (mut ints, mut pairs) = (vec!["%a".to_string(), "%b".to_string()], vec!["%p".to_string()]);
    let mut body = String::new();
    for (n, s) in steps.iter().enumerate() {
        let pick = |list: &[String], i: usize| list[i % list.len()].clone();
        let line = match *s {
            Step::Make(x, y) => {
                format!("%v{n} = pair.make {}, {} : (i32, i32) -> !pair.pair", pick(&ints, x), pick(&ints, y))
            }
            Step::Add(x, y) => format!(
                "%v{n} = pair.add {}, {} : (!pair.pair, !pair.pair) -> !pair.pair",
                pick(&pairs, x),
                pick(&pairs, y)
            ),
            Step::First(x) => format!("%v{n} = pair.first {} : (!pair.pair) -> i32", pick(&pairs, x)),
            Step::AddI(x, y) => format!("%v{n} = arith.addi {}, {} : i32", pick(&ints, x), pick(&ints, y)),
        };
        body.push_str(&format!("  {line}\n"));
        match s {
            Step::Make(..) | Step::Add(..) => pairs.push(format!("%v{n}")),
            _ => ints.push(format!("%v{n}")),
        }
    }
    let (i, p) = (ints.last().unwrap(), pairs.last().unwrap());
    format!(
        "func.func @f(%a: i32, %b: i32, %p: !pair.pair) -> (i32, !pair.pair) {{\n{body}  func.return {i}, {p} : i32, !pair.pair\n}}\n"
    )
}

/// Runs the function `func` on `args`; its results.
fn run(ctx: &Context, func: OpId, args: &[Val]) -> Vec<Val> {
    let region = ctx.body.regions(func)[0];
    let entry = ctx.body.region(region).blocks[0];
    let mut env: HashMap<ValueId, Val> = ctx.body.block(entry).args.iter().copied().zip(args.iter().copied()).collect();
    for op in ctx.body.block_ops(entry) {
        let ins: Vec<Val> = ctx.body.operands(op).map(|v| env[&v]).collect();
        let outs = match (ctx.op_name(op), ins.as_slice()) {
            ("func.return", _) => return ins,
            ("pair.make", &[Val::I32(x), Val::I32(y)]) => vec![Val::Pair(x, y)],
            ("pair.add", &[Val::Pair(a, b), Val::Pair(c, d)]) => vec![Val::Pair(a.wrapping_add(c), b.wrapping_add(d))],
            ("pair.first", &[Val::Pair(x, _)]) => vec![Val::I32(x)],
            ("arith.addi", &[Val::I32(x), Val::I32(y)]) => vec![Val::I32(x.wrapping_add(y))],
            ("builtin.unrealized_conversion_cast", &[Val::I32(x), Val::I32(y)]) => vec![Val::Pair(x, y)],
            ("builtin.unrealized_conversion_cast", &[Val::Pair(x, y)]) => vec![Val::I32(x), Val::I32(y)],
            (name, ins) => panic!("cannot run {name} on {ins:?}"),
        };
        env.extend(ctx.body.results(op).zip(outs));
    }
    panic!("no func.return")
}

fn convert(ctx: &mut Context, module: OpId, pipeline: &str) {
    let mut pm = PassManager::parse(pipeline, &PassRegistry::with_builtin()).unwrap();
    let mut sink = Vec::new();
    pm.run(ctx, module, &mut Instrumentation::quiet(&mut sink)).unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn conversion_keeps_values(steps in proptest::collection::vec(step(), 0..40), a: i32, b: i32, p: (i32, i32),
                               full: bool) {
        let text = program(&steps);
        let mut ctx = Context::new(tapestry::dialects::all());
        let module = tapestry::parse::parse_file(&mut ctx, "p.tap", &text).unwrap();
        let func = preorder(&ctx.body, module)[0];
        let before = run(&ctx, func, &[Val::I32(a), Val::I32(b), Val::Pair(p.0, p.1)]);
        let pipeline = if full { "builtin.module(test-convert-pairs{full=true})" } else { "builtin.module(test-convert-pairs)" };
        convert(&mut ctx, module, pipeline);
        let after = run(&ctx, func, &[Val::I32(a), Val::I32(b), Val::I32(p.0), Val::I32(p.1)]);
        prop_assert!(preorder(&ctx.body, module).iter().all(|&o| !ctx.op_name(o).starts_with("pair.")), "{text}");
        prop_assert_eq!(flat(&before), flat(&after), "{}", text);
    }
}
