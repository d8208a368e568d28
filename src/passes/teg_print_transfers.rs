//! `teg-print-transfers`: prints the transfer table of every `teg.reshard` in the TEG graphs with a `teg.mesh`
//! (what `teg-shard` leaves between shards): per reshard its box, its devices, the collective it amounts to and,
//! one row per move, which box goes from which device to which with its bytes; then the graph's totals.

use super::pass::{Changed, Pass, PassEnv, PassInfo};
use super::registry::PassEntry;
use crate::dialects::teg::graphs_under;
use crate::dialects::teg::shard_problem::mesh_of;
use crate::dialects::teg::transfers::{table_of, Table};
use crate::ir::walk::preorder;
use crate::ir::{Context, Diagnostic, OpId};
use crate::zspace::ZRange;
use std::fmt::Write;

/// The registration of `teg-print-transfers`.
pub const ENTRY: PassEntry = PassEntry { info: &INFO, create };

static INFO: PassInfo = PassInfo {
    argument: "teg-print-transfers",
    name: "TegPrintTransfers",
    description: "Print the transfer table of every teg.reshard: which box moves from which device to which",
    anchor: None,
    options: &[],
    statistics: &[("num-reshards", "Reshards printed"), ("num-moves", "Moves printed")],
};

fn create(_: &super::options::OptionValues) -> Box<dyn Pass> {
    Box::new(PrintTransfers)
}

struct PrintTransfers;

impl Pass for PrintTransfers {
    fn info(&self) -> &'static PassInfo {
        &INFO
    }

    fn run(&mut self, ctx: &mut Context, root: OpId, env: &mut PassEnv<'_>) -> Result<Changed, Vec<Diagnostic>> {
        for graph in graphs_under(ctx, root) {
            let Some(machine) = mesh_of(ctx, graph) else { continue };
            let machine = machine.map_err(|d| vec![d])?;
            let name = crate::ir::symbols::symbol_name(ctx, graph).unwrap_or_default();
            let mut text = format!("teg-print-transfers @{name}\n");
            let (mut count, mut moves, mut bytes) = (0u64, 0u64, 0u64);
            for op in preorder(&ctx.body, graph) {
                let Some(table) = table_of(ctx, op, machine.mesh()) else { continue };
                let table = table.map_err(|m| vec![Diagnostic::error(ctx.body.op(op).loc, m)])?;
                write_table(&mut text, ctx, op, &table);
                count += 1;
                moves += table.moves.len() as u64;
                bytes = bytes.saturating_add(table.bytes());
            }
            let _ = writeln!(text, "total: {count} reshards, {moves} moves, {bytes} B");
            let _ = env.out.write_all(text.as_bytes());
            env.stats.add("num-reshards", count);
            env.stats.add("num-moves", moves);
        }
        Ok(Changed::No)
    }
}

/// `reshard at LOC: [0:4, 0:2] on devices [0, 1]: all-gather, 2 moves, 32 B`, then one indented row per move.
fn write_table(out: &mut String, ctx: &Context, op: OpId, t: &Table) {
    let _ = writeln!(
        out,
        "reshard at {}: {} on devices {:?}: {}, {} moves, {} B",
        ctx.loc_text(ctx.body.op(op).loc),
        boxed(&t.target.region),
        t.target.devices,
        t.kind(),
        t.moves.len(),
        t.bytes()
    );
    for m in &t.moves {
        let _ = writeln!(out, "  device {} -> device {}: {} {} B", m.from, m.to, boxed(&m.region), m.bytes);
    }
}

/// `[0:2, 3:6]`.
pub fn boxed(r: &ZRange) -> String {
    let dims: Vec<String> = r.start().iter().zip(r.end()).map(|(s, e)| format!("{s}:{e}")).collect();
    format!("[{}]", dims.join(", "))
}
