//! Dialect conversion through the library API: legality by op, dialect and predicate; partial and full
//! conversion; a one-to-two type conversion with signature conversion and materializations; and a failed
//! conversion that leaves the IR exactly as it was.

use std::sync::Arc;
use tapestry::dialects::arith::AddIOp;
use tapestry::ir::conversion::{
    apply_conversion, ConversionMode, ConversionPattern, ConversionRewriter, ConversionTarget, Legality, OpAdaptor,
    TypeConverter,
};
use tapestry::ir::print::{op_to_string, PrintOptions};
use tapestry::ir::{Arity, Context, OpId, OpInfo, OpTrait, Registry, Syntax, TypeKind};

const DOUBLE: OpInfo = OpInfo {
    operands: Arity::Exact(1),
    results: Arity::Exact(1),
    traits: &[OpTrait::Pure, OpTrait::SameOperandsAndResultType],
    syntax: Syntax::Format("$operands attr-dict `:` type($results)"),
    ..OpInfo::new("demo.double", "doubles its operand")
};

/// `demo.double %x` → `arith.addi %x', %x'` on the converted operand.
struct ConvertDouble;

impl ConversionPattern for ConvertDouble {
    fn name(&self) -> &'static str {
        "ConvertDouble"
    }
    fn root(&self) -> Option<&'static str> {
        Some("demo.double")
    }
    fn match_and_rewrite(&self, op: OpId, operands: &OpAdaptor, rw: &mut ConversionRewriter<'_, '_>) -> bool {
        let Some(x) = operands.get(0) else { return false };
        let ty = rw.body.value_type(x);
        let v = AddIOp::build(&mut **rw, x, x, ty).result(rw);
        rw.replace_op(op, &[v]);
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
    Context::new(Arc::new(registry))
}

fn parse(ctx: &mut Context, text: &str) -> OpId {
    tapestry::parse::parse_file(ctx, "t.tap", text).unwrap_or_else(|d| panic!("{d:?}"))
}

fn print(ctx: &Context, op: OpId) -> String {
    op_to_string(ctx, op, PrintOptions::default())
}

const TEXT: &str = "func.func @f(%x: i32) -> i32 {\n  %d = demo.double %x : i32\n  func.return %d : i32\n}\n";

fn no_types() -> TypeConverter {
    TypeConverter::new()
}

fn index_to_i64() -> TypeConverter {
    TypeConverter::new().rule(|ints, ty| matches!(ints.type_kind(ty), TypeKind::Index).then(|| ints.int_type(64)))
}

#[test]
fn illegal_ops_are_rewritten_until_the_target_holds() {
    let mut ctx = context();
    let module = parse(&mut ctx, TEXT);
    let target = ConversionTarget::new().dialect("demo", Legality::Illegal).dialect("arith", Legality::Legal);
    let outcome =
        apply_conversion(&mut ctx, module, &target, &[&ConvertDouble], &no_types(), ConversionMode::Partial).unwrap();
    assert_eq!(outcome.rewrites, 1);
    assert!(print(&ctx, module).contains("arith.addi %arg0, %arg0 : i32"));
}

#[test]
fn an_op_no_pattern_legalizes_is_reported() {
    let mut ctx = context();
    let module = parse(&mut ctx, TEXT);
    let target = ConversionTarget::new().op("demo.double", Legality::Illegal);
    let err = apply_conversion(&mut ctx, module, &target, &[], &no_types(), ConversionMode::Partial).unwrap_err();
    assert_eq!(err.message, "failed to legalize operation 'demo.double' that was explicitly marked illegal");
}

#[test]
fn full_conversion_also_requires_undeclared_ops_to_go() {
    let mut ctx = context();
    let module = parse(&mut ctx, TEXT);
    let target = ConversionTarget::new()
        .dialect("demo", Legality::Illegal)
        .dialect("func", Legality::Legal)
        .dynamic_op("arith.addi", |ctx, op| ctx.body.operand(op, 0) != ctx.body.operand(op, 1));
    let err =
        apply_conversion(&mut ctx, module, &target, &[&ConvertDouble], &no_types(), ConversionMode::Full).unwrap_err();
    assert_eq!(err.message, "failed to legalize operation 'arith.addi'");
}

#[test]
fn a_failed_conversion_leaves_the_ir_as_it_was() {
    let mut ctx = context();
    let text = "func.func @f(%x: index) -> index {\n  %d = demo.double %x : index\n  %e = demo.double %d : index\n  \"pair.opaque\"(%e) : (index) -> ()\n  func.return %e : index\n}\n";
    let module = parse(&mut ctx, text);
    let before = print(&ctx, module);
    let target = ConversionTarget::new()
        .dialect("demo", Legality::Illegal)
        .dialect("arith", Legality::TypesLegal)
        .dialect("func", Legality::TypesLegal);
    let mut patterns: Vec<&dyn ConversionPattern> = vec![&ConvertDouble];
    patterns.extend(tapestry::dialects::func::conversion::PATTERNS);
    let err =
        apply_conversion(&mut ctx, module, &target, &patterns, &index_to_i64(), ConversionMode::Full).unwrap_err();
    assert_eq!(err.message, "failed to legalize operation 'pair.opaque'");
    assert_eq!(print(&ctx, module), before);
    assert!(tapestry::ir::verify::verify(&ctx, module, Default::default()).is_empty());
}

#[test]
fn types_convert_with_signatures_and_casts_where_unconverted_uses_remain() {
    let mut ctx = context();
    let text = "func.func @f(%x: index) -> index {\n  %d = demo.double %x : index\n  \"pair.opaque\"(%d) : (index) -> ()\n  func.return %d : index\n}\n";
    let module = parse(&mut ctx, text);
    let target = ConversionTarget::new()
        .dialect("demo", Legality::Illegal)
        .dialect("arith", Legality::TypesLegal)
        .dialect("func", Legality::TypesLegal);
    let mut patterns: Vec<&dyn ConversionPattern> = vec![&ConvertDouble];
    patterns.extend(tapestry::dialects::func::conversion::PATTERNS);
    let outcome =
        apply_conversion(&mut ctx, module, &target, &patterns, &index_to_i64(), ConversionMode::Partial).unwrap();
    let out = print(&ctx, module);
    assert_eq!(outcome.casts, 1, "{out}");
    assert!(out.contains("func.func @f(%arg0: i64) -> i64"), "{out}");
    assert!(out.contains("%0 = arith.addi %arg0, %arg0 : i64"), "{out}");
    assert!(out.contains("%1 = builtin.unrealized_conversion_cast %0 : i64 to index"), "{out}");
    assert!(out.contains("pair.opaque %1 : (index) -> ()"), "{out}");
    assert!(out.contains("func.return %0 : i64"), "{out}");
    assert!(tapestry::ir::verify::verify(&ctx, module, Default::default()).is_empty(), "{out}");
}

#[test]
fn a_long_chain_converts_in_one_pass() {
    let mut ctx = context();
    let n = 20_000;
    let mut text = String::from("func.func @f(%v0: index) -> index {\n");
    for i in 0..n {
        text.push_str(&format!("  %v{} = demo.double %v{i} : index\n", i + 1));
    }
    text.push_str(&format!("  func.return %v{n} : index\n}}\n"));
    let module = parse(&mut ctx, &text);
    let target = ConversionTarget::new()
        .dialect("demo", Legality::Illegal)
        .dialect("arith", Legality::TypesLegal)
        .dialect("func", Legality::TypesLegal);
    let mut patterns: Vec<&dyn ConversionPattern> = vec![&ConvertDouble];
    patterns.extend(tapestry::dialects::func::conversion::PATTERNS);
    let outcome =
        apply_conversion(&mut ctx, module, &target, &patterns, &index_to_i64(), ConversionMode::Full).unwrap();
    assert_eq!((outcome.rewrites, outcome.casts), (n as u64 + 2, 0));
    assert!(tapestry::ir::verify::verify(&ctx, module, Default::default()).is_empty());
}

#[test]
fn the_failure_diagnostic_names_the_op_and_where_it_is() {
    let mut ctx = context();
    let text = "func.func @f(%a: i32, %b: i32) -> i32 {\n  %p = pair.make %a, %b : (i32, i32) -> !pair.pair\n  %q = pair.unconvertible %p : (!pair.pair) -> !pair.pair\n  %f = pair.first %q : (!pair.pair) -> i32\n  func.return %f : i32\n}\n";
    let module = parse(&mut ctx, text);
    let passes = tapestry::passes::PassRegistry::with_builtin();
    let mut pm = tapestry::passes::PassManager::parse("builtin.module(test-convert-pairs)", &passes).unwrap();
    let mut sink = Vec::new();
    let diags = pm.run(&mut ctx, module, &mut tapestry::passes::Instrumentation::quiet(&mut sink)).unwrap_err();
    let mlir = tapestry::render::render_all(&ctx, &diags, tapestry::render::Style::Mlir);
    let rich = tapestry::render::render_all(&ctx, &diags, tapestry::render::Style::Rich);
    insta::assert_snapshot!("conversion-failure.mlir-style", mlir);
    insta::assert_snapshot!("conversion-failure.rich-style", rich);
}

/// Claims to convert `demo.double` but only touches it: the op stays illegal.
struct TouchOnly;

impl ConversionPattern for TouchOnly {
    fn name(&self) -> &'static str {
        "TouchOnly"
    }
    fn root(&self) -> Option<&'static str> {
        Some("demo.double")
    }
    fn match_and_rewrite(&self, op: OpId, _: &OpAdaptor, rw: &mut ConversionRewriter<'_, '_>) -> bool {
        let unit = rw.interners().attr(tapestry::ir::Attr::Unit);
        rw.set_attr(op, "touched", unit);
        true
    }
}

#[test]
fn an_op_left_illegal_in_place_fails_instead_of_looping() {
    let mut ctx = context();
    let module = parse(&mut ctx, TEXT);
    let before = print(&ctx, module);
    let target = ConversionTarget::new().dialect("demo", Legality::Illegal);
    let err =
        apply_conversion(&mut ctx, module, &target, &[&TouchOnly], &no_types(), ConversionMode::Partial).unwrap_err();
    assert_eq!(err.message, "failed to legalize operation 'demo.double' that was explicitly marked illegal");
    assert_eq!(print(&ctx, module), before);
}
