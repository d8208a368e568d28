//! Pass instrumentation: IR dumps around passes (`--print-ir-*`), wall time per pass (`--timing`) and statistics
//! (`--pass-statistics`), with mlir-opt's formats.

use super::pass::{PassInfo, Statistics};
use crate::ir::print::{op_to_string, PrintOptions};
use crate::ir::{Context, Diagnostic, OpId};
use indexmap::IndexMap;
use std::io::Write;
use std::time::Duration;

/// Which passes an IR dump applies to.
#[derive(Clone, Debug, Default)]
pub enum Selection {
    /// None.
    #[default]
    None,
    /// Every pass.
    All,
    /// The passes with these arguments.
    Some(Vec<String>),
}

impl Selection {
    fn contains(&self, argument: &str) -> bool {
        match self {
            Selection::None => false,
            Selection::All => true,
            Selection::Some(list) => list.iter().any(|a| a == argument),
        }
    }
}

/// The ` ('func.func' operation: @f)` part of a module-scope dump header: which op the pass ran on.
fn scope_note(ctx: &Context, op: OpId) -> String {
    let name = ctx.op_name(op);
    match crate::ir::symbols::symbol_name(ctx, op) {
        Some(sym) => format!(" ('{name}' operation: @{sym})"),
        None => format!(" ('{name}' operation)"),
    }
}

/// Counters of one pipeline row with the statistics its pass declares (`(name, description)`).
pub type StatRow = (Statistics, &'static [(&'static str, &'static str)]);

/// What to observe while a pipeline runs, and what was observed.
pub struct Instrumentation<'w> {
    /// Dump before these passes.
    pub print_before: Selection,
    /// Dump after these passes.
    pub print_after: Selection,
    /// Only dump after a pass that changed the IR.
    pub print_after_change: bool,
    /// Dump after a pass that failed.
    pub print_after_failure: bool,
    /// Dumps show the top-level op enclosing the op a pass ran on (mlir-opt's `--mlir-print-ir-module-scope`).
    pub print_module_scope: bool,
    /// How dumps print the IR.
    pub print_options: PrintOptions,
    /// Run the verifier after every pass that changed the IR.
    pub verify_each: bool,
    /// Where dumps go (standard error in `tap-opt`).
    pub sink: &'w mut dyn Write,
    /// Wall time per pipeline row: `(depth, name)` → time, in first-seen order.
    pub timing: IndexMap<(usize, String), Duration>,
    /// Statistics per pipeline row: `(depth, name)` → counters with their declared descriptions.
    pub statistics: IndexMap<(usize, String), StatRow>,
    /// The "After X Failed" dump of a failed pass, held back so that it can follow the pass's diagnostics as in
    /// mlir-opt (the pass manager returns the diagnostics; whoever renders them writes this after).
    pub failure_dump: Option<String>,
    /// What the passes printed ([`PassEnv::out`](super::pass::PassEnv)), for the caller to show.
    pub output: Vec<u8>,
    /// The remarks the passes made, in order, for the caller to render.
    pub remarks: Vec<Diagnostic>,
}

impl<'w> Instrumentation<'w> {
    /// Instrumentation that only verifies, writing nothing.
    pub fn quiet(sink: &'w mut dyn Write) -> Self {
        Instrumentation {
            print_before: Selection::None,
            print_after: Selection::None,
            print_after_change: false,
            print_after_failure: false,
            print_module_scope: false,
            print_options: PrintOptions::default(),
            verify_each: true,
            sink,
            timing: IndexMap::new(),
            statistics: IndexMap::new(),
            failure_dump: None,
            output: Vec::new(),
            remarks: Vec::new(),
        }
    }

    pub(super) fn before(&mut self, ctx: &Context, op: OpId, info: &PassInfo) {
        if self.print_before.contains(info.argument) {
            self.dump(ctx, op, &format!("Before {} ({})", info.name, info.argument));
        }
    }

    pub(super) fn after(&mut self, ctx: &Context, op: OpId, info: &PassInfo, changed: bool) {
        if self.print_after.contains(info.argument) && (changed || !self.print_after_change) {
            self.dump(ctx, op, &format!("After {} ({})", info.name, info.argument));
        }
    }

    pub(super) fn after_failure(&mut self, ctx: &Context, op: OpId, info: &PassInfo) {
        if self.print_after_failure || self.print_after.contains(info.argument) {
            let what = format!("After {} Failed ({})", info.name, info.argument);
            self.failure_dump = Some(self.dump_text(ctx, op, &what));
        }
    }

    fn dump(&mut self, ctx: &Context, op: OpId, what: &str) {
        let text = self.dump_text(ctx, op, what);
        let _ = self.sink.write_all(text.as_bytes());
    }

    fn dump_text(&self, ctx: &Context, op: OpId, what: &str) -> String {
        let mut shown = op;
        let mut scope = String::new();
        if self.print_module_scope {
            while let Some(parent) = ctx.body.parent_op(shown) {
                shown = parent;
            }
            if shown != op {
                scope = scope_note(ctx, op);
            }
        }
        let text = op_to_string(ctx, shown, self.print_options);
        format!("// -----// IR Dump {what}{scope} //----- //\n{text}\n\n")
    }

    pub(super) fn time(&mut self, depth: usize, name: &str, t: Duration) {
        *self.timing.entry((depth, name.to_string())).or_default() += t;
    }

    pub(super) fn record_row(&mut self, depth: usize, name: &str) {
        self.statistics.entry((depth, name.to_string())).or_insert((Statistics::default(), &[]));
    }

    pub(super) fn record(&mut self, depth: usize, name: &str, info: &'static PassInfo, stats: &Statistics) {
        let entry =
            self.statistics.entry((depth, name.to_string())).or_insert((Statistics::default(), info.statistics));
        entry.0.merge(stats);
    }

    /// The `--pass-statistics` report.
    pub fn statistics_report(&self) -> String {
        let mut out = String::new();
        out.push_str("===-------------------------------------------------------------------------===\n");
        out.push_str("                         ... Pass statistics report ...\n");
        out.push_str("===-------------------------------------------------------------------------===\n");
        for ((depth, name), (stats, declared)) in &self.statistics {
            out.push_str(&format!("{}{name}\n", "  ".repeat(*depth)));
            for (stat, description) in declared.iter() {
                out.push_str(&format!("{}(S) {} {stat} - {description}\n", "  ".repeat(depth + 1), stats.get(stat)));
            }
        }
        out
    }
}
