//! The IR library API: building ops in code, use lists, replace-all-uses, erase, move, clone, walks, symbol
//! lookup, and that what is built prints and verifies like parsed IR.

use tapestry::ir::builder::{InsertPoint, OpBuilder, OpState};
use tapestry::ir::clone::{clone_op, CloneMap};
use tapestry::ir::print::{op_to_string, PrintOptions};
use tapestry::ir::verify::verify;
use tapestry::ir::walk::{postorder, preorder};
use tapestry::ir::{Context, Loc, OpId, ValueId};

fn context() -> Context {
    let mut ctx = Context::new(tapestry::dialects::all());
    ctx.allow_unregistered = true;
    ctx
}

/// A module holding `%0 = test.def`, `%1 = test.add(%0, %0)`, `test.use(%1)`.
fn small_module(ctx: &mut Context) -> (OpId, [OpId; 3]) {
    let mut b = OpBuilder::new(ctx, InsertPoint::Detached);
    let (region, block) = b.region_with_block(&[], Loc::Unknown);
    let module = OpState::new(b.ctx, "builtin.module", Loc::Unknown).region(region);
    let module = b.insert(module);
    b.point = InsertPoint::End(block);
    let i32t = b.ctx.int_type(32);
    let def = OpState::new(b.ctx, "test.def", Loc::Unknown).results(&[i32t]);
    let def = b.insert(def);
    let v = b.ctx.body.result(def, 0);
    let add = OpState::new(b.ctx, "test.add", Loc::Unknown).operands(&[v, v]).results(&[i32t]);
    let add = b.insert(add);
    let sum = b.ctx.body.result(add, 0);
    let use_op = OpState::new(b.ctx, "test.use", Loc::Unknown).operands(&[sum]);
    let use_op = b.insert(use_op);
    (module, [def, add, use_op])
}

fn print(ctx: &Context, op: OpId) -> String {
    op_to_string(ctx, op, PrintOptions::default())
}

fn uses(ctx: &Context, v: ValueId) -> Vec<(OpId, usize)> {
    let mut u: Vec<_> = ctx.body.uses(v).collect();
    u.sort();
    u
}

#[test]
fn built_ir_prints_and_verifies() {
    let mut ctx = context();
    let (module, _) = small_module(&mut ctx);
    assert!(verify(&ctx, module, Default::default()).is_empty());
    let text = print(&ctx, module);
    assert_eq!(
        text,
        "builtin.module {\n  %0 = \"test.def\"() : () -> i32\n  %1 = \"test.add\"(%0, %0) : (i32, i32) -> i32\n  \"test.use\"(%1) : (i32) -> ()\n}"
    );
}

#[test]
fn use_lists_follow_every_mutation() {
    let mut ctx = context();
    let (_, [def, add, use_op]) = small_module(&mut ctx);
    let v = ctx.body.result(def, 0);
    let sum = ctx.body.result(add, 0);
    assert_eq!(uses(&ctx, v), vec![(add, 0), (add, 1)]);
    ctx.body.set_operand(use_op, 0, v);
    assert_eq!(uses(&ctx, v).len(), 3);
    assert!(!ctx.body.has_uses(sum));
    ctx.body.replace_all_uses(v, sum);
    assert!(!ctx.body.has_uses(v));
    assert_eq!(uses(&ctx, sum), vec![(add, 0), (add, 1), (use_op, 0)]);
}

#[test]
fn erase_and_move_keep_blocks_linked() {
    let mut ctx = context();
    let (module, [def, add, use_op]) = small_module(&mut ctx);
    ctx.body.erase_op(use_op);
    assert!(ctx.body.is_erased(use_op));
    let block = ctx.body.op_parent(def).unwrap();
    assert_eq!(ctx.body.block_ops(block).collect::<Vec<_>>(), vec![def, add]);
    // Moving the definition after its user breaks dominance in an SSACFG region but not in the module's graph region.
    ctx.body.move_op_to_end(def, block);
    assert_eq!(ctx.body.block_ops(block).collect::<Vec<_>>(), vec![add, def]);
    assert!(verify(&ctx, module, Default::default()).is_empty());
    ctx.body.move_op_before(def, add);
    assert_eq!(ctx.body.last_op(block), Some(add));
}

#[test]
#[should_panic(expected = "still used")]
fn erasing_a_used_op_is_a_bug() {
    let mut ctx = context();
    let (_, [def, ..]) = small_module(&mut ctx);
    ctx.body.erase_op(def);
}

#[test]
fn clone_copies_regions_and_remaps_values() {
    let mut ctx = context();
    let (module, [def, add, _]) = small_module(&mut ctx);
    let mut map = CloneMap::default();
    let copy = clone_op(&mut ctx, module, &mut map);
    assert_eq!(print(&ctx, copy), print(&ctx, module));
    let copied_add = preorder(&ctx.body, copy)[1];
    assert_ne!(copied_add, add);
    let copied_def_value = map.values[&ctx.body.result(def, 0)];
    assert_eq!(ctx.body.operand(copied_add, 0), copied_def_value);
}

#[test]
fn walks_visit_parents_and_children_in_order() {
    let mut ctx = context();
    let text = "\"t.a\"() ({\n  \"t.b\"() : () -> ()\n  \"t.c\"() ({\n    \"t.d\"() : () -> ()\n  }) : () -> ()\n}) : () -> ()\n";
    let module = tapestry::parse::parse_file(&mut ctx, "walk.tap", text).unwrap();
    let names = |ops: Vec<OpId>| ops.into_iter().map(|o| ctx.op_name(o).to_string()).collect::<Vec<_>>();
    assert_eq!(names(preorder(&ctx.body, module)), ["t.a", "t.b", "t.c", "t.d"]);
    assert_eq!(names(postorder(&ctx.body, module)), ["t.b", "t.d", "t.c", "t.a"]);
}

#[test]
fn symbol_references_resolve_through_nested_tables() {
    let mut ctx = context();
    let text = "builtin.module @outer {\n  builtin.module @inner {\n    func.func private @f()\n  }\n}\n";
    let module = tapestry::parse::parse_file(&mut ctx, "sym.tap", text).unwrap();
    let root = ctx.sym("inner");
    let nested = ctx.sym("f");
    let reference = ctx.attr(tapestry::ir::Attr::SymbolRef { root, nested: vec![nested].into() });
    let f = tapestry::ir::symbols::lookup(&ctx, module, reference).expect("@inner::@f resolves");
    assert_eq!(ctx.op_name(f), "func.func");
    assert_eq!(tapestry::ir::symbols::symbol_name(&ctx, f), Some("f"));
}

#[test]
fn attributes_and_types_are_interned() {
    let mut ctx = context();
    let a = ctx.int_type(32);
    let b = ctx.int_type(32);
    assert_eq!(a, b);
    let t1 = ctx.tensor_type(&[4, 8], a);
    let t2 = ctx.tensor_type(&[4, 8], b);
    assert_eq!(t1, t2);
    let k = ctx.sym("k");
    let one = ctx.int_attr(1, a);
    let d1 = ctx.dict_attr(vec![(k, one)]);
    let d2 = ctx.dict_attr(vec![(k, one)]);
    assert_eq!(d1, d2);
}

#[test]
fn clone_remaps_forward_references_in_graph_regions() {
    let mut ctx = context();
    let text = "\"t.g\"() ({\n  \"t.use\"(%v) : (i32) -> ()\n  %v = \"t.def\"() : () -> i32\n}) : () -> ()\n";
    let module = tapestry::parse::parse_file(&mut ctx, "g.tap", text).unwrap();
    let graph = preorder(&ctx.body, module)[0];
    let copy = clone_op(&mut ctx, graph, &mut CloneMap::default());
    let ops = preorder(&ctx.body, copy);
    assert_eq!(ctx.body.operand(ops[0], 0), ctx.body.result(ops[1], 0));
}
