//! Text reports of an assignment: each op's plan and output spec, and each reshard with its collectives.

use super::problem::Problem;
use super::reshard::reshard;
use super::strategies::Strategies;
use super::tables::Tables;
use crate::machine::Machine;
use std::fmt::Write;

/// One line per op (`name plan -> spec`), then one line per edge that moves bytes (`tensor: from -> to:
/// collective along axis (bytes) ...`).
pub fn plans(
    problem: &Problem,
    strategies: &Strategies,
    tables: &Tables,
    machine: &Machine,
    choice: &[usize],
) -> String {
    let mesh = machine.mesh();
    let mut out = String::new();
    for (k, op) in problem.ops().iter().enumerate() {
        let s = &strategies.0[k][choice[k]];
        let spec = s.output.as_ref().map(|o| o.display(mesh).to_string()).unwrap_or_default();
        let _ = writeln!(out, "{} {} -> {spec}", op.name, s.plan.display(&op.index, mesh));
    }
    for e in &tables.edges {
        let have = strategies.0[e.from][choice[e.from]].output.as_ref().expect("a producer has an output spec");
        let to = &strategies.0[e.to][choice[e.to]];
        let want = match e.slot {
            Some(slot) => &to.inputs[slot],
            None => to.output.as_ref().expect("an aliased tensor has a spec"),
        };
        let transfers = reshard(problem.tensor(e.tensor), have, want, machine);
        if transfers.is_empty() {
            continue;
        }
        let t = problem.tensor(e.tensor);
        let consumer = &problem.ops()[e.to].name;
        let _ = write!(out, "{} -> {consumer}: {} to {}:", t.name, have.display(mesh), want.display(mesh));
        for x in transfers {
            let _ = write!(
                out,
                " {} along {} ({} B, {:.2})",
                x.collective,
                mesh.axes()[x.axis].name,
                x.group_bytes,
                x.time
            );
        }
        out.push('\n');
    }
    out
}
