//! The `Pass` trait: what a pass declares (name, command-line argument, anchor, options, statistics) and how it
//! runs on one op.

use super::options::{OptionSpec, OptionValues};
use crate::ir::{Context, Diagnostic, OpId};
use indexmap::IndexMap;

/// What a pass is, as `--list-passes`, IR dumps and the timing report show it.
#[derive(Copy, Clone, Debug)]
pub struct PassInfo {
    /// Command-line argument, e.g. `symbol-dce`; also the pass's file name and lit test name.
    pub argument: &'static str,
    /// Display name in IR dumps and timing reports, e.g. `SymbolDCE`.
    pub name: &'static str,
    /// One-line description.
    pub description: &'static str,
    /// The op the pass runs on (`None`: any op).
    pub anchor: Option<&'static str>,
    /// Declared options, in name order.
    pub options: &'static [OptionSpec],
    /// Declared statistics: `(name, description)`.
    pub statistics: &'static [(&'static str, &'static str)],
}

/// Whether a run changed the IR (the verifier runs again only if it did).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Changed {
    /// The IR is as it was.
    No,
    /// The IR may have changed.
    Yes,
}

/// Counters a pass reports for `--pass-statistics`.
#[derive(Clone, Debug, Default)]
pub struct Statistics {
    counters: IndexMap<&'static str, u64>,
}

impl Statistics {
    /// Adds `n` to counter `name`.
    pub fn add(&mut self, name: &'static str, n: u64) {
        *self.counters.entry(name).or_insert(0) += n;
    }

    /// The value of counter `name` (0 if it never moved).
    pub fn get(&self, name: &str) -> u64 {
        self.counters.get(name).copied().unwrap_or(0)
    }

    /// Adds every counter of `other`.
    pub fn merge(&mut self, other: &Statistics) {
        for (k, v) in &other.counters {
            self.add(k, *v);
        }
    }
}

/// What a running pass can use besides the IR: its statistics, and a stream for reports it prints (analysis
/// and debugging passes such as `layout-print`; `tap-opt` writes it to standard output, as mlir-opt's `outs()`).
pub struct PassEnv<'a> {
    /// The pass's counters.
    pub stats: &'a mut Statistics,
    /// Where reports go.
    pub out: &'a mut dyn std::io::Write,
    /// Remarks about what the pass did (each at the op it concerns); the driver renders them with the
    /// diagnostics, and `--verify-diagnostics` checks them as `expected-remark`.
    pub remarks: &'a mut Vec<crate::ir::Diagnostic>,
}

/// A transformation or analysis over the IR nested under one op.
pub trait Pass {
    /// What the pass is.
    fn info(&self) -> &'static PassInfo;

    /// Runs on `op`; errors stop the pipeline.
    fn run(&mut self, ctx: &mut Context, op: OpId, env: &mut PassEnv<'_>) -> Result<Changed, Vec<Diagnostic>>;
}

/// How to create a pass from its parsed options.
pub type PassConstructor = fn(&OptionValues) -> Box<dyn Pass>;
