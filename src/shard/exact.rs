//! Exact baselines for small problems, to measure the search against.
//!
//! [`optimum`] minimizes time (compute, halos and reshards: a sum of per-op and per-edge terms) by variable
//! elimination on the cost graph: ops are eliminated one at a time, smallest resulting table first (a queue kept
//! up to date, so a long chain takes time linear in its length up to a logarithm), each leaving a table
//! over its neighbours of the best cost of everything eliminated so far; the tables' sizes are the only limit
//! ([`MAX_EXACT_ENTRIES`]), so chains and trees of any length, and graphs like the MLP training step whose
//! cross edges stay local, solve exactly. Peak memory is not a sum of local terms, so it is not a constraint
//! here. [`enumerate`] tries every assignment of a tiny problem ([`MAX_ENUMERATION`]) and honours a memory limit.

use super::evaluate::{evaluate, Costs};
use super::problem::Problem;
use super::strategies::Strategies;
use super::tables::Tables;
use super::{err, ShardError};
use crate::machine::Machine;
use std::collections::{BTreeSet, HashMap};

/// Most entries of one intermediate table of [`optimum`].
pub const MAX_EXACT_ENTRIES: usize = 1 << 24;
/// Most assignments [`enumerate`] tries.
pub const MAX_ENUMERATION: u128 = 1 << 22;

/// A table over some ops' strategies (`scope`, row-major, the last op fastest).
struct Factor {
    scope: Vec<usize>,
    table: Vec<f64>,
}

/// What eliminating one op left for the way back: its best strategy per assignment of its neighbours.
struct Step {
    op: usize,
    scope: Vec<usize>,
    best: Vec<u32>,
}

/// The assignment of least time, with its time. Errors when an intermediate table would exceed
/// [`MAX_EXACT_ENTRIES`].
pub fn optimum(tables: &Tables) -> Result<(Vec<usize>, f64), ShardError> {
    let mut factors: Vec<Factor> =
        tables.node_time.iter().enumerate().map(|(k, t)| Factor { scope: vec![k], table: t.clone() }).collect();
    for e in &tables.edges {
        factors.push(edge_factor(tables, e, |k| k));
    }
    minimize(&tables.counts, factors)
}

/// Re-solves the ops of `window` exactly with every other op fixed by `choice` (a large-neighbourhood step of
/// the search), minimizing time plus `extra(op, strategy)` per op of the window; writes the window's best
/// strategies into `choice`. Errors (changing nothing) past [`MAX_EXACT_ENTRIES`].
pub fn improve_window(
    tables: &Tables,
    window: &[usize],
    choice: &mut [usize],
    extra: &dyn Fn(usize, usize) -> f64,
) -> Result<(), ShardError> {
    let mut local = vec![usize::MAX; tables.counts.len()];
    for (i, &k) in window.iter().enumerate() {
        local[k] = i;
    }
    let counts: Vec<usize> = window.iter().map(|&k| tables.counts[k]).collect();
    let mut factors: Vec<Factor> = window
        .iter()
        .enumerate()
        .map(|(i, &k)| Factor {
            scope: vec![i],
            table: (0..counts[i]).map(|s| tables.node_time[k][s] + extra(k, s)).collect(),
        })
        .collect();
    let mut seen = BTreeSet::new();
    for &k in window {
        for &e in &tables.incident[k] {
            if !seen.insert(e) {
                continue;
            }
            let edge = &tables.edges[e];
            let (inside_from, inside_to) = (local[edge.from] != usize::MAX, local[edge.to] != usize::MAX);
            if inside_from && inside_to {
                factors.push(edge_factor(tables, edge, |k| local[k]));
            } else {
                // One end fixed: a table over the other end alone.
                let (v, table) = if inside_from {
                    (
                        edge.from,
                        (0..tables.counts[edge.from])
                            .map(|s| edge.at(&edge.time, s, choice[edge.to], tables.counts[edge.to]))
                            .collect(),
                    )
                } else {
                    (
                        edge.to,
                        (0..tables.counts[edge.to])
                            .map(|s| edge.at(&edge.time, choice[edge.from], s, tables.counts[edge.to]))
                            .collect(),
                    )
                };
                factors.push(Factor { scope: vec![local[v]], table });
            }
        }
    }
    let (best, _) = minimize(&counts, factors)?;
    for (i, &k) in window.iter().enumerate() {
        choice[k] = best[i];
    }
    Ok(())
}

/// An edge's table as a factor over its two ends (renumbered by `at`), or over one for an edge from an op to
/// itself.
fn edge_factor(tables: &Tables, e: &super::tables::Edge, at: impl Fn(usize) -> usize) -> Factor {
    if e.from == e.to {
        let table = (0..tables.counts[e.from]).map(|s| e.at(&e.time, s, s, tables.counts[e.to])).collect();
        return Factor { scope: vec![at(e.from)], table };
    }
    Factor { scope: vec![at(e.from), at(e.to)], table: e.time.clone() }
}

/// Variable elimination over variables with `counts` values each and `factors` over them: the assignment of
/// least total and the total.
///
/// Each variable keeps its neighbours with multiplicities and the size of the table its elimination would make
/// (as a log, for the queue), both updated per factor added or removed, so an elimination costs its own table and
/// the factors it touches, never a scan of a busy neighbour's factors: a value read by many ops stays linear.
fn minimize(counts: &[usize], factors: Vec<Factor>) -> Result<(Vec<usize>, f64), ShardError> {
    let n = counts.len();
    let mut graph = Neighbours::new(counts);
    let mut factors: Vec<Option<Factor>> = factors.into_iter().map(Some).collect();
    let mut holding: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); n];
    for (f, factor) in factors.iter().enumerate() {
        let scope = &factor.as_ref().expect("fresh").scope;
        for &v in scope {
            holding[v].insert(f);
        }
        graph.add(scope);
    }
    let mut steps = Vec::with_capacity(n);
    let mut total = 0.0;
    while let Some(v) = graph.pop() {
        let need = graph.exact_size(v);
        if need > MAX_EXACT_ENTRIES as u128 {
            return err(format!(
                "the exact solver would need a table of {need} entries, past MAX_EXACT_ENTRIES ({MAX_EXACT_ENTRIES})"
            ));
        }
        let ids: Vec<usize> = std::mem::take(&mut holding[v]).into_iter().collect();
        let used: Vec<Factor> = ids.iter().map(|&f| factors[f].take().expect("held factors are live")).collect();
        for (&f, factor) in ids.iter().zip(&used) {
            for &u in factor.scope.iter().filter(|&&u| u != v) {
                holding[u].remove(&f);
            }
            graph.remove(&factor.scope);
        }
        let scope: BTreeSet<usize> = used.iter().flat_map(|f| f.scope.iter().copied()).filter(|&u| u != v).collect();
        let scope: Vec<usize> = scope.into_iter().collect();
        let (table, best) = eliminate(v, &scope, &used, counts);
        if scope.is_empty() {
            total += table[0];
        } else {
            for &u in &scope {
                holding[u].insert(factors.len());
            }
            graph.add(&scope);
            factors.push(Some(Factor { scope: scope.clone(), table }));
        }
        steps.push(Step { op: v, scope, best });
    }
    let mut choice = vec![0usize; n];
    for step in steps.iter().rev() {
        let at = index_of(&step.scope, &choice, counts);
        choice[step.op] = step.best[at] as usize;
    }
    Ok((choice, total))
}

/// The variables still to eliminate: each one's neighbours (with the number of factors they share) and the size
/// of the table its elimination would make, in a queue smallest first, then fewest neighbours (variables of one
/// value make tables of size 1 whatever their neighbours: a hub must still go last).
struct Neighbours<'c> {
    counts: &'c [usize],
    of: Vec<HashMap<usize, u32>>,
    /// `log2` of the table size, in units of 2^-20 (exact enough to order; the limit uses [`Self::exact_size`]).
    log: Vec<i64>,
    /// Each variable's current key in `queue`.
    key: Vec<(i64, usize, usize)>,
    queue: BTreeSet<(i64, usize, usize)>,
    done: Vec<bool>,
}

impl<'c> Neighbours<'c> {
    fn new(counts: &'c [usize]) -> Self {
        let n = counts.len();
        let key: Vec<(i64, usize, usize)> = (0..n).map(|v| (0, 0, v)).collect();
        let queue = key.iter().copied().collect();
        Neighbours { counts, of: vec![HashMap::new(); n], log: vec![0; n], key, queue, done: vec![false; n] }
    }

    /// A factor over `scope` joins the graph.
    fn add(&mut self, scope: &[usize]) {
        for &a in scope {
            for &b in scope.iter().filter(|&&b| b != a) {
                let m = self.of[a].entry(b).or_insert(0);
                *m += 1;
                if *m == 1 {
                    self.shift(a, self.weight(b));
                }
            }
        }
    }

    /// A factor over `scope` leaves the graph.
    fn remove(&mut self, scope: &[usize]) {
        for &a in scope {
            for &b in scope.iter().filter(|&&b| b != a) {
                let Some(m) = self.of[a].get_mut(&b) else { continue };
                *m -= 1;
                if *m == 0 {
                    self.of[a].remove(&b);
                    self.shift(a, -self.weight(b));
                }
            }
        }
    }

    fn weight(&self, v: usize) -> i64 {
        ((self.counts[v].max(1) as f64).log2() * (1u64 << 20) as f64).round() as i64
    }

    fn shift(&mut self, v: usize, delta: i64) {
        self.log[v] += delta;
        if self.done[v] {
            return;
        }
        self.queue.remove(&self.key[v]);
        self.key[v] = (self.log[v], self.of[v].len(), v);
        self.queue.insert(self.key[v]);
    }

    /// The next variable to eliminate.
    fn pop(&mut self) -> Option<usize> {
        let (_, _, v) = self.queue.pop_first()?;
        self.done[v] = true;
        Some(v)
    }

    /// The size of the table eliminating `v` makes: the product of its neighbours' value counts.
    fn exact_size(&self, v: usize) -> u128 {
        self.of[v].keys().fold(1u128, |s, &u| s.saturating_mul(self.counts[u] as u128))
    }
}

/// The table over `scope` of the least sum of `used` over `v`'s values, and the best value per entry.
fn eliminate(v: usize, scope: &[usize], used: &[Factor], counts: &[usize]) -> (Vec<f64>, Vec<u32>) {
    // Values by position in `scope` then `v`, so the work is independent of the number of variables.
    let vars: Vec<usize> = scope.iter().copied().chain([v]).collect();
    let at: Vec<Vec<usize>> = used
        .iter()
        .map(|f| f.scope.iter().map(|u| vars.iter().position(|w| w == u).expect("in scope")).collect())
        .collect();
    let size: usize = scope.iter().map(|&u| counts[u]).product();
    let mut table = vec![f64::INFINITY; size];
    let mut best = vec![0u32; size];
    let mut value = vec![0usize; vars.len()];
    for (entry, (cost, arg)) in table.iter_mut().zip(best.iter_mut()).enumerate() {
        let mut rest = entry;
        for (k, &u) in scope.iter().enumerate().rev() {
            value[k] = rest % counts[u];
            rest /= counts[u];
        }
        for s in 0..counts[v] {
            value[scope.len()] = s;
            let sum: f64 = used
                .iter()
                .zip(&at)
                .map(|(f, at)| f.table[at.iter().fold(0, |i, &k| i * counts[vars[k]] + value[k])])
                .sum();
            if sum < *cost {
                (*cost, *arg) = (sum, s as u32);
            }
        }
    }
    (table, best)
}

fn index_of(scope: &[usize], choice: &[usize], counts: &[usize]) -> usize {
    scope.iter().fold(0, |at, &u| at * counts[u] + choice[u])
}

/// The best assignment by time among those within `memory_limit` bytes per device (if any), trying every one.
/// Errors past [`MAX_ENUMERATION`] assignments; `Ok(None)` when none fits.
pub fn enumerate(
    problem: &Problem,
    strategies: &Strategies,
    tables: &Tables,
    machine: &Machine,
    memory_limit: Option<u64>,
) -> Result<Option<(Vec<usize>, Costs)>, ShardError> {
    let total = tables.counts.iter().try_fold(1u128, |n, &c| n.checked_mul(c as u128));
    if total.is_none_or(|n| n > MAX_ENUMERATION) {
        return err(format!("more than MAX_ENUMERATION ({MAX_ENUMERATION}) assignments to enumerate"));
    }
    let mut choice = vec![0usize; tables.counts.len()];
    let mut best: Option<(Vec<usize>, Costs)> = None;
    loop {
        let costs = evaluate(problem, strategies, tables, machine, &choice);
        let fits = memory_limit.is_none_or(|m| costs.peak_memory <= m);
        if fits && best.as_ref().is_none_or(|b| costs.time < b.1.time) {
            best = Some((choice.clone(), costs));
        }
        let Some(k) = (0..choice.len()).rev().find(|&k| choice[k] + 1 < tables.counts[k]) else { break };
        choice[k] += 1;
        choice[k + 1..].iter_mut().for_each(|c| *c = 0);
    }
    Ok(best)
}
