//! Fuzzes `tap-run` in-process: a graph and one `.npy` file. The input is the graph's text, a NUL byte, then the
//! `.npy` bytes; every source the file's shape and dtype fit is bound to it, the rest to ones. Parse, verify and
//! evaluate every small graph: an error is fine, a panic, an abort, a timeout or running out of memory is a bug.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::{Arc, OnceLock};
use tapestry::array::{npy, Array};
use tapestry::dialects::teg::eval::{evaluate, sources};
use tapestry::ir::verify::verify;
use tapestry::ir::{walk, Context, Registry};

fn registry() -> Arc<Registry> {
    static REGISTRY: OnceLock<Arc<Registry>> = OnceLock::new();
    REGISTRY.get_or_init(tapestry::dialects::all).clone()
}

/// The graphs of `module` whose values hold at most 2^20 cells in all (the evaluator keeps them in memory).
fn small_graphs(ctx: &Context, module: tapestry::ir::OpId) -> Vec<tapestry::ir::OpId> {
    let cells = |g| -> u64 {
        walk::preorder(&ctx.body, g)
            .into_iter()
            .flat_map(|op| ctx.body.results(op))
            .filter_map(|v| tapestry::dialects::teg::tensor_type::as_tensor(ctx, ctx.body.value_type(v)))
            .map(|t| t.size().max(1))
            .fold(0u64, |a, b| a.saturating_add(b))
    };
    walk::preorder(&ctx.body, module)
        .into_iter()
        .filter(|&g| ctx.op_name(g) == "teg.graph" && cells(g) <= 1 << 20)
        .collect()
}

fuzz_target!(|data: &[u8]| {
    let split = data.iter().position(|&b| b == 0).unwrap_or(data.len());
    let (graph, file) = (&data[..split], data.get(split + 1..).unwrap_or(&[]));
    let Ok(text) = std::str::from_utf8(graph) else { return };
    let array = npy::read(file).ok();
    let mut ctx = Context::new(registry());
    let Ok(module) = tapestry::parse::parse_file(&mut ctx, "fuzz.tap", text) else { return };
    if !verify(&ctx, module, Default::default()).is_empty() {
        return;
    }
    for g in small_graphs(&ctx, module) {
        let bound: indexmap::IndexMap<String, Array> = sources(&ctx, g)
            .into_iter()
            .map(|(name, shape, dtype)| {
                let fits = array.as_ref().filter(|a| a.shape() == shape.as_slice() && a.dtype() == dtype);
                let value = fits.cloned().unwrap_or_else(|| Array::from_fn(dtype, shape, |_| 1.0));
                (name, value)
            })
            .collect();
        if let Ok(outputs) = evaluate(&ctx, g, &bound) {
            for value in outputs.values() {
                let _ = npy::write(value);
            }
        }
    }
});
