//! The rewrite machinery through the library API: a user pattern on a user-registered op, folding with constant
//! materialization, the iteration and rewrite limits of the greedy driver, and a pass manager built in code.

use std::sync::Arc;
use tapestry::dialects::arith::{AddIOp, ConstantOp};
use tapestry::ir::print::{op_to_string, PrintOptions};
use tapestry::ir::rewrite::{apply_patterns_greedily, GreedyConfig, RewritePattern, Rewriter};
use tapestry::ir::{Arity, Context, OpId, OpInfo, OpTrait, Registry, Syntax};
use tapestry::passes::{Instrumentation, PassManager, PassRegistry};

/// `demo.double %x` → `arith.addi %x, %x`.
struct ExpandDouble;

impl RewritePattern for ExpandDouble {
    fn name(&self) -> &'static str {
        "ExpandDouble"
    }
    fn root(&self) -> Option<&'static str> {
        Some("demo.double")
    }
    fn match_and_rewrite(&self, op: OpId, rw: &mut Rewriter<'_>) -> bool {
        let x = rw.body.operand(op, 0);
        let ty = rw.body.value_type(x);
        let v = AddIOp::build(rw, x, x, ty).result(rw);
        rw.replace_op(op, &[v]);
        true
    }
}

/// A pattern that never reaches a fixed point: it rewrites every `demo.spin` into a fresh `demo.spin`.
struct Spin;

impl RewritePattern for Spin {
    fn name(&self) -> &'static str {
        "Spin"
    }
    fn root(&self) -> Option<&'static str> {
        Some("demo.spin")
    }
    fn match_and_rewrite(&self, op: OpId, rw: &mut Rewriter<'_>) -> bool {
        let ty = rw.body.value_type(rw.body.result(op, 0));
        let new = rw.op_state("demo.spin").results(&[ty]);
        let v = rw.create_value(new);
        rw.replace_op(op, &[v]);
        true
    }
}

const DOUBLE: OpInfo = OpInfo {
    operands: Arity::Exact(1),
    results: Arity::Exact(1),
    traits: &[OpTrait::Pure, OpTrait::SameOperandsAndResultType],
    syntax: Syntax::Format("$operands attr-dict `:` type($results)"),
    ..OpInfo::new("demo.double", "doubles its operand")
};

const SPIN: OpInfo = OpInfo { results: Arity::Exact(1), ..OpInfo::new("demo.spin", "rewrites itself forever") };

const MARK: OpInfo = OpInfo { ..OpInfo::new("demo.mark", "becomes a box") };
const BOX: OpInfo = OpInfo {
    regions: Arity::Exact(1),
    traits: &[OpTrait::NoTerminator, OpTrait::SingleBlock],
    ..OpInfo::new("demo.box", "holds a region")
};

/// `demo.mark` → `demo.box` whose block holds a constant and an add built at the block's end, then a constant
/// after the box (insertion after an op).
struct BoxMark;

impl RewritePattern for BoxMark {
    fn name(&self) -> &'static str {
        "BoxMark"
    }
    fn root(&self) -> Option<&'static str> {
        Some("demo.mark")
    }
    fn match_and_rewrite(&self, op: OpId, rw: &mut Rewriter<'_>) -> bool {
        let i32 = rw.interners().int_type(32);
        let region = rw.create_region();
        let outer = rw.insertion_point();
        let block = rw.create_block(region, &[i32]);
        let arg = rw.body.block(block).args[0];
        let seven = rw.interners().int_attr(7, i32);
        let c = ConstantOp::build(rw, i32, seven).result(rw);
        rw.set_insertion_point_to_end(block);
        AddIOp::build(rw, arg, c, i32);
        rw.set_insertion_point(outer);
        let state = rw.op_state("demo.box").region(region);
        let boxed = rw.create(state);
        rw.set_insertion_point_after(boxed);
        let eight = rw.interners().int_attr(8, i32);
        ConstantOp::build(rw, i32, eight);
        rw.erase_op(op);
        true
    }
}

fn context() -> Context {
    let mut registry = Registry::new();
    tapestry::dialects::register_all(&mut registry);
    registry.register_dialect(tapestry::ir::DialectInfo {
        name: "demo",
        summary: "test ops",
        parse_type: None,
        parse_attr: None,
        materialize_constant: None,
    });
    registry.register_op(DOUBLE);
    registry.register_op(SPIN);
    registry.register_op(MARK);
    registry.register_op(BOX);
    Context::new(Arc::new(registry))
}

fn parse(ctx: &mut Context, text: &str) -> OpId {
    tapestry::parse::parse_file(ctx, "t.tap", text).unwrap_or_else(|d| panic!("{d:?}"))
}

fn print(ctx: &Context, op: OpId) -> String {
    op_to_string(ctx, op, PrintOptions::default())
}

#[test]
fn user_pattern_then_folding_reach_a_fixed_point() {
    let mut ctx = context();
    let text = "func.func @f() -> i32 {\n  %c = arith.constant 21 : i32\n  %d = demo.double %c : i32\n  func.return %d : i32\n}\n";
    let module = parse(&mut ctx, text);
    let outcome = apply_patterns_greedily(&mut ctx, module, &[&ExpandDouble], GreedyConfig::default());
    assert!(outcome.converged);
    assert_eq!((outcome.rewrites, outcome.folds), (1, 1));
    let printed = print(&ctx, module);
    assert!(printed.contains("%0 = arith.constant 42 : i32\n    func.return %0 : i32"), "{printed}");
    assert!(tapestry::ir::verify::verify(&ctx, module, Default::default()).is_empty());
}

#[test]
fn iteration_and_rewrite_limits_stop_a_cycle() {
    let mut ctx = context();
    ctx.allow_unregistered = true;
    let module = parse(&mut ctx, "%s = \"demo.spin\"() : () -> i32\n\"test.keep\"(%s) : (i32) -> ()\n");
    let config = GreedyConfig { max_iterations: 3, max_rewrites: -1, ..GreedyConfig::default() };
    let outcome = apply_patterns_greedily(&mut ctx, module, &[&Spin], config);
    assert!(!outcome.converged);
    let limited = GreedyConfig { max_rewrites: 5, ..config };
    let outcome = apply_patterns_greedily(&mut ctx, module, &[&Spin], limited);
    assert_eq!(outcome.rewrites, 5);
}

#[test]
fn a_pipeline_built_from_text_runs_on_a_module() {
    let mut ctx = context();
    let text = "func.func @f(%x: i32) -> i32 {\n  %a = arith.muli %x, %x : i32\n  %b = arith.muli %x, %x : i32\n  %c = arith.addi %a, %b : i32\n  %z = arith.constant 0 : i32\n  %d = arith.addi %c, %z : i32\n  func.return %d : i32\n}\n";
    let module = parse(&mut ctx, text);
    let mut pm =
        PassManager::parse("builtin.module(func.func(canonicalize, cse))", &PassRegistry::with_builtin()).unwrap();
    let mut sink = Vec::new();
    pm.run(&mut ctx, module, &mut Instrumentation::quiet(&mut sink)).unwrap();
    let printed = print(&ctx, module);
    assert_eq!(printed.matches("arith.muli").count(), 1, "{printed}");
    assert!(!printed.contains("arith.constant"), "{printed}");
}

#[test]
fn a_pattern_builds_an_op_with_a_region_and_inserts_anywhere() {
    let mut ctx = context();
    let module = parse(&mut ctx, "func.func @f() {\n  \"demo.mark\"() : () -> ()\n  func.return\n}\n");
    let config = GreedyConfig { fold: false, is_dead: |_, _| false, ..GreedyConfig::default() };
    let outcome = apply_patterns_greedily(&mut ctx, module, &[&BoxMark], config);
    assert_eq!(outcome.rewrites, 1);
    let printed = print(&ctx, module);
    let expected = "  func.func @f() {\n    \"demo.box\"() ({\n    ^bb0(%arg0: i32):\n      %1 = arith.constant 7 : i32\n      %2 = arith.addi %arg0, %1 : i32\n    }) : () -> ()\n    %0 = arith.constant 8 : i32\n    func.return\n  }";
    assert!(printed.contains(expected), "{printed}");
    assert!(tapestry::ir::verify::verify(&ctx, module, Default::default()).is_empty(), "{printed}");
}
