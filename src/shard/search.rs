//! The automatic search: a stochastic local search over the ops' strategies that keeps a Pareto frontier of time,
//! peak memory per device and bytes moved (the whitepaper's optimizer), deterministic for a seed and bounded by a
//! time budget.
//!
//! Round 0 is a greedy plan (each op in order takes the strategy cheapest with what its producers chose) improved
//! by descent; the next rounds re-solve windows of neighbouring ops exactly, sweeping along the graph. Every later
//! round takes a parent from the frontier (or the best so far), applies a mutator (give one
//! op a random strategy; give an op and a neighbour random strategies; propagate an op's plan along the index maps
//! to every op it reaches, as [`super::propagate`]; make a consumer take what its producer gives), then descends: each op in turn takes the strategy of least local cost with its neighbours fixed, until
//! nothing changes. The local cost weighs memory by a factor drawn per round from a ladder (0 and powers of 4
//! around the ratio of the seed's time to its memory), so rounds explore the whole trade-off. Each round's result
//! is offered to the frontier; the best is the feasible point (within the memory limit) of least objective.
//!
//! The rounds are a fixed sequence for a seed: the result after `n` rounds is always the same, and the time budget
//! only decides how many rounds run (the result reports how many, so a run can be replayed with `max_rounds`).

use super::evaluate::{evaluate, Costs};
use super::pareto::Frontier;
use super::problem::Problem;
use super::propagate::propagate;
use super::spec::Plan;
use super::strategies::Strategies;
use super::tables::Tables;
use crate::machine::Machine;
use std::time::{Duration, Instant};

/// Ops re-solved together by one large-neighbourhood step (the largest window; rounds draw smaller ones too).
pub const WINDOW: usize = 24;

/// Most descent sweeps per round (each sweep visits every op once; descent stops earlier when nothing changes).
pub const MAX_SWEEPS: usize = 64;

/// What the search minimizes (among plans within the memory limit).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Objective {
    /// Estimated wall-clock time (Alpa's objective when compute is free).
    Time,
    /// Peak memory per device.
    Memory,
    /// Bytes moved between devices.
    Moved,
}

impl Objective {
    /// The objective spelled `name` (`time`, `memory`, `bytes`).
    pub fn from_name(name: &str) -> Option<Objective> {
        Some(match name {
            "time" => Objective::Time,
            "memory" => Objective::Memory,
            "bytes" => Objective::Moved,
            _ => return None,
        })
    }

    fn key(self, c: &Costs) -> [f64; 3] {
        let [t, m, b] = c.vector();
        match self {
            Objective::Time => [t, m, b],
            Objective::Memory => [m, t, b],
            Objective::Moved => [b, t, m],
        }
    }
}

/// How to search.
#[derive(Clone, Debug)]
pub struct SearchOptions {
    /// The random seed.
    pub seed: u64,
    /// Stop starting rounds after this long.
    pub budget: Duration,
    /// Stop after this many rounds (0: only the budget stops it).
    pub max_rounds: usize,
    /// What to minimize.
    pub objective: Objective,
    /// Peak bytes per device a plan may use (`None`: no limit).
    pub memory_limit: Option<u64>,
}

/// What the search found.
#[derive(Clone, Debug)]
pub struct SearchResult {
    /// The chosen strategy per op.
    pub choice: Vec<usize>,
    /// Its costs.
    pub costs: Costs,
    /// Whether it fits the memory limit (when nothing found does, the least-memory plan is returned).
    pub feasible: bool,
    /// The costs of the greedy seed plan.
    pub seed_costs: Costs,
    /// The frontier.
    pub frontier: Frontier,
    /// Rounds run.
    pub rounds: usize,
    /// Time spent.
    pub elapsed: Duration,
}

/// Searches `problem`'s plans.
pub fn search(
    problem: &Problem,
    strategies: &Strategies,
    tables: &Tables,
    machine: &Machine,
    options: &SearchOptions,
) -> SearchResult {
    let start = Instant::now();
    let mut state = State::new(problem, strategies, tables, machine, options);
    let seed = state.greedy();
    let seed_costs = evaluate(problem, strategies, tables, machine, &seed);
    let scale = seed_costs.time.max(f64::MIN_POSITIVE) / (seed_costs.peak_memory.max(1) as f64);
    state.ladder = std::iter::once(0.0).chain((-4..=8).map(|k| scale * 4f64.powi(k))).collect();
    let mut current = seed.clone();
    state.descend(&mut current, 0.0);
    state.offer(&seed);
    state.offer(&current);
    // The first rounds sweep windows along the op order over the current plan; the rest are random.
    let sweep: Vec<usize> = (0..current.len()).step_by(WINDOW / 2).collect();
    let mut rounds = 1;
    while (options.max_rounds == 0 || rounds < options.max_rounds) && start.elapsed() < options.budget {
        match sweep.get(rounds - 1) {
            Some(&k) => {
                state.window(&mut current, k, WINDOW, 0.0);
                state.descend(&mut current, 0.0);
                state.offer(&current);
            }
            None => state.round(),
        }
        rounds += 1;
    }
    let (choice, costs) = state.best.clone().expect("round 0 offers a plan");
    let feasible = options.memory_limit.is_none_or(|m| costs.peak_memory <= m);
    SearchResult { choice, costs, feasible, seed_costs, frontier: state.frontier, rounds, elapsed: start.elapsed() }
}

struct State<'a> {
    problem: &'a Problem,
    strategies: &'a Strategies,
    tables: &'a Tables,
    machine: &'a Machine,
    options: &'a SearchOptions,
    rng: SplitMix64,
    ladder: Vec<f64>,
    frontier: Frontier,
    best: Option<(Vec<usize>, Costs)>,
    /// Per op and strategy: the bytes per device of what it writes (the memory term of the local cost).
    memory: Vec<Vec<f64>>,
}

impl<'a> State<'a> {
    fn new(
        problem: &'a Problem,
        strategies: &'a Strategies,
        tables: &'a Tables,
        machine: &'a Machine,
        options: &'a SearchOptions,
    ) -> State<'a> {
        let memory = problem
            .ops()
            .iter()
            .zip(&strategies.0)
            .map(|(op, ss)| {
                let bytes = |s: &super::Strategy| match (&op.output, &s.output) {
                    (Some((t, _)), Some(spec)) => {
                        let t = problem.tensor(*t);
                        spec.shard_bytes(&t.shape, t.elem_bytes, machine.mesh()) as f64
                    }
                    _ => 0.0,
                };
                ss.iter().map(bytes).collect()
            })
            .collect();
        let rng = SplitMix64(options.seed);
        State {
            problem,
            strategies,
            tables,
            machine,
            options,
            rng,
            ladder: vec![0.0],
            frontier: Frontier::default(),
            best: None,
            memory,
        }
    }

    /// Each op in order takes the strategy cheapest with its producers' choices (ties: less memory).
    fn greedy(&self) -> Vec<usize> {
        let n = self.tables.counts.len();
        let mut choice = vec![0usize; n];
        for k in 0..n {
            let mut best = (f64::INFINITY, f64::INFINITY, 0);
            for s in 0..self.tables.counts[k] {
                let mut cost = self.tables.node_time[k][s];
                for &e in &self.tables.incident[k] {
                    let e = &self.tables.edges[e];
                    if e.to == k && e.from < k {
                        cost += e.at(&e.time, choice[e.from], s, self.tables.counts[k]);
                    }
                }
                let key = (cost, self.memory[k][s]);
                if key < (best.0, best.1) {
                    best = (cost, self.memory[k][s], s);
                }
            }
            choice[k] = best.2;
        }
        choice
    }

    /// Descent: each op takes its best strategy with its neighbours fixed, until a sweep changes nothing.
    fn descend(&self, choice: &mut [usize], lambda: f64) {
        for _ in 0..MAX_SWEEPS {
            let mut changed = false;
            for k in 0..choice.len() {
                let local = |s: usize| self.tables.local_time(k, s, choice) + lambda * self.memory[k][s];
                let mut best = (local(choice[k]), choice[k]);
                for s in 0..self.tables.counts[k] {
                    let c = local(s);
                    if c < best.0 - 1e-9 * best.0.abs() {
                        best = (c, s);
                    }
                }
                if best.1 != choice[k] {
                    choice[k] = best.1;
                    changed = true;
                }
            }
            if !changed {
                return;
            }
        }
    }

    /// One round: a parent, a mutation, a descent, an offer.
    fn round(&mut self) {
        let points = self.frontier.points();
        let mut choice = if points.is_empty() || self.rng.below(2) == 0 {
            self.best.as_ref().expect("round 0 offers a plan").0.clone()
        } else {
            points[self.rng.below(points.len())].1.clone()
        };
        let k = self.mutate(&mut choice);
        let lambda = self.ladder[self.rng.below(self.ladder.len())];
        let size = 2 + self.rng.below(WINDOW - 1);
        self.window(&mut choice, k, size, lambda);
        self.descend(&mut choice, lambda);
        self.offer(&choice);
    }

    /// Re-solves exactly the `size` ops nearest op `k` (breadth first along edges), the others fixed.
    fn window(&self, choice: &mut [usize], k: usize, size: usize, lambda: f64) {
        let mut window = vec![k];
        let mut at = 0;
        while at < window.len() && window.len() < size {
            for &e in &self.tables.incident[window[at]] {
                let e = &self.tables.edges[e];
                for v in [e.from, e.to] {
                    if window.len() < size && !window.contains(&v) {
                        window.push(v);
                    }
                }
            }
            at += 1;
        }
        let extra = |op: usize, s: usize| lambda * self.memory[op][s];
        // A window too large for an exact table is left as it was: the descent still improves it.
        let _ = super::exact::improve_window(self.tables, &window, choice, &extra);
    }

    /// Applies a random mutator around a random op; returns that op.
    fn mutate(&mut self, choice: &mut [usize]) -> usize {
        let n = choice.len();
        let k = self.rng.below(n);
        match self.rng.below(4) {
            0 => choice[k] = self.rng.below(self.tables.counts[k]),
            1 => {
                choice[k] = self.rng.below(self.tables.counts[k]);
                if let Some(&e) = self.pick(&self.tables.incident[k].clone()) {
                    let e = &self.tables.edges[e];
                    let other = if e.from == k { e.to } else { e.from };
                    choice[other] = self.rng.below(self.tables.counts[other]);
                }
            }
            2 => self.spread(choice, k),
            _ => {
                // A consumer takes a strategy that needs exactly what its producer gives (no reshard), if any.
                let Some(&e) = self.pick(&self.tables.incident[k].clone()) else { return k };
                let e = &self.tables.edges[e];
                let free: Vec<usize> = (0..self.tables.counts[e.to])
                    .filter(|&s| e.at(&e.time, choice[e.from], s, self.tables.counts[e.to]) == 0.0)
                    .collect();
                if let Some(&s) = self.pick(&free) {
                    choice[e.to] = s;
                }
            }
        }
        k
    }

    /// Sharding propagation from op `k`: its plan (and the pins) spread along the index maps to every op they
    /// reach, each taking the strategy of the plan propagated to it when it has one.
    fn spread(&self, choice: &mut [usize], k: usize) {
        let mut plans: Vec<Option<Plan>> = self.problem.ops().iter().map(|op| op.pinned.clone()).collect();
        plans[k] = Some(self.strategies.0[k][choice[k]].plan.clone());
        propagate(self.problem, self.machine, &mut plans);
        for (j, plan) in plans.iter().enumerate() {
            let Some(plan) = plan else { continue };
            if let Some(s) = self.strategies.0[j].iter().position(|s| &s.plan == plan) {
                choice[j] = s;
            }
        }
    }

    fn pick<'v, T>(&mut self, items: &'v [T]) -> Option<&'v T> {
        (!items.is_empty()).then(|| &items[self.rng.below(items.len())])
    }

    fn offer(&mut self, choice: &[usize]) {
        let costs = evaluate(self.problem, self.strategies, self.tables, self.machine, choice);
        self.frontier.offer(costs, choice);
        let rank = |c: &Costs| {
            let over = self.options.memory_limit.is_some_and(|m| c.peak_memory > m);
            // Over the limit, less memory first; within it, the objective.
            if over {
                (1, [c.peak_memory as f64, c.time, c.moved])
            } else {
                (0, self.options.objective.key(c))
            }
        };
        if self.best.as_ref().is_none_or(|(_, b)| rank(&costs) < rank(b)) {
            self.best = Some((choice.to_vec(), costs));
        }
    }
}

/// SplitMix64 (Steele, Lea and Flood, 2014): a small, fast, seedable generator; the search needs nothing more.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}
