//! Embedding Tapestry as a library: register your own dialect, op (with a pretty syntax) and pass next to the
//! built-in ones, build a pass pipeline from a string, run it on a module parsed from text, and print the result.
//! The pass is a dialect conversion: `acme.double` on `index` becomes `arith.addi` on `i64`, and function
//! signatures follow the type conversion.
//!
//! Run: `cargo run --example embed`.

use std::sync::Arc;
use tapestry::dialects::arith::AddIOp;
use tapestry::ir::conversion::{
    apply_conversion, ConversionMode, ConversionPattern, ConversionRewriter, ConversionTarget, Legality, OpAdaptor,
    TypeConverter,
};
use tapestry::ir::print::{op_to_string, PrintOptions};
use tapestry::ir::{Arity, Context, Diagnostic, DialectInfo, OpId, OpInfo, OpTrait, Registry, Syntax, TypeKind};
use tapestry::passes::{Changed, Instrumentation, Pass, PassEntry, PassEnv, PassInfo, PassManager, PassRegistry};

/// `acme.double %x : i32`: twice its operand.
const DOUBLE: OpInfo = OpInfo {
    operands: Arity::Exact(1),
    results: Arity::Exact(1),
    traits: &[OpTrait::Pure, OpTrait::SameOperandsAndResultType],
    syntax: Syntax::Format("$operands attr-dict `:` type($results)"),
    ..OpInfo::new("acme.double", "twice its operand")
};

/// Converts `acme.double %x` into `arith.addi %x', %x'` on the converted operand.
struct LowerDouble;

impl ConversionPattern for LowerDouble {
    fn name(&self) -> &'static str {
        "LowerDouble"
    }
    fn root(&self) -> Option<&'static str> {
        Some("acme.double")
    }
    fn match_and_rewrite(&self, op: OpId, operands: &OpAdaptor, rw: &mut ConversionRewriter<'_, '_>) -> bool {
        let Some(x) = operands.get(0) else { return false };
        let ty = rw.body.value_type(x);
        let sum = AddIOp::build(&mut **rw, x, x, ty).result(rw);
        rw.replace_op(op, &[sum]);
        true
    }
}

static LOWER_INFO: PassInfo = PassInfo {
    argument: "acme-lower-double",
    name: "AcmeLowerDouble",
    description: "Lower acme.double to arith, index to i64",
    anchor: Some("builtin.module"),
    options: &[],
    statistics: &[("num-lowered", "Number of acme.double ops lowered")],
};

/// A pass of our own: a full conversion of the function to `arith` on `i64`.
struct LowerDoublePass;

impl Pass for LowerDoublePass {
    fn info(&self) -> &'static PassInfo {
        &LOWER_INFO
    }
    fn run(&mut self, ctx: &mut Context, op: OpId, env: &mut PassEnv<'_>) -> Result<Changed, Vec<Diagnostic>> {
        let types = TypeConverter::new()
            .rule(|ints, ty| matches!(ints.type_kind(ty), TypeKind::Index).then(|| ints.int_type(64)));
        let target = ConversionTarget::new()
            .dialect("arith", Legality::TypesLegal)
            .dialect("func", Legality::TypesLegal)
            .dialect("acme", Legality::Illegal);
        let mut patterns: Vec<&dyn ConversionPattern> = vec![&LowerDouble];
        patterns.extend(tapestry::dialects::func::conversion::PATTERNS);
        let outcome =
            apply_conversion(ctx, op, &target, &patterns, &types, ConversionMode::Full).map_err(|d| vec![d])?;
        env.stats.add("num-lowered", outcome.rewrites);
        Ok(if outcome.rewrites > 0 { Changed::Yes } else { Changed::No })
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

    let text = "func.func @f(%x: index) -> index {\n  %d = acme.double %x : index\n  %e = acme.double %d : index\n  func.return %e : index\n}\n";
    let module = tapestry::parse::parse_file(&mut ctx, "input.tap", text).expect("the input parses");
    let mut pm = PassManager::parse("builtin.module(acme-lower-double, func.func(canonicalize, cse))", &passes)
        .expect("the pipeline is valid");
    let mut log = Vec::new();
    let mut instr = Instrumentation::quiet(&mut log);
    pm.run(&mut ctx, module, &mut instr).expect("the pipeline succeeds");
    let lowered = instr.statistics.values().map(|(s, _)| s.get("num-lowered")).sum::<u64>();

    let out = op_to_string(&ctx, module, PrintOptions::default());
    println!("{out}");
    assert!(out.contains("func.func @f(%arg0: i64) -> i64"), "{out}");
    assert!(out.contains("arith.addi %arg0, %arg0 : i64") && !out.contains("acme.double") && lowered == 4, "{out}");
}
