//! Tapestry: an MLIR-style multi-level IR toolkit.
//!
//! Text flows `parse` → `ir` (verified) → `passes` → `ir::print`, and diagnostics from every stage are
//! rendered by `render`. See `ARCHITECTURE.md` for the module map and the dependency rules, and `docs/` for the
//! reference.
//!
//! Embedding in a few lines: a context with every dialect, a module parsed and verified, a pass pipeline, and a
//! TEG graph evaluated on host arrays.
//!
//! ```
//! use tapestry::array::{Array, Data};
//! use tapestry::dialects::teg::{eval::evaluate, find_graph};
//!
//! let mut ctx = tapestry::context();
//! let text = r#"teg.graph @relu {
//!   %x = teg.source @x : !teg.tensor<[n=3] x f32>
//!   %y = teg.relu %x : !teg.tensor<[n=3] x f32>
//!   %s = teg.sink @y %y : !teg.tensor<[n=3] x f32> -> !teg.token
//!   teg.sequence_point %s : !teg.token
//! }"#;
//! let module = tapestry::parse_and_verify(&mut ctx, "relu.tap", text).expect("valid IR");
//! tapestry::run_pipeline(&mut ctx, module, "builtin.module(canonicalize, cse)").expect("the passes succeed");
//!
//! let graph = find_graph(&ctx, module, "relu").expect("the graph is there");
//! let x = Array::new(vec![3], Data::F32(vec![-1.0, 0.5, 2.0])).unwrap();
//! let outputs = evaluate(&ctx, graph, &[("x".to_string(), x)].into_iter().collect()).unwrap();
//! assert_eq!(outputs["y"].to_f64(), [0.0, 0.5, 2.0]);
//! ```
#![warn(missing_docs)]

pub mod array;
pub mod dialects;
pub mod driver;
pub mod filecheck;
pub mod interfaces;
pub mod ir;
pub mod layout;
pub mod machine;
pub mod parse;
pub mod passes;
pub mod render;
pub mod shard;
pub mod zspace;

/// The map type of public signatures (graph inputs and outputs), re-exported so callers need not depend on it.
pub use indexmap;

/// A context with every built-in dialect registered.
pub fn context() -> ir::Context {
    ir::Context::new(dialects::all())
}

/// Parses `text` (named `name` in diagnostics) into `ctx` and verifies it: the module, or every diagnostic.
pub fn parse_and_verify(ctx: &mut ir::Context, name: &str, text: &str) -> Result<ir::OpId, Vec<ir::Diagnostic>> {
    let module = parse::parse_file(ctx, name, text)?;
    let diags = ir::verify::verify(ctx, module, ir::verify::VerifyOptions::default());
    if diags.is_empty() {
        Ok(module)
    } else {
        Err(diags)
    }
}

/// Runs the built-in passes as the textual `pipeline` (MLIR's syntax, as `tap-opt -p`) on `op`.
pub fn run_pipeline(ctx: &mut ir::Context, op: ir::OpId, pipeline: &str) -> Result<(), Vec<ir::Diagnostic>> {
    let registry = passes::PassRegistry::with_builtin();
    let invalid = |e: String| ir::Diagnostic::error(ir::Loc::Unknown, format!("invalid pass pipeline: {e}"));
    let mut pm = passes::PassManager::parse(pipeline, &registry)
        .map_err(|es| es.into_iter().map(invalid).collect::<Vec<_>>())?;
    let mut sink = std::io::sink();
    pm.run(ctx, op, &mut passes::Instrumentation::quiet(&mut sink))
}
