//! The pass registry: every pass and named pipeline `tap-opt` knows, with constructors. Embedders register their
//! own passes and pipelines into a registry of their own.

use super::options::{OptionSpec, OptionValues};
use super::pass::{PassConstructor, PassInfo};
use indexmap::IndexMap;

/// A registered pass.
#[derive(Copy, Clone, Debug)]
pub struct PassEntry {
    /// What it is.
    pub info: &'static PassInfo,
    /// How to make one.
    pub create: PassConstructor,
}

/// A named pipeline: a pass-pipeline argument that expands to a list of pipeline elements.
#[derive(Copy, Clone, Debug)]
pub struct PipelineEntry {
    /// Command-line argument.
    pub argument: &'static str,
    /// One line for `--list-passes`.
    pub description: &'static str,
    /// Declared options.
    pub options: &'static [OptionSpec],
    /// The elements it stands for, as pipeline text (`canonicalize,cse`), given its options.
    pub expand: fn(&OptionValues) -> String,
}

/// Passes and named pipelines by argument.
#[derive(Clone, Debug, Default)]
pub struct PassRegistry {
    passes: IndexMap<&'static str, PassEntry>,
    pipelines: IndexMap<&'static str, PipelineEntry>,
}

impl PassRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// The registry with every built-in pass and pipeline.
    pub fn with_builtin() -> Self {
        let mut r = Self::new();
        super::register_builtin(&mut r);
        r
    }

    /// Registers a pass (replacing one of the same argument).
    pub fn register_pass(&mut self, entry: PassEntry) {
        self.passes.insert(entry.info.argument, entry);
        self.passes.sort_keys();
    }

    /// Registers a named pipeline.
    pub fn register_pipeline(&mut self, entry: PipelineEntry) {
        self.pipelines.insert(entry.argument, entry);
        self.pipelines.sort_keys();
    }

    /// The pass registered as `argument`.
    pub fn pass(&self, argument: &str) -> Option<&PassEntry> {
        self.passes.get(argument)
    }

    /// The pipeline registered as `argument`.
    pub fn pipeline(&self, argument: &str) -> Option<&PipelineEntry> {
        self.pipelines.get(argument)
    }

    /// True if `argument` names a pass or a pipeline.
    pub fn knows(&self, argument: &str) -> bool {
        self.passes.contains_key(argument) || self.pipelines.contains_key(argument)
    }

    /// All passes, by argument.
    pub fn passes(&self) -> impl Iterator<Item = &PassEntry> {
        self.passes.values()
    }

    /// All named pipelines, by argument.
    pub fn pipelines(&self) -> impl Iterator<Item = &PipelineEntry> {
        self.pipelines.values()
    }

    /// The `--list-passes` text.
    pub fn list(&self) -> String {
        let mut out = String::from("Available Passes:\n");
        for p in self.passes() {
            out.push_str(&format!("  --{}  -   {}\n", p.info.argument, p.info.description));
            out.push_str(&list_options(p.info.options));
        }
        out.push_str("Available Pass Pipelines:\n");
        for p in self.pipelines() {
            out.push_str(&format!("  --{}  -   {}\n", p.argument, p.description));
            out.push_str(&list_options(p.options));
        }
        out
    }
}

fn list_options(options: &[OptionSpec]) -> String {
    options
        .iter()
        .map(|o| format!("    --{}=<{}>  -   {} (default: {})\n", o.name, kind_word(o), o.description, o.default))
        .collect()
}

fn kind_word(o: &OptionSpec) -> &'static str {
    use super::options::OptionKind::*;
    match o.kind {
        Bool => "bool",
        Int => "long",
        UInt => "uint",
        String => "string",
        Enum(_) => "value",
        List => "list",
    }
}
