//! Passes and the pass manager: the `Pass` trait, typed options, the registry of passes and named pipelines,
//! MLIR's textual pipeline syntax, the manager that runs them with instrumentation, and the passes themselves
//! (one per file, named after their command-line argument).

pub mod canonicalize;
pub mod check_legality;
pub mod convert_teg_to_npu;
pub mod cse;
pub mod dce;
pub mod instrument;
pub mod layout_print;
pub mod manager;
pub mod options;
pub mod pass;
pub mod pattern_pass;
pub mod pipeline;
pub mod reconcile_unrealized_casts;
pub mod registry;
pub mod resolve_layouts;
pub mod symbol_dce;
pub mod teg_auto_shard;
pub mod teg_conv_dense;
pub mod teg_cost;
pub mod teg_fuse_linear;
pub mod teg_keep_partial;
pub mod teg_print_dims;
pub mod teg_print_dot;
pub mod teg_print_transfers;
pub mod teg_propagate_shard;
pub mod teg_prune;
pub mod teg_shard;
pub mod test_convert_pairs;

pub use instrument::{Instrumentation, Selection};
pub use manager::PassManager;
pub use options::{OptionKind, OptionSpec, OptionValues};
pub use pass::{Changed, Pass, PassEnv, PassInfo, Statistics};
pub use pipeline::{parse_pipeline, Pipeline, PipelineElement, PipelineError};
pub use registry::{PassEntry, PassRegistry, PipelineEntry};

/// The built-in named pipeline `tap-simplify`: canonicalize, then CSE.
const SIMPLIFY: PipelineEntry = PipelineEntry {
    argument: "tap-simplify",
    description: "Canonicalize, then eliminate common sub-expressions",
    options: &[OptionSpec {
        name: "max-iterations",
        kind: OptionKind::Int,
        default: "10",
        description: "Max. canonicalization iterations",
    }],
    expand: |o| format!("canonicalize{{max-iterations={}}},cse", o.int("max-iterations")),
};

/// The built-in named pipeline `tap-to-npu`: a TEG graph lowered to an NPU kernel (with `auto-shard`, search a
/// sharding over the graph's `teg.mesh`; split the graph by its `teg.shard` plans, if it has any; prune what no
/// sink observes; lay out every tensor; convert, each device's ops on its chip, its synchronization already as
/// `canonicalize` would leave it).
const TO_NPU: PipelineEntry = PipelineEntry {
    argument: "tap-to-npu",
    description: "Lower TEG graphs to npu.kernel programs: [teg-auto-shard,] teg-shard, teg-prune, resolve-layouts, \
                  convert-teg-to-npu",
    options: &[
        OptionSpec {
            name: "auto-shard",
            kind: OptionKind::Bool,
            default: "false",
            description: "Search a sharding over the graph's teg.mesh first (teg-auto-shard)",
        },
        OptionSpec { name: "seed", kind: OptionKind::UInt, default: "1", description: "Seed of the sharding search" },
        OptionSpec {
            name: "max-rounds",
            kind: OptionKind::UInt,
            default: "20",
            description:
                "Rounds of the sharding search, at least 1 (a fixed number, so the result does not depend on time)",
        },
    ],
    expand: |o| {
        let search = match o.bool("auto-shard") {
            true => {
                // At least one round: 0 would leave only the (long) budget to stop the search.
                let rounds = o.int("max-rounds").max(1);
                format!("teg-auto-shard{{seed={} max-rounds={rounds} budget-ms=600000}},", o.int("seed"))
            }
            false => String::new(),
        };
        format!("{search}teg-shard,teg-prune,resolve-layouts,convert-teg-to-npu")
    },
};

/// Registers every built-in pass and named pipeline.
pub fn register_builtin(registry: &mut PassRegistry) {
    registry.register_pipeline(SIMPLIFY);
    registry.register_pipeline(TO_NPU);
    registry.register_pass(canonicalize::ENTRY);
    registry.register_pass(check_legality::ENTRY);
    registry.register_pass(convert_teg_to_npu::ENTRY);
    registry.register_pass(cse::ENTRY);
    registry.register_pass(dce::ENTRY);
    registry.register_pass(layout_print::ENTRY);
    registry.register_pass(reconcile_unrealized_casts::ENTRY);
    registry.register_pass(resolve_layouts::ENTRY);
    registry.register_pass(teg_auto_shard::ENTRY);
    registry.register_pass(teg_cost::ENTRY);
    registry.register_pass(teg_print_transfers::ENTRY);
    registry.register_pass(teg_prune::ENTRY);
    registry.register_pass(teg_fuse_linear::ENTRY);
    registry.register_pass(teg_conv_dense::ENTRY);
    registry.register_pass(teg_propagate_shard::ENTRY);
    registry.register_pass(teg_keep_partial::ENTRY);
    registry.register_pass(teg_print_dims::ENTRY);
    registry.register_pass(teg_shard::ENTRY);
    registry.register_pass(teg_print_dot::ENTRY);
    registry.register_pass(symbol_dce::ENTRY);
    registry.register_pass(test_convert_pairs::ENTRY);
}
