//! Passes and the pass manager. This module holds the textual pipeline syntax and the pass registry; the
//! passes themselves (one per file, named after their command-line argument) arrive with the pass manager.

pub mod pipeline;

pub use pipeline::{parse_pipeline, Pipeline, PipelineElement, PipelineError};

/// A registered pass, as `--list-passes` shows it.
#[derive(Copy, Clone, Debug)]
pub struct PassInfo {
    /// Command-line argument, e.g. `cse`.
    pub argument: &'static str,
    /// Display name used in IR dumps and timing reports, e.g. `CSE`.
    pub name: &'static str,
    /// One-line description.
    pub description: &'static str,
}

/// Every registered pass, in name order.
pub fn registered_passes() -> &'static [PassInfo] {
    &[]
}
