//! The pass manager: a tree of passes anchored on op names, built from a parsed pipeline, run sequentially
//! with verification after every pass that changed the IR and the instrumentation of `instrument.rs`.

use super::instrument::Instrumentation;
use super::options::{parse_options, OptionValues};
use super::pass::{Changed, Pass, PassEnv, Statistics};
use super::pipeline::{parse_pipeline, Pipeline, PipelineElement};
use super::registry::PassRegistry;
use crate::ir::verify::{verify, VerifyOptions};
use crate::ir::{Context, Diagnostic, OpId};
use std::time::Instant;

enum Entry {
    Pass { pass: Box<dyn Pass>, options: OptionValues },
    Nested(PassManager),
}

/// Passes to run on ops named `anchor` (or on any op for `any`), and nested pass managers for ops inside them.
pub struct PassManager {
    /// The op name this manager runs on.
    pub anchor: String,
    entries: Vec<Entry>,
}

impl PassManager {
    /// An empty manager for ops named `anchor`.
    pub fn new(anchor: &str) -> Self {
        PassManager { anchor: anchor.to_string(), entries: Vec::new() }
    }

    /// Appends a pass.
    pub fn add(&mut self, pass: Box<dyn Pass>, options: OptionValues) {
        self.entries.push(Entry::Pass { pass, options });
    }

    /// Appends a nested manager for ops named `anchor` directly inside this manager's op, and returns it.
    pub fn nest(&mut self, anchor: &str) -> &mut PassManager {
        self.entries.push(Entry::Nested(PassManager::new(anchor)));
        match self.entries.last_mut() {
            Some(Entry::Nested(pm)) => pm,
            _ => unreachable!("just pushed"),
        }
    }

    /// Builds the manager for a parsed pipeline; errors are the lines `tap-opt` prints.
    pub fn from_pipeline(pipeline: &Pipeline, registry: &PassRegistry) -> Result<PassManager, Vec<String>> {
        let mut pm = PassManager::new(&pipeline.anchor);
        pm.add_elements(&pipeline.elements, registry)?;
        Ok(pm)
    }

    /// Parses and builds a pipeline string, e.g. `builtin.module(symbol-dce)`.
    pub fn parse(text: &str, registry: &PassRegistry) -> Result<PassManager, Vec<String>> {
        let pipeline = parse_pipeline(text, registry).map_err(|e| vec![e.render().trim_end().to_string()])?;
        Self::from_pipeline(&pipeline, registry)
    }

    fn add_elements(&mut self, elements: &[PipelineElement], registry: &PassRegistry) -> Result<(), Vec<String>> {
        for e in elements {
            match e {
                PipelineElement::Pass { name, options } => self.add_named(name, options, registry)?,
                PipelineElement::Nested(p) => {
                    let nested = self.nest(&p.anchor);
                    nested.add_elements(&p.elements, registry).map_err(|mut errs| {
                        errs.push(format!(
                            "<unknown>:0: error: failed to add `{}` with options `` to inner pipeline",
                            p.anchor
                        ));
                        errs
                    })?;
                }
            }
        }
        Ok(())
    }

    fn add_named(&mut self, name: &str, options: &str, registry: &PassRegistry) -> Result<(), Vec<String>> {
        let failed = |msg: String| {
            vec![
                format!("<unknown>:0: error: <Pass-Options-Parser>: {msg}"),
                format!("<unknown>:0: error: failed to add `{name}` with options `{options}`"),
            ]
        };
        if let Some(entry) = registry.pass(name) {
            let values = parse_options(entry.info.options, options).map_err(failed)?;
            if let Some(anchor) = entry.info.anchor.filter(|a| *a != self.anchor && self.anchor != "any") {
                let msg = format!("<unknown>:0: error: unable to schedule pass '{name}' on a PassManager intended to run on '{}'! (it runs on '{anchor}')", self.anchor);
                return Err(vec![msg]);
            }
            self.add((entry.create)(&values), values);
            return Ok(());
        }
        let entry = registry.pipeline(name).ok_or_else(|| {
            vec![format!("<unknown>:0: error: '{name}' does not refer to a registered pass or pass pipeline")]
        })?;
        let values = parse_options(entry.options, options).map_err(failed)?;
        let text = format!("{}({})", self.anchor, (entry.expand)(&values));
        let expanded = parse_pipeline(&text, registry).map_err(|e| vec![e.render().trim_end().to_string()])?;
        self.add_elements(&expanded.elements, registry)
    }

    /// Number of passes, nested ones included.
    pub fn size(&self) -> usize {
        self.entries
            .iter()
            .map(|e| match e {
                Entry::Pass { .. } => 1,
                Entry::Nested(pm) => pm.size(),
            })
            .sum()
    }

    /// The `--dump-pass-pipeline` text: every pass with all its options, two spaces per level.
    pub fn dump(&self) -> String {
        let mut out = format!("Pass Manager with {} passes:\n", self.size());
        self.dump_into(&mut out, 0);
        out
    }

    fn dump_into(&self, out: &mut String, indent: usize) {
        let pad = " ".repeat(indent);
        if self.entries.is_empty() {
            out.push_str(&format!("{pad}{}()\n", self.anchor));
            return;
        }
        out.push_str(&format!("{pad}{}(\n", self.anchor));
        for (i, e) in self.entries.iter().enumerate() {
            let comma = if i + 1 < self.entries.len() { "," } else { "" };
            match e {
                Entry::Pass { pass, options } => {
                    let opts = options.dump();
                    let opts = if opts.is_empty() { String::new() } else { format!("{{ {opts}}}") };
                    out.push_str(&format!("{pad}  {}{opts}{comma}\n", pass.info().argument));
                }
                Entry::Nested(pm) => {
                    pm.dump_into(out, indent + 2);
                    if !comma.is_empty() {
                        out.pop();
                        out.push_str(",\n");
                    }
                }
            }
        }
        out.push_str(&format!("{pad})\n"));
    }

    /// Runs the pipeline on `op` (which must match the anchor).
    pub fn run(&mut self, ctx: &mut Context, op: OpId, instr: &mut Instrumentation<'_>) -> Result<(), Vec<Diagnostic>> {
        let name = ctx.op_name(op).to_string();
        if self.anchor != "any" && self.anchor != name {
            let msg = format!("can't run '{}' pass manager on '{name}' op", self.anchor);
            return Err(vec![Diagnostic::error(ctx.body.op(op).loc, msg)]);
        }
        self.run_on(ctx, op, instr, 0)
    }

    fn run_on(
        &mut self,
        ctx: &mut Context,
        op: OpId,
        instr: &mut Instrumentation<'_>,
        depth: usize,
    ) -> Result<(), Vec<Diagnostic>> {
        for entry in &mut self.entries {
            match entry {
                Entry::Pass { pass, .. } => run_pass(pass.as_mut(), ctx, op, instr, depth)?,
                Entry::Nested(pm) => {
                    let row = format!("'{}' Pipeline", pm.anchor);
                    let start = Instant::now();
                    instr.record_row(depth, &row);
                    instr.time(depth, &row, std::time::Duration::ZERO);
                    for child in children_named(ctx, op, &pm.anchor) {
                        pm.run_on(ctx, child, instr, depth + 1)?;
                    }
                    instr.time(depth, &row, start.elapsed());
                }
            }
        }
        Ok(())
    }
}

fn run_pass(
    pass: &mut dyn Pass,
    ctx: &mut Context,
    op: OpId,
    instr: &mut Instrumentation<'_>,
    depth: usize,
) -> Result<(), Vec<Diagnostic>> {
    let info = pass.info();
    instr.before(ctx, op, info);
    let mut stats = Statistics::default();
    let start = Instant::now();
    let result =
        pass.run(ctx, op, &mut PassEnv { stats: &mut stats, out: &mut instr.output, remarks: &mut instr.remarks });
    instr.time(depth, info.name, start.elapsed());
    instr.record(depth, info.name, info, &stats);
    let changed = match result {
        Ok(c) => c == Changed::Yes,
        Err(diags) => {
            instr.after_failure(ctx, op, info);
            return Err(diags);
        }
    };
    if changed && instr.verify_each {
        let diags = verify(ctx, op, VerifyOptions::default());
        if !diags.is_empty() {
            instr.after_failure(ctx, op, info);
            return Err(diags);
        }
    }
    instr.after(ctx, op, info, changed);
    Ok(())
}

/// Ops named `anchor` (any op for `any`) directly inside the regions of `op`.
fn children_named(ctx: &Context, op: OpId, anchor: &str) -> Vec<OpId> {
    let mut out = Vec::new();
    for &r in ctx.body.regions(op) {
        for &b in &ctx.body.region(r).blocks {
            out.extend(ctx.body.block_ops(b).filter(|&o| anchor == "any" || ctx.op_name(o) == anchor));
        }
    }
    out
}
