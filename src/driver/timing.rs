//! `--timing`: MLIR's execution time report (wall time per phase, nested rows indented).

use indexmap::IndexMap;
use std::time::Duration;

/// Rows of the report, in the order they were first added, by nesting depth and name.
#[derive(Default, Debug)]
pub struct TimingReport {
    rows: IndexMap<(usize, String), Duration>,
}

impl TimingReport {
    /// Adds (or accumulates into) a row named `name` at `depth`.
    pub fn add(&mut self, depth: usize, name: &str, time: Duration) {
        *self.rows.entry((depth, name.to_string())).or_default() += time;
    }

    /// The report text, given the total wall time (the remainder becomes `Rest`).
    pub fn render(&self, total: Duration) -> String {
        let total_s = total.as_secs_f64().max(1e-9);
        let mut out = String::new();
        out.push_str("===-------------------------------------------------------------------------===\n");
        out.push_str("                         ... Execution time report ...\n");
        out.push_str("===-------------------------------------------------------------------------===\n");
        out.push_str(&format!("  Total Execution Time: {:.4} seconds\n\n", total.as_secs_f64()));
        out.push_str("  ----Wall Time----  ----Name----\n");
        let top: Duration = self.rows.iter().filter(|r| r.0 .0 == 0).map(|r| *r.1).sum();
        let rest = total.saturating_sub(top);
        let rows = self.rows.iter().map(|((d, n), t)| (*d, n.as_str(), *t));
        for (depth, name, t) in rows.chain([(0, "Rest", rest), (0, "Total", total)]) {
            let secs = t.as_secs_f64();
            out.push_str(&format!("{secs:10.4} ({:5.1}%)  {}{name}\n", 100.0 * secs / total_s, "  ".repeat(depth)));
        }
        out
    }
}

/// The `--pass-statistics` report header (passes add their counters below it).
pub fn statistics_banner() -> String {
    "===-------------------------------------------------------------------------===\n                         ... Pass statistics report ...\n===-------------------------------------------------------------------------===\n".to_string()
}
