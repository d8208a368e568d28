//! The timing and ordering core of the NPU interpreter (`npu-machine.md` §7–8), apart from what instructions
//! compute: in-order queues, timeline semaphores, barriers, a discrete-event clock, deadlock detection, and race
//! detection with vector clocks.
//!
//! Each step sits on one queue and runs its `cycles` once it is at the head of its queue and every `wait`
//! (`semaphore >= value`) holds; when it ends, its `signals` set semaphores (a value not above the current one is
//! an error). When several queues can start at one time, the lower queue starts first, so a schedule is the same
//! on every run. A barrier step waits until every step before it (in program order) has ended, and every step after
//! it waits for the barrier.
//!
//! Happens-before is queue order, signal → wait (a wait for `>= v` is ordered after the step whose signal raised the
//! semaphore to `v` or above), and barriers. Two steps on different queues that touch overlapping bytes of one
//! memory, at least one writing, with neither before the other, race; the error names both. Accesses are kept per
//! memory in an interval map, and an access that a later one both follows and covers (a write covering anything, a
//! read covering reads) is forgotten: races are still found (with the covering access), and the work stays near
//! linear for programs that touch distinct tiles or reuse buffers in order.

use crate::interfaces::memory_effects::Extent;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap, VecDeque};

/// Bytes of one memory (the caller names memories: a chip's HBM buffer, a slice's DM, ...): strided runs, as the
/// memory-effects interface reports them (the extent's own `unit` is not read).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Footprint {
    /// The memory.
    pub memory: u64,
    /// The bytes.
    pub extent: Extent,
}

impl Footprint {
    /// Bytes `[low, high)` of `memory` (`high > low`).
    pub fn bytes(memory: u64, low: i128, high: i128) -> Footprint {
        Footprint { memory, extent: Extent::run(0, low, high) }
    }
}

/// One instruction as the schedule sees it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Step {
    /// Its queue (ignored for a barrier).
    pub queue: usize,
    /// Cycles it runs.
    pub cycles: u64,
    /// `(semaphore, value)`: it starts once each semaphore is at least the value.
    pub waits: Vec<(usize, u64)>,
    /// `(semaphore, value)`: set when it ends.
    pub signals: Vec<(usize, u64)>,
    /// Whether it is a barrier.
    pub barrier: bool,
    /// Bytes it reads.
    pub reads: Vec<Footprint>,
    /// Bytes it writes.
    pub writes: Vec<Footprint>,
}

/// When each step ran, and how busy each queue was.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schedule {
    /// Cycle at which each step started.
    pub start: Vec<u64>,
    /// Cycle at which each step ended.
    pub end: Vec<u64>,
    /// Cycles each queue spent running steps.
    pub busy: Vec<u64>,
    /// When the last step ended.
    pub makespan: u64,
}

/// Why a program cannot run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScheduleError {
    /// No queue can start its head step and none is running: each blocked step with the wait that holds it,
    /// `(step, semaphore, needed, current)`.
    Deadlock(Vec<(usize, usize, u64, u64)>),
    /// Two unordered steps touch the same bytes, at least one writing: `(earlier step, later step, memory)`.
    Race(usize, usize, u64),
    /// A step set a semaphore to a value not above its current one: `(step, semaphore, from, to)`.
    NotIncreasing(usize, usize, u64, u64),
    /// A step names a queue or semaphore past the counts given, or a barrier waits or signals.
    Malformed(usize),
}

/// Runs `steps` (in program order) on `queues` queues with `semaphores` semaphores, all starting at 0.
pub fn schedule(steps: &[Step], queues: usize, semaphores: usize) -> Result<Schedule, ScheduleError> {
    if let Some(k) = steps.iter().position(|s| {
        let syncs = s.waits.iter().chain(&s.signals);
        (!s.barrier && s.queue >= queues)
            || (s.barrier && (!s.waits.is_empty() || !s.signals.is_empty()))
            || syncs.clone().any(|&(sem, _)| sem >= semaphores)
    }) {
        return Err(ScheduleError::Malformed(k));
    }
    let mut run = Run::new(steps, queues, semaphores);
    let mut phase_start = 0;
    for (k, step) in steps.iter().enumerate() {
        if step.barrier {
            run.phase(phase_start..k)?;
            run.barrier(k);
            phase_start = k + 1;
        }
    }
    run.phase(phase_start..steps.len())?;
    let makespan = run.end.iter().copied().max().unwrap_or(0);
    Ok(Schedule { start: run.start, end: run.end, busy: run.busy, makespan })
}

/// A vector clock: per queue, how many of its steps are known to have happened.
type Clock = Vec<u64>;

struct Run<'a> {
    steps: &'a [Step],
    now: u64,
    start: Vec<u64>,
    end: Vec<u64>,
    busy: Vec<u64>,
    values: Vec<u64>,
    /// Per semaphore, each value it took and the step that set it, ascending.
    raised: Vec<Vec<(u64, usize)>>,
    /// Per step, its vector clock (set when it starts).
    clock: Vec<Clock>,
    /// Per queue, the clock of its last step (or of the last barrier).
    last: Vec<Clock>,
    races: Races,
}

impl<'a> Run<'a> {
    fn new(steps: &'a [Step], queues: usize, semaphores: usize) -> Run<'a> {
        Run {
            steps,
            now: 0,
            start: vec![0; steps.len()],
            end: vec![0; steps.len()],
            busy: vec![0; queues],
            values: vec![0; semaphores],
            raised: vec![Vec::new(); semaphores],
            clock: vec![Vec::new(); steps.len()],
            last: vec![vec![0; queues]; queues],
            races: Races::default(),
        }
    }

    /// Runs the steps of `range` (no barrier among them) to their end.
    fn phase(&mut self, range: std::ops::Range<usize>) -> Result<(), ScheduleError> {
        let mut heads: Vec<VecDeque<usize>> = vec![VecDeque::new(); self.busy.len()];
        for k in range {
            heads[self.steps[k].queue].push_back(k);
        }
        let mut running: BinaryHeap<Reverse<(u64, usize)>> = BinaryHeap::new();
        let mut idle = vec![true; heads.len()];
        loop {
            for q in 0..heads.len() {
                let Some(&k) = heads[q].front() else { continue };
                if idle[q] && self.ready(k) {
                    heads[q].pop_front();
                    idle[q] = false;
                    self.begin(k)?;
                    running.push(Reverse((self.end[k], k)));
                }
            }
            let Some(Reverse((t, _))) = running.peek().copied() else {
                if heads.iter().all(VecDeque::is_empty) {
                    return Ok(());
                }
                return Err(self.deadlock(&heads));
            };
            self.now = t;
            while let Some(&Reverse((t, k))) = running.peek() {
                if t != self.now {
                    break;
                }
                running.pop();
                idle[self.steps[k].queue] = true;
                self.finish(k)?;
            }
        }
    }

    fn ready(&self, k: usize) -> bool {
        self.steps[k].waits.iter().all(|&(sem, v)| self.values[sem] >= v)
    }

    /// Starts step `k` now: its clock joins its queue's and its signalers', and its accesses are checked.
    fn begin(&mut self, k: usize) -> Result<(), ScheduleError> {
        let step = &self.steps[k];
        let q = step.queue;
        let mut clock = self.last[q].clone();
        for &(sem, v) in &step.waits {
            if v == 0 {
                continue;
            }
            let raised = &self.raised[sem];
            let at = raised.partition_point(|&(value, _)| value < v);
            let signaler = raised[at].1; // Ready, so some signal reached v.
            join(&mut clock, &self.clock[signaler]);
        }
        clock[q] += 1;
        self.clock[k] = clock.clone();
        self.last[q] = clock;
        self.start[k] = self.now;
        self.end[k] = self.now.saturating_add(step.cycles);
        self.busy[q] = self.busy[q].saturating_add(step.cycles);
        let (steps, clocks) = (self.steps, &self.clock);
        let before = |a: usize, b: usize| clocks[a][steps[a].queue] <= clocks[b][steps[a].queue];
        for (f, write) in step.reads.iter().map(|f| (f, false)).chain(step.writes.iter().map(|f| (f, true))) {
            self.races.access(k, *f, write, &before).map_err(|(a, m)| ScheduleError::Race(a, k, m))?;
        }
        Ok(())
    }

    fn finish(&mut self, k: usize) -> Result<(), ScheduleError> {
        for &(sem, v) in &self.steps[k].signals {
            if v <= self.values[sem] {
                return Err(ScheduleError::NotIncreasing(k, sem, self.values[sem], v));
            }
            self.values[sem] = v;
            self.raised[sem].push((v, k));
        }
        Ok(())
    }

    /// Barrier `k`: every queue's next step follows every step so far.
    fn barrier(&mut self, k: usize) {
        let mut all = vec![0; self.busy.len()];
        for clock in &self.last {
            join(&mut all, clock);
        }
        self.last = vec![all.clone(); self.busy.len()];
        self.clock[k] = all;
        (self.start[k], self.end[k]) = (self.now, self.now);
    }

    fn deadlock(&self, heads: &[VecDeque<usize>]) -> ScheduleError {
        let blocked = heads
            .iter()
            .filter_map(|h| h.front())
            .filter_map(|&k| {
                let &(sem, v) = self.steps[k].waits.iter().find(|&&(sem, v)| self.values[sem] < v)?;
                Some((k, sem, v, self.values[sem]))
            })
            .collect();
        ScheduleError::Deadlock(blocked)
    }
}

fn join(into: &mut Clock, other: &Clock) {
    for (a, &b) in into.iter_mut().zip(other) {
        *a = (*a).max(b);
    }
}

/// The accesses not yet known to be ordered before everything that follows, per memory: reads and writes apart
/// (a read need only be checked against writes, and only scans reads it covers), each by where its bytes start.
#[derive(Default)]
struct Races {
    memories: HashMap<u64, [Accesses; 2]>,
}

/// Accesses of one kind to one memory.
#[derive(Default)]
struct Accesses {
    /// `(first byte, step) → extent`.
    by_low: BTreeMap<(i128, usize), Extent>,
    /// The widest extent kept (bounds), so a query need only look this far below its own start.
    widest: i128,
}

impl Races {
    /// Records that step `k` reads or writes `f`; the earlier step it races with, if any.
    fn access(
        &mut self,
        k: usize,
        f: Footprint,
        write: bool,
        before: &dyn Fn(usize, usize) -> bool,
    ) -> Result<(), (usize, u64)> {
        let e = f.extent;
        let (low, high) = e.bounds();
        if low >= high {
            return Ok(());
        }
        let [reads, writes] = self.memories.entry(f.memory).or_default();
        for (acc, earlier_write) in [(&mut *writes, true), (&mut *reads, false)] {
            let mut forget = Vec::new();
            if write || earlier_write {
                // Any overlap unordered is a race; an ordered one this access covers is forgotten (a write covers
                // anything, a read only reads).
                for (&(at, a), other) in acc.by_low.range((low.saturating_sub(acc.widest), 0)..(high, 0)) {
                    if a == k || other.bounds().1 <= low || !e.overlaps(other) {
                        continue;
                    }
                    if !before(a, k) {
                        return Err((a, f.memory));
                    }
                    if (write || !earlier_write) && e.covers(other) {
                        forget.push((at, a));
                    }
                }
            } else {
                // Reads never race with reads, but a read forgets the ordered reads it covers, so that reading one
                // buffer again and again does not pile up accesses for every later write to scan.
                for (&(at, a), other) in acc.by_low.range((low, 0)..(high, 0)) {
                    if a != k && e.covers(other) && before(a, k) {
                        forget.push((at, a));
                    }
                }
            }
            for key in forget {
                acc.by_low.remove(&key);
            }
        }
        let acc = if write { writes } else { reads };
        acc.by_low.insert((low, k), e);
        acc.widest = acc.widest.max(high - low);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(queue: usize, cycles: u64) -> Step {
        Step { queue, cycles, ..Step::default() }
    }

    fn bytes(memory: u64, low: i128, high: i128) -> Vec<Footprint> {
        vec![Footprint::bytes(memory, low, high)]
    }

    #[test]
    fn queues_overlap_and_semaphores_order() {
        let load = Step { signals: vec![(0, 1)], writes: bytes(7, 0, 64), ..step(0, 66_036) };
        let other = step(1, 100);
        let compute = Step { waits: vec![(0, 1)], reads: bytes(7, 0, 64), ..step(2, 96) };
        let s = schedule(&[load, other, compute], 3, 1).unwrap();
        assert_eq!((s.start, s.end), (vec![0, 0, 66_036], vec![66_036, 100, 66_132]));
        assert_eq!((s.busy, s.makespan), (vec![66_036, 100, 96], 66_132));
    }

    #[test]
    fn barriers_drain_every_queue() {
        let steps = [step(0, 10), step(1, 30), Step { barrier: true, ..Step::default() }, step(0, 5)];
        let s = schedule(&steps, 2, 0).unwrap();
        assert_eq!((s.start[3], s.makespan), (30, 35));
    }

    #[test]
    fn unordered_writes_race_and_waits_deadlock() {
        let a = Step { writes: bytes(1, 0, 64), ..step(0, 10) };
        let b = Step { reads: bytes(1, 32, 96), ..step(1, 10) };
        assert_eq!(schedule(&[a.clone(), b.clone()], 2, 0), Err(ScheduleError::Race(0, 1, 1)));
        let apart = Step { reads: bytes(1, 64, 96), ..b.clone() };
        assert!(schedule(&[a.clone(), apart], 2, 0).is_ok());
        let other_memory = Step { reads: bytes(2, 0, 64), ..b.clone() };
        assert!(schedule(&[a.clone(), other_memory], 2, 0).is_ok());
        let ordered = [Step { signals: vec![(0, 1)], ..a.clone() }, Step { waits: vec![(0, 1)], ..b.clone() }];
        assert!(schedule(&ordered, 2, 1).is_ok());
        let crossed = [
            Step { waits: vec![(0, 1)], signals: vec![(1, 1)], ..step(0, 1) },
            Step { waits: vec![(1, 1)], signals: vec![(0, 1)], ..step(1, 1) },
        ];
        assert_eq!(schedule(&crossed, 2, 2), Err(ScheduleError::Deadlock(vec![(0, 0, 1, 0), (1, 1, 1, 0)])));
    }

    #[test]
    fn signals_must_increase_and_names_must_exist() {
        let steps = [Step { signals: vec![(0, 2)], ..step(0, 1) }, Step { signals: vec![(0, 2)], ..step(0, 1) }];
        assert_eq!(schedule(&steps, 1, 1), Err(ScheduleError::NotIncreasing(1, 0, 2, 2)));
        assert_eq!(schedule(&[step(3, 1)], 2, 0), Err(ScheduleError::Malformed(0)));
    }

    #[test]
    fn reads_of_one_buffer_from_many_queues_do_not_race() {
        let steps: Vec<Step> = (0..4).map(|q| Step { reads: bytes(1, 0, 64), ..step(q, 5) }).collect();
        assert_eq!(schedule(&steps, 4, 0).unwrap().makespan, 5);
    }
}
