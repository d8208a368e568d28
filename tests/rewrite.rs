//! The rewrite machinery through the library API: a user pattern on a user-registered op, folding with constant
//! materialization, the iteration and rewrite limits of the greedy driver, and a pass manager built in code.

use std::sync::Arc;
use tapestry::ir::builder::OpState;
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
        let x = rw.ctx.body.operand(op, 0);
        let ty = rw.ctx.body.value_type(x);
        let add = OpState::new(rw.ctx, "arith.addi", tapestry::ir::Loc::Unknown).operands(&[x, x]).results(&[ty]);
        let add = rw.create(add);
        let v = rw.ctx.body.result(add, 0);
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
        let ty = rw.ctx.body.value_type(rw.ctx.body.result(op, 0));
        let new = OpState::new(rw.ctx, "demo.spin", tapestry::ir::Loc::Unknown).results(&[ty]);
        let new = rw.create(new);
        let v = rw.ctx.body.result(new, 0);
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

mod conversion {
    use super::*;
    use tapestry::ir::conversion::{apply_conversion, ConversionMode, ConversionTarget, Legality};

    const TEXT: &str = "func.func @f(%x: i32) -> i32 {\n  %d = demo.double %x : i32\n  func.return %d : i32\n}\n";

    #[test]
    fn illegal_ops_are_rewritten_until_the_target_holds() {
        let mut ctx = context();
        let module = parse(&mut ctx, TEXT);
        let target = ConversionTarget::new().dialect("demo", Legality::Illegal).dialect("arith", Legality::Legal);
        let outcome = apply_conversion(&mut ctx, module, &target, &[&ExpandDouble], ConversionMode::Partial).unwrap();
        assert_eq!(outcome.rewrites, 1);
        assert!(print(&ctx, module).contains("arith.addi %arg0, %arg0 : i32"));
    }

    #[test]
    fn an_op_no_pattern_legalizes_is_reported() {
        let mut ctx = context();
        let module = parse(&mut ctx, TEXT);
        let target = ConversionTarget::new().op("demo.double", Legality::Illegal);
        let err = apply_conversion(&mut ctx, module, &target, &[], ConversionMode::Partial).unwrap_err();
        assert_eq!(err.message, "failed to legalize operation 'demo.double' that was explicitly marked illegal");
    }

    #[test]
    fn full_conversion_also_requires_undeclared_ops_to_go() {
        let mut ctx = context();
        let module = parse(&mut ctx, TEXT);
        let target = ConversionTarget::new()
            .dialect("demo", Legality::Illegal)
            .dialect("func", Legality::Legal)
            .op("builtin.module", Legality::Legal)
            .op("arith.addi", Legality::Dynamic(|ctx, op| ctx.body.operand(op, 0) != ctx.body.operand(op, 1)));
        let err = apply_conversion(&mut ctx, module, &target, &[&ExpandDouble], ConversionMode::Full).unwrap_err();
        assert_eq!(err.message, "failed to legalize operation 'arith.addi'");
    }
}
