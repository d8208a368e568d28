//! Dialect conversion throughput: a full conversion of an N-op chain with a one-for-one pattern and a one-to-two
//! type conversion (`!pair.pair` becomes two `i32`), side by side with the greedy driver applying the same
//! one-for-one rewrite (without a type change) to a chain of the same length. Only the driver call is timed
//! (median of 3); the IR is parsed before. Run: `cargo bench --bench conversion`;
//! `TAP_BENCH_SIZES=100000,1000000` (the default) selects chain lengths.

#[allow(dead_code)]
mod common;

use std::sync::Arc;
use std::time::Instant;
use tapestry::ir::conversion::{
    apply_conversion, ConversionMode, ConversionPattern, ConversionRewriter, ConversionTarget, Legality, OpAdaptor,
    TypeConverter,
};
use tapestry::ir::rewrite::{apply_patterns_greedily, GreedyConfig, RewritePattern, Rewriter};
use tapestry::ir::{Arity, Context, DialectInfo, OpId, OpInfo, Registry};

const STEP: OpInfo = OpInfo { operands: Arity::Any, results: Arity::Any, ..OpInfo::new("bench.step", "one step") };
const LOWERED: OpInfo =
    OpInfo { operands: Arity::Any, results: Arity::Any, ..OpInfo::new("bench.lowered", "one lowered step") };

/// `bench.step` → `bench.lowered` on the converted operands, with the converted result types.
struct ConvertStep;

impl ConversionPattern for ConvertStep {
    fn name(&self) -> &'static str {
        "ConvertStep"
    }
    fn root(&self) -> Option<&'static str> {
        Some("bench.step")
    }
    fn match_and_rewrite(&self, op: OpId, operands: &OpAdaptor, rw: &mut ConversionRewriter<'_, '_>) -> bool {
        let ty = rw.body.value_type(rw.body.result(op, 0));
        let results = rw.convert_type(ty);
        let state = rw.op_state("bench.lowered").operands(&operands.flat()).results(&results);
        let new = rw.create(state);
        let group: Vec<_> = rw.body.results(new).collect();
        rw.replace_op_with_groups(op, &[group]);
        true
    }
}

/// The same rewrite for the greedy driver (types unchanged).
struct RewriteStep;

impl RewritePattern for RewriteStep {
    fn name(&self) -> &'static str {
        "RewriteStep"
    }
    fn root(&self) -> Option<&'static str> {
        Some("bench.step")
    }
    fn match_and_rewrite(&self, op: OpId, rw: &mut Rewriter<'_>) -> bool {
        let operands: Vec<_> = rw.body.operands(op).collect();
        let ty = rw.body.value_type(rw.body.result(op, 0));
        let state = rw.op_state("bench.lowered").operands(&operands).results(&[ty]);
        let new = rw.create_value(state);
        rw.replace_op(op, &[new]);
        true
    }
}

fn context() -> Context {
    let mut registry = Registry::new();
    tapestry::dialects::register_all(&mut registry);
    registry.register_dialect(DialectInfo {
        name: "bench",
        summary: "benchmark ops",
        parse_type: None,
        parse_attr: None,
        materialize_constant: None,
    });
    registry.register_op(STEP);
    registry.register_op(LOWERED);
    Context::new(Arc::new(registry))
}

/// A function whose body is a chain of `n` steps on values of type `ty`.
fn chain(ctx: &mut Context, n: usize, ty: &str) -> OpId {
    let mut text = format!("func.func @f(%v0: {ty}) -> {ty} {{\n");
    for i in 0..n {
        text.push_str(&format!("  %v{} = \"bench.step\"(%v{i}) : ({ty}) -> {ty}\n", i + 1));
    }
    text.push_str(&format!("  func.return %v{n} : {ty}\n}}\n"));
    tapestry::parse::parse_file(ctx, "chain.tap", &text).expect("the chain parses")
}

fn convert(n: usize) -> f64 {
    let mut ctx = context();
    let module = chain(&mut ctx, n, "!pair.pair");
    let types = TypeConverter::new().rule_many(|ints, ty| {
        tapestry::dialects::pair::is_pair(ints, ty).then(|| vec![ints.int_type(32), ints.int_type(32)])
    });
    let target = ConversionTarget::new()
        .op("builtin.module", Legality::Legal)
        .dialect("func", Legality::TypesLegal)
        .op("bench.lowered", Legality::Legal);
    let mut patterns: Vec<&dyn ConversionPattern> = vec![&ConvertStep];
    patterns.extend(tapestry::dialects::func::conversion::PATTERNS);
    let start = Instant::now();
    let outcome = apply_conversion(&mut ctx, module, &target, &patterns, &types, ConversionMode::Full).unwrap();
    let seconds = start.elapsed().as_secs_f64();
    assert_eq!(outcome.rewrites, n as u64 + 2);
    seconds
}

fn greedy(n: usize) -> f64 {
    let mut ctx = context();
    let module = chain(&mut ctx, n, "i32");
    let start = Instant::now();
    let outcome = apply_patterns_greedily(&mut ctx, module, &[&RewriteStep], GreedyConfig::default());
    let seconds = start.elapsed().as_secs_f64();
    assert_eq!(outcome.rewrites, n as u64);
    seconds
}

fn median(f: impl Fn() -> f64) -> f64 {
    let mut runs: Vec<f64> = (0..3).map(|_| f()).collect();
    runs.sort_by(f64::total_cmp);
    runs[1]
}

fn main() {
    println!("| ops | full conversion, 1→2 types (s) | greedy, same rewrite (s) | conversion / greedy | ns per op |");
    println!("|---|---|---|---|---|");
    for n in common::sizes() {
        let (c, g) = (median(|| convert(n)), median(|| greedy(n)));
        println!("| {n} | {c:.3} | {g:.3} | {:.2} | {:.0} |", c / g, c * 1e9 / n as f64);
    }
}
