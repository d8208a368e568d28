//! Embedding Tapestry as a library: register your own dialect, op (with a pretty syntax) and pass next to the
//! built-in ones, build a pass pipeline from a string, run it on a module parsed from text, and print the result.
//!
//! Run: `cargo run --example embed`.

use std::sync::Arc;
use tapestry::ir::builder::OpState;
use tapestry::ir::print::{op_to_string, PrintOptions};
use tapestry::ir::rewrite::{apply_patterns_greedily, GreedyConfig, RewritePattern, Rewriter};
use tapestry::ir::{Arity, Context, Diagnostic, DialectInfo, Loc, OpId, OpInfo, OpTrait, Registry, Syntax};
use tapestry::passes::{Changed, Instrumentation, Pass, PassEntry, PassEnv, PassInfo, PassManager, PassRegistry};

/// `acme.double %x : i32`: twice its operand.
const DOUBLE: OpInfo = OpInfo {
    operands: Arity::Exact(1),
    results: Arity::Exact(1),
    traits: &[OpTrait::Pure, OpTrait::SameOperandsAndResultType],
    syntax: Syntax::Format("$operands attr-dict `:` type($results)"),
    ..OpInfo::new("acme.double", "twice its operand")
};

/// Rewrites `acme.double %x` into `arith.addi %x, %x`.
struct LowerDouble;

impl RewritePattern for LowerDouble {
    fn name(&self) -> &'static str {
        "LowerDouble"
    }
    fn root(&self) -> Option<&'static str> {
        Some("acme.double")
    }
    fn match_and_rewrite(&self, op: OpId, rw: &mut Rewriter<'_>) -> bool {
        let x = rw.ctx.body.operand(op, 0);
        let ty = rw.ctx.body.value_type(x);
        let add = OpState::new(rw.ctx, "arith.addi", Loc::Unknown).operands(&[x, x]).results(&[ty]);
        let add = rw.create(add);
        let sum = rw.ctx.body.result(add, 0);
        rw.replace_op(op, &[sum]);
        true
    }
}

static LOWER_INFO: PassInfo = PassInfo {
    argument: "acme-lower-double",
    name: "AcmeLowerDouble",
    description: "Lower acme.double to arith",
    anchor: Some("func.func"),
    options: &[],
    statistics: &[("num-lowered", "Number of acme.double ops lowered")],
};

/// A pass of our own: applies `LowerDouble` with the greedy driver.
struct LowerDoublePass;

impl Pass for LowerDoublePass {
    fn info(&self) -> &'static PassInfo {
        &LOWER_INFO
    }
    fn run(&mut self, ctx: &mut Context, op: OpId, env: &mut PassEnv<'_>) -> Result<Changed, Vec<Diagnostic>> {
        let outcome = apply_patterns_greedily(ctx, op, &[&LowerDouble], GreedyConfig::default());
        env.stats.add("num-lowered", outcome.rewrites);
        Ok(if outcome.changed() { Changed::Yes } else { Changed::No })
    }
}

fn main() {
    // Dialects and ops: the built-in ones plus ours.
    let mut registry = Registry::new();
    tapestry::dialects::register_all(&mut registry);
    registry.register_dialect(DialectInfo {
        name: "acme",
        summary: "an embedder's own ops",
        parse_type: None,
        parse_attr: None,
        materialize_constant: None,
    });
    registry.register_op(DOUBLE);
    let mut ctx = Context::new(Arc::new(registry));

    // Passes: the built-in ones plus ours.
    let mut passes = PassRegistry::with_builtin();
    passes.register_pass(PassEntry { info: &LOWER_INFO, create: |_| Box::new(LowerDoublePass) });

    let text = "func.func @f(%x: i32) -> i32 {\n  %c = arith.constant 0 : i32\n  %d = acme.double %x : i32\n  %e = arith.addi %d, %c : i32\n  func.return %e : i32\n}\n";
    let module = tapestry::parse::parse_file(&mut ctx, "input.tap", text).expect("the input parses");
    let mut pm = PassManager::parse("builtin.module(func.func(acme-lower-double, canonicalize, cse))", &passes)
        .expect("the pipeline is valid");
    let mut log = Vec::new();
    let mut instr = Instrumentation::quiet(&mut log);
    pm.run(&mut ctx, module, &mut instr).expect("the pipeline succeeds");
    let lowered = instr.statistics.values().map(|(s, _)| s.get("num-lowered")).sum::<u64>();

    let out = op_to_string(&ctx, module, PrintOptions::default());
    println!("{out}");
    assert!(out.contains("arith.addi %arg0, %arg0 : i32") && !out.contains("acme.double") && lowered == 1);
}
