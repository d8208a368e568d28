//! Text reports of an assignment: each op's plan, output spec and how it combines partial results, and each
//! reshard with its collectives.

use super::problem::Problem;
use super::reshard::{reshard, Transfer};
use super::strategies::Strategies;
use super::tables::Tables;
use crate::machine::{Machine, Mesh};
use std::fmt::Write;

/// One line per op (`name plan -> spec: collectives`), then one line per edge that moves bytes (`producer ->
/// consumer: from to to: collectives`).
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
        let _ = write!(out, "{} {}", op.name, s.plan.display(&op.index, mesh));
        if let Some(spec) = &s.output {
            let _ = write!(out, " -> {}", spec.display(mesh));
        }
        transfers(&mut out, &s.finish, mesh);
        out.push('\n');
    }
    for e in &tables.edges {
        let have = strategies.0[e.from][choice[e.from]].output.as_ref().expect("a producer has an output spec");
        let to = &strategies.0[e.to][choice[e.to]];
        let want = match e.slot {
            Some(slot) => &to.inputs[slot],
            None => to.output.as_ref().expect("an aliased tensor has a spec"),
        };
        let list = reshard(problem.tensor(e.tensor), have, want, machine);
        if list.is_empty() {
            continue;
        }
        let t = problem.tensor(e.tensor);
        let consumer = &problem.ops()[e.to].name;
        let _ = write!(out, "{} -> {consumer}: {} to {}", t.name, have.display(mesh), want.display(mesh));
        transfers(&mut out, &list, mesh);
        out.push('\n');
    }
    out
}

/// `: all-reduce along x (B bytes per group, time T)` for each collective, nothing for none.
fn transfers(out: &mut String, list: &[Transfer], mesh: &Mesh) {
    for (k, x) in list.iter().enumerate() {
        let sep = if k == 0 { ":" } else { "," };
        let axis = &mesh.axes()[x.axis].name;
        let _ = write!(out, "{sep} {} along {axis} ({} B per group, time {:.2})", x.collective, x.group_bytes, x.time);
    }
}
