//! Interfaces through the library API: passes ask ops and attributes questions without importing the dialect
//! that answers (memory effects decide what `dce` may erase, teg ops give their signatures through the sharding
//! interface, layout attributes their element counts, offsets and loops), and a third module attaches an
//! implementation to another dialect's op (an external model).

use std::sync::Arc;
use tapestry::interfaces::layout::layout_of;
use tapestry::interfaces::memory_effects::{effects_of, is_trivially_dead, Effect, EffectKind, Extent, MemoryEffects};
use tapestry::interfaces::sharding::{signature_of, Monoid};
use tapestry::ir::print::{op_to_string, PrintOptions};
use tapestry::ir::walk::preorder;
use tapestry::ir::{Context, OpId, Registry};
use tapestry::layout::table::Order;
use tapestry::passes::{Instrumentation, PassManager, PassRegistry};

fn context(extend: impl FnOnce(&mut Registry)) -> Context {
    let mut registry = Registry::new();
    tapestry::dialects::register_all(&mut registry);
    extend(&mut registry);
    Context::new(Arc::new(registry))
}

fn parse(ctx: &mut Context, text: &str) -> OpId {
    tapestry::parse::parse_file(ctx, "t.tap", text).unwrap_or_else(|d| panic!("{d:?}"))
}

fn find(ctx: &Context, root: OpId, name: &str) -> OpId {
    preorder(&ctx.body, root).into_iter().find(|&o| ctx.op_name(o) == name).expect("the op is there")
}

fn run(ctx: &mut Context, module: OpId, pipeline: &str) -> String {
    let mut pm = PassManager::parse(pipeline, &PassRegistry::with_builtin()).unwrap();
    let mut sink = Vec::new();
    pm.run(ctx, module, &mut Instrumentation::quiet(&mut sink)).unwrap();
    op_to_string(ctx, module, PrintOptions::default())
}

const DEAD_ADD: &str = "func.func @f(%x: i32) {\n  %a = arith.addi %x, %x : i32\n  func.return\n}\n";

#[test]
fn dce_erases_what_has_no_effects() {
    let mut ctx = context(|_| {});
    let module = parse(&mut ctx, DEAD_ADD);
    assert!(!run(&mut ctx, module, "builtin.module(dce)").contains("arith.addi"));
}

/// An embedder's model of `arith.addi` that says it writes memory (say, a trapping add it must keep).
struct TrappingAdd;

impl MemoryEffects for TrappingAdd {
    fn effects(&self, _: &Context, _: OpId) -> Vec<Effect> {
        vec![Effect::on(EffectKind::Write, "trap")]
    }
}

#[test]
fn an_external_model_changes_what_dce_may_erase() {
    let mut ctx = context(|r| r.attach_op_interface::<dyn MemoryEffects>("arith.addi", &TrappingAdd));
    let module = parse(&mut ctx, DEAD_ADD);
    let add = find(&ctx, module, "arith.addi");
    assert_eq!(effects_of(&ctx, add), Some(vec![Effect::on(EffectKind::Write, "trap")]));
    assert!(!is_trivially_dead(&ctx, add));
    for pipeline in ["builtin.module(dce)", "builtin.module(cse)", "builtin.module(canonicalize)"] {
        assert!(run(&mut ctx, module, pipeline).contains("arith.addi"), "{pipeline}");
    }
}

#[test]
fn teg_sources_and_sinks_have_effects_and_the_rest_none() {
    let mut ctx = context(|_| {});
    let text = "teg.graph @g {\n  %x = teg.source @x : !teg.tensor<[n=4] x f32>\n  %y = teg.relu %x : !teg.tensor<[n=4] x f32>\n  %s = teg.sink @y %y : !teg.tensor<[n=4] x f32> -> !teg.token\n  teg.sequence_point %s : !teg.token\n}\n";
    let module = parse(&mut ctx, text);
    let kinds = |name: &str| effects_of(&ctx, find(&ctx, module, name)).map(|e| e.iter().map(|e| e.kind).collect());
    assert_eq!(kinds("teg.source"), Some(vec![EffectKind::Read]));
    assert_eq!(kinds("teg.sink"), Some(vec![EffectKind::Write]));
    assert_eq!(kinds("teg.relu"), Some(vec![]));
}

#[test]
fn teg_block_operators_give_their_signature_through_the_sharding_interface() {
    let mut ctx = context(|_| {});
    let text = "teg.graph @g {\n  %x = teg.source @x : !teg.tensor<[m=4, k=3] x f32>\n  %w = teg.source @w : !teg.tensor<[k=3, n=2] x f32>\n  %y = teg.matmul %x, %w : !teg.tensor<[m=4, k=3] x f32>, !teg.tensor<[k=3, n=2] x f32> -> !teg.tensor<[m=4, n=2] x f32>\n  %s = teg.sink @y %y : !teg.tensor<[m=4, n=2] x f32> -> !teg.token\n  teg.sequence_point %s : !teg.token\n}\n";
    let module = parse(&mut ctx, text);
    let sig = signature_of(&ctx, find(&ctx, module, "teg.matmul")).expect("matmul has a signature");
    let index: Vec<(&str, u64)> = sig.index.iter().map(|(n, e)| (n.as_str(), *e)).collect();
    assert_eq!(index, [("m", 4), ("n", 2), ("k", 3)]);
    assert_eq!(sig.reductions, [(2, Monoid::Sum)]);
    assert_eq!((sig.inputs.len(), sig.outputs.len()), (2, 1));
    assert!(signature_of(&ctx, find(&ctx, module, "teg.source")).is_none());
}

#[test]
fn layout_attributes_answer_through_the_layout_interface() {
    let mut ctx = context(|_| {});
    let text = "%l = layout.constant #layout.cute<(2,3):(3,1)>\n";
    let module = parse(&mut ctx, text);
    let constant = find(&ctx, module, "layout.constant");
    let attr = ctx.op_attr(constant, "value").unwrap();
    let layout = layout_of(&ctx, attr).expect("a layout attribute");
    assert_eq!(layout.element_count().unwrap(), 6);
    let offsets: Vec<i64> = layout.offsets(Order::RowMajor).unwrap().into_iter().map(Option::unwrap).collect();
    assert_eq!(offsets, [0, 1, 2, 3, 4, 5]);
    let loops = layout.access_pattern(Order::RowMajor).unwrap();
    assert_eq!(loops.len(), 6);
    let not_layout = ctx.empty_dict();
    assert!(layout_of(&ctx, not_layout).is_none());
}

#[test]
fn monoids_know_their_identity_and_how_to_combine() {
    use tapestry::array::DType;
    assert_eq!(Monoid::Max.identity_int(DType::I8), -128);
    assert_eq!(Monoid::Min.identity_int(DType::I32), i32::MAX as i64);
    assert_eq!((Monoid::Max.identity_int(DType::I1), Monoid::Min.identity_int(DType::I1)), (0, 1));
    assert_eq!((Monoid::Prod.identity_int(DType::I64), Monoid::Mean.identity_f64()), (1, 0.0));
    assert_eq!(Monoid::Max.identity_f64(), f64::NEG_INFINITY);
    assert!(Monoid::Min.combine_f64(1.0, f64::NAN).is_nan());
    assert_eq!(Monoid::Sum.combine_int(i64::MAX, 1), i64::MIN);
    assert_eq!(Monoid::Prod.combine_f64(2.0, 3.5), 7.0);
}

/// The `npu` dialect's instructions report the bytes they touch as strided extents (the race detector's
/// footprints).
#[test]
fn an_instruction_reports_the_strided_bytes_it_touches() {
    let text = "npu.kernel @k(%a: !npu.buf<hbm, 1024 x f32>) {
  npu.dma queue(dma0) src(%a, base 0) dst(dm[0, 3], base 64) loops [(4, 512, 64)] packet 64 : f32
}";
    let mut ctx = tapestry::context();
    let module = tapestry::parse_and_verify(&mut ctx, "k.tap", text).unwrap();
    let kernel = ctx.body.block_ops(ctx.body.region(ctx.body.regions(module)[0]).blocks[0]).next().unwrap();
    let dma = ctx.body.block_ops(ctx.body.region(ctx.body.regions(kernel)[0]).blocks[0]).next().unwrap();
    let effects = effects_of(&ctx, dma).unwrap();
    let read: Vec<_> = effects.iter().filter(|e| e.kind == EffectKind::Read).collect();
    let write: Vec<_> = effects.iter().filter(|e| e.kind == EffectKind::Write).collect();
    // Four rows of 64 bytes, 512 apart, read from argument 0's HBM; written as one run into slice 3's DM.
    assert_eq!((read.len(), read[0].resource), (1, "npu.hbm"));
    assert_eq!(read[0].extent, Some(Extent::strided(0, 0, 64, 4, 512)));
    assert_eq!((write.len(), write[0].resource), (1, "npu.dm"));
    assert_eq!(write[0].extent, Some(Extent::run(3, 64, 320)));
}
