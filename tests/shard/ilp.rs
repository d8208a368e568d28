//! Alpa's integer linear program for a sharding problem, solved by `microlp` (a dev-dependency: the baseline the
//! tests and the benchmark measure the search against, with memory per device as a constraint, which variable
//! elimination cannot take).
//!
//! A binary `s[k][i]` picks strategy `i` of op `k` (`Σ_i s[k][i] = 1`); a variable `e[ij]` in [0, 1] per pair of
//! strategies of each edge, with `Σ_j e[ij] = s[from][i]` and `Σ_i e[ij] = s[to][j]`, is then 1 for the chosen
//! pair alone. Time is `Σ node_time·s + Σ reshard_time·e`. Memory: at every step of the program, the shards of
//! the tensors live then (`shard::evaluate::memory_profile`'s live ranges) plus the resharded copies consumers
//! hold while they run stay within the limit.

use microlp::{ComparisonOp, LinearExpr, OptimizationDirection, Problem as Lp, Variable};
use std::collections::HashMap;
use std::time::Duration;
use tapestry::machine::Machine;
use tapestry::shard::tables::Tables;
use tapestry::shard::{Problem, Strategies};

/// What the solver found.
pub struct Solved {
    /// A strategy per op.
    pub choice: Vec<usize>,
    /// Its time (the objective).
    pub time: f64,
    /// Whether the solver proved it optimal (not stopped by its time limit).
    pub optimal: bool,
}

/// The least-time assignment within `memory` bytes per device (no limit when `None`), or `None` when nothing fits
/// or the solver fails. The solver stops after `limit` with the best assignment so far.
pub fn solve(
    p: &Problem,
    s: &Strategies,
    t: &Tables,
    m: &Machine,
    memory: Option<u64>,
    limit: Duration,
) -> Option<Solved> {
    let mut lp = Lp::new(OptimizationDirection::Minimize);
    lp.set_time_limit(limit);
    let pick: Vec<Vec<Variable>> =
        t.node_time.iter().map(|row| row.iter().map(|&c| lp.add_binary_var(c)).collect()).collect();
    for vars in &pick {
        lp.add_constraint(sum(vars.iter().map(|&v| (v, 1.0))), ComparisonOp::Eq, 1.0);
    }
    let mut pairs: Vec<Vec<Variable>> = Vec::with_capacity(t.edges.len());
    for e in &t.edges {
        let (n, m_) = (t.counts[e.from], t.counts[e.to]);
        let vars: Vec<Variable> = (0..n * m_).map(|ij| lp.add_var(e.time[ij], (0.0, 1.0))).collect();
        for i in 0..n {
            let row = (0..m_).map(|j| (vars[i * m_ + j], 1.0)).chain([(pick[e.from][i], -1.0)]);
            lp.add_constraint(sum(row), ComparisonOp::Eq, 0.0);
        }
        for j in 0..m_ {
            let column = (0..n).map(|i| (vars[i * m_ + j], 1.0)).chain([(pick[e.to][j], -1.0)]);
            lp.add_constraint(sum(column), ComparisonOp::Eq, 0.0);
        }
        pairs.push(vars);
    }
    if let Some(limit) = memory {
        for step in memory_rows(p, s, t, m, &pick, &pairs) {
            lp.add_constraint(sum(step.into_iter()), ComparisonOp::Le, limit as f64);
        }
    }
    let solution = lp.solve().ok()?;
    let optimal = solution.is_optimal();
    let solution = solution.solution()?.clone();
    let choice: Vec<usize> =
        pick.iter().map(|vars| vars.iter().position(|&v| solution.var_value(v) > 0.5).unwrap_or(0)).collect();
    Some(Solved { time: t.time(&choice), choice, optimal })
}

/// Per step of the program, the bytes one device holds as terms of the program's variables.
fn memory_rows(
    p: &Problem,
    s: &Strategies,
    t: &Tables,
    m: &Machine,
    pick: &[Vec<Variable>],
    pairs: &[Vec<Variable>],
) -> Vec<Vec<(Variable, f64)>> {
    let steps = p.ops().len();
    let mut rows: Vec<Vec<(Variable, f64)>> = vec![Vec::new(); steps];
    let edge_of: HashMap<(usize, usize, usize), usize> =
        t.edges.iter().enumerate().filter_map(|(i, e)| Some(((e.from, e.to, e.slot?), i))).collect();
    for (k, op) in p.ops().iter().enumerate() {
        let Some((tensor, _)) = &op.output else { continue };
        let x = p.tensor(*tensor);
        let last = p.consumers(*tensor).iter().map(|c| c.0 .0 as usize).max().unwrap_or(k);
        let (from, to) = if x.persistent { (0, steps - 1) } else { (k, last) };
        for (i, strategy) in s.0[k].iter().enumerate() {
            let spec = strategy.output.as_ref().expect("an op with an output has its spec");
            let bytes = spec.shard_bytes(&x.shape, x.elem_bytes, m.mesh()) as f64;
            for row in &mut rows[from..=to] {
                row.push((pick[k][i], bytes));
            }
        }
        for &(c, slot) in p.consumers(*tensor) {
            let c = c.0 as usize;
            let Some(&e) = edge_of.get(&(k, c, slot)) else { continue };
            let count = t.counts[c];
            for (i, have) in s.0[k].iter().enumerate() {
                for (j, want) in s.0[c].iter().enumerate() {
                    if Some(&want.inputs[slot]) != have.output.as_ref() {
                        let bytes = want.inputs[slot].shard_bytes(&x.shape, x.elem_bytes, m.mesh()) as f64;
                        rows[c].push((pairs[e][i * count + j], bytes));
                    }
                }
            }
        }
    }
    rows
}

fn sum(terms: impl Iterator<Item = (Variable, f64)>) -> LinearExpr {
    let mut expr = LinearExpr::empty();
    for (v, c) in terms {
        expr.add(v, c);
    }
    expr
}
