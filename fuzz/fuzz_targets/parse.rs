//! Fuzzes the whole `tap-opt` front end in-process: parse → verify → print (generic and pretty, with and
//! without locations) → render diagnostics, and checks that a verified module's generic print round-trips; then
//! runs `layout-print` (tables and address loops) on it, which reaches every layout attribute the input holds, and
//! the TEG reference evaluator on every small graph.
//!
//! The first byte chooses `allow_unregistered` (odd = allowed) and `debug_info` (bit 1) for the extra
//! prints; the whole input (first byte included) is the text, so seed files stay plain `.tap` files.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::{Arc, OnceLock};
use tapestry::ir::print::{op_to_string, PrintOptions};
use tapestry::ir::verify::verify;
use tapestry::ir::{Context, Registry, Severity};
use tapestry::render::{render_all, Style};

fn registry() -> Arc<Registry> {
    static REGISTRY: OnceLock<Arc<Registry>> = OnceLock::new();
    REGISTRY.get_or_init(tapestry::dialects::all).clone()
}

fn context(allow_unregistered: bool) -> Context {
    let mut ctx = Context::new(registry());
    ctx.allow_unregistered = allow_unregistered;
    ctx
}

/// Runs every small verified TEG graph on the reference evaluator with its sources bound to ones: an error is
/// fine, a panic is a bug.
fn evaluate_graphs(ctx: &Context, module: tapestry::ir::OpId) {
    use tapestry::dialects::teg::eval::{evaluate, sources};
    for g in tapestry::ir::walk::preorder(&ctx.body, module) {
        if ctx.op_name(g) != "teg.graph" {
            continue;
        }
        // Only graphs whose values are small (the evaluator holds each in memory).
        let cells: u64 = tapestry::ir::walk::preorder(&ctx.body, g)
            .into_iter()
            .flat_map(|op| ctx.body.results(op))
            .filter_map(|v| tapestry::dialects::teg::tensor_type::as_tensor(ctx, ctx.body.value_type(v)))
            .map(|t| t.size().max(1))
            .fold(0u64, |a, b| a.saturating_add(b));
        if cells > 1 << 20 {
            continue;
        }
        let inputs = sources(ctx, g);
        let bound: indexmap::IndexMap<_, _> = inputs
            .into_iter()
            .map(|(name, shape, dtype)| (name, tapestry::array::Array::from_fn(dtype, shape, |_| 1.0)))
            .collect();
        let _ = evaluate(ctx, g, &bound);
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Some(&first) = data.first() else { return };
    let allow_unregistered = first & 1 == 1;
    let debug_info = first & 2 == 2;

    let mut ctx = context(allow_unregistered);
    let (module, mut diags) = match tapestry::parse::parse_file(&mut ctx, "fuzz.tap", text) {
        Ok(m) => (Some(m), Vec::new()),
        Err(d) => (None, d),
    };
    let mut generic = None;
    let mut pretty = None;
    if let Some(m) = module {
        diags.extend(verify(&ctx, m, Default::default()));
        let verified = !diags.iter().any(|d| d.severity == Severity::Error);
        let g = op_to_string(&ctx, m, PrintOptions { generic: true, debug_info: false });
        let p = op_to_string(&ctx, m, PrintOptions { generic: false, debug_info: false });
        if debug_info {
            let _ = op_to_string(&ctx, m, PrintOptions { generic: true, debug_info: true });
            let _ = op_to_string(&ctx, m, PrintOptions { generic: false, debug_info: true });
        }
        if verified {
            generic = Some(g);
            pretty = Some(p);
        }
    }
    let _ = render_all(&ctx, &diags, Style::Mlir);
    if let (Some(m), true) = (module, generic.is_some()) {
        let passes = tapestry::passes::PassRegistry::with_builtin();
        let pipelines = [
            "builtin.module(layout-print{limit=4096}, layout-print{format=loops})",
            "builtin.module(test-convert-pairs{full=true})",
            "builtin.module(test-convert-pairs, reconcile-unrealized-casts, canonicalize, cse)",
        ];
        for pipeline in pipelines {
            let mut pm = tapestry::passes::PassManager::parse(pipeline, &passes).expect("a valid pipeline");
            let mut sink = std::io::sink();
            let _ = pm.run(&mut ctx, m, &mut tapestry::passes::Instrumentation::quiet(&mut sink));
        }
        evaluate_graphs(&ctx, m);
    }

    // Round trip: the generic print of a verified module parses and verifies in a fresh context, and printing
    // it again gives exactly the same text.
    if let Some(first_print) = &generic {
        let first_print = first_print.as_str();
        let mut ctx2 = context(allow_unregistered);
        match tapestry::parse::parse_file(&mut ctx2, "roundtrip.tap", first_print) {
            Ok(m2) => {
                let vdiags = verify(&ctx2, m2, Default::default());
                if vdiags.iter().any(|d| d.severity == Severity::Error) {
                    panic!(
                        "round trip: the generic print of a verified module does not verify\n--- input ---\n{text}\n--- first print ---\n{first_print}\n--- diagnostics ---\n{}",
                        render_all(&ctx2, &vdiags, Style::Mlir)
                    );
                }
                let second_print = op_to_string(&ctx2, m2, PrintOptions { generic: true, debug_info: false });
                if first_print != second_print {
                    panic!(
                        "round trip mismatch\n--- input ---\n{text}\n--- first print ---\n{first_print}\n--- second print ---\n{second_print}"
                    );
                }
            }
            Err(d) => panic!(
                "round trip: the generic print of a verified module does not parse\n--- input ---\n{text}\n--- first print ---\n{first_print}\n--- diagnostics ---\n{}",
                render_all(&ctx2, &d, Style::Mlir)
            ),
        }
    }

    // The custom (pretty) print of a verified module parses back to the same IR: its generic print matches.
    if let (Some(first_print), Some(pretty_print)) = (generic, pretty) {
        let mut ctx3 = context(allow_unregistered);
        match tapestry::parse::parse_file(&mut ctx3, "pretty.tap", &pretty_print) {
            Ok(m3) => {
                let again = op_to_string(&ctx3, m3, PrintOptions { generic: true, debug_info: false });
                if again != first_print {
                    panic!(
                        "pretty round trip mismatch\n--- input ---\n{text}\n--- pretty print ---\n{pretty_print}\n--- generic print of the input ---\n{first_print}\n--- generic print after re-parsing the pretty print ---\n{again}"
                    );
                }
            }
            Err(d) => panic!(
                "pretty round trip: the custom print of a verified module does not parse\n--- input ---\n{text}\n--- pretty print ---\n{pretty_print}\n--- diagnostics ---\n{}",
                render_all(&ctx3, &d, Style::Mlir)
            ),
        }
    }
});
