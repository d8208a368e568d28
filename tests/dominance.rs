//! Block dominance against its definition: on random control-flow graphs, `a` dominates `b` exactly when `b` is
//! unreachable, or `a` is `b`, or every path from the entry to `b` passes through `a` (no path avoids it).

use proptest::prelude::*;
use tapestry::ir::dominance::DomTree;
use tapestry::ir::{BlockId, Context};

/// The function text: block `i` branches to `succs[i]` (block 0 is the entry).
fn cfg_text(succs: &[Vec<usize>]) -> String {
    let mut text = String::from("func.func @f() {\n");
    for (i, s) in succs.iter().enumerate() {
        if i > 0 {
            text += &format!("^b{i}:\n");
        }
        let targets: Vec<String> = s.iter().map(|t| format!("^b{t}")).collect();
        text += &format!("  \"t.br\"()[{}] : () -> ()\n", targets.join(", "));
    }
    text + "}\n"
}

/// Whether `to` is reachable from the entry without passing through `avoid`.
fn reachable_avoiding(succs: &[Vec<usize>], to: usize, avoid: Option<usize>) -> bool {
    let mut seen = vec![false; succs.len()];
    let mut stack = vec![0];
    while let Some(b) = stack.pop() {
        if seen[b] || Some(b) == avoid {
            continue;
        }
        seen[b] = true;
        stack.extend(&succs[b]);
    }
    seen[to]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn dominance_matches_its_definition(
        n in 2usize..9,
        edges in prop::collection::vec((0usize..9, 1usize..9), 0..20),
    ) {
        let mut succs = vec![Vec::new(); n];
        for (from, to) in edges {
            if from < n && to < n && !succs[from].contains(&to) {
                succs[from].push(to);
            }
        }
        let mut ctx = Context::new(tapestry::dialects::all());
        ctx.allow_unregistered = true;
        let text = cfg_text(&succs);
        let module = tapestry::parse::parse_file(&mut ctx, "cfg.tap", &text).expect("parses");
        let func = ctx.body.block_ops(ctx.body.region(ctx.body.regions(module)[0]).blocks[0]).next().unwrap();
        let region = ctx.body.regions(func)[0];
        let blocks: Vec<BlockId> = ctx.body.region(region).blocks.clone();
        let tree = DomTree::compute(&ctx.body, region);
        for a in 0..n {
            for b in 0..n {
                let want = !reachable_avoiding(&succs, b, None) || a == b || !reachable_avoiding(&succs, b, Some(a));
                prop_assert_eq!(tree.dominates(blocks[a], blocks[b]), want, "{} dominates {}?\n{}", a, b, text);
            }
        }
    }
}
