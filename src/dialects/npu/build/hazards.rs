//! Which earlier instructions a new one must wait for: the last write of every byte it touches (a read after a
//! write, or a write after a write) and, when it writes, the reads since (a write after a read). Instructions are
//! stamped with their queue and their position on it; a queue runs in order, so for each other queue only the
//! latest such instruction matters, and waiting for it is one timeline-semaphore wait.
//!
//! Bytes are tracked per memory as disjoint ranges (each access by its pattern's bounding range, so a strided
//! access may order more than it must, never less). A write replaces the state of what it covers with one range,
//! so reusing a buffer keeps the map small, and a read merges the neighbouring ranges it leaves in one state; an
//! access costs a logarithm plus the ranges it meets.

use crate::dialects::npu::ops::instruction::{Access, Site};
use std::collections::{BTreeMap, HashMap};

/// Instruction `seq` (from 1) of queue `queue`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Stamp {
    /// The queue (an index the caller chooses).
    pub queue: usize,
    /// The position on it, from 1.
    pub seq: u64,
}

/// What is known of a range of bytes: its last writer (or, after ranges were merged, the latest writer on each
/// queue of those it had) and the latest reader on each queue since.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct State {
    writes: Vec<Stamp>,
    reads: Vec<Stamp>,
}

/// Most ranges tracked per memory: past it, neighbouring ranges merge (their states joined, so an access waits for
/// at least what it must), which keeps every access's cost bounded however an op cuts a memory.
pub const MAX_RANGES_PER_MEMORY: usize = 256;

/// Disjoint byte ranges of one memory, by start: `(end, state)`.
type Ranges = BTreeMap<i128, (i128, State)>;

/// The hazard tracker of one program.
#[derive(Debug, Default)]
pub struct Hazards {
    sites: HashMap<Site, Ranges>,
}

impl Hazards {
    /// The latest instruction of each other queue that `me`, making `accesses`, must wait for (queue, seq); then
    /// records the accesses as `me`'s.
    pub fn order(&mut self, accesses: &[Access], me: Stamp) -> Vec<Stamp> {
        let mut waits: Vec<Stamp> = Vec::new();
        let mut need = |s: Stamp| {
            if s.queue == me.queue {
                return;
            }
            match waits.iter_mut().find(|w| w.queue == s.queue) {
                Some(w) => w.seq = w.seq.max(s.seq),
                None => waits.push(s),
            }
        };
        for a in accesses {
            let Some((low, high)) = a.pattern.range().filter(|(l, h)| l < h) else { continue };
            let Some(ranges) = self.sites.get(&a.site) else { continue };
            for (_, (end, state)) in ranges.range(..high).rev() {
                if *end <= low {
                    break;
                }
                state.writes.iter().copied().for_each(&mut need);
                if a.write {
                    state.reads.iter().copied().for_each(&mut need);
                }
            }
        }
        for a in accesses {
            let Some((low, high)) = a.pattern.range().filter(|(l, h)| l < h) else { continue };
            let ranges = self.sites.entry(a.site).or_default();
            record(ranges, low, high, a.write, me);
        }
        waits.sort_by_key(|w| w.queue);
        waits
    }
}

/// Records an access of `[low, high)` by `me`. Ranges that merely end before `low` never overlap it, so the
/// backwards scan in [`Hazards::order`] stops at the first of them.
fn record(ranges: &mut Ranges, low: i128, high: i128, write: bool, me: Stamp) {
    split_at(ranges, low);
    split_at(ranges, high);
    if write {
        let inside: Vec<i128> = ranges.range(low..high).map(|(&s, _)| s).collect();
        for s in inside {
            ranges.remove(&s);
        }
        ranges.insert(low, (high, State { writes: vec![me], reads: Vec::new() }));
        bound(ranges);
        return;
    }
    let mut gaps = Vec::new();
    let mut cursor = low;
    for (&start, (end, state)) in ranges.range_mut(low..high) {
        if start > cursor {
            gaps.push((cursor, start));
        }
        read_by(state, me);
        cursor = *end;
    }
    if cursor < high {
        gaps.push((cursor, high));
    }
    for (start, end) in gaps {
        let mut state = State::default();
        read_by(&mut state, me);
        ranges.insert(start, (end, state));
    }
    coalesce(ranges, low, high);
    bound(ranges);
}

/// Halves the ranges of a memory past [`MAX_RANGES_PER_MEMORY`], joining each pair (and the gap between them,
/// which no access touched).
fn bound(ranges: &mut Ranges) {
    if ranges.len() <= MAX_RANGES_PER_MEMORY {
        return;
    }
    let all: Vec<(i128, (i128, State))> = std::mem::take(ranges).into_iter().collect();
    for pair in all.chunks(2) {
        let (start, (mut end, mut state)) = pair[0].clone();
        if let Some((_, (e, other))) = pair.get(1) {
            end = *e;
            other.writes.iter().for_each(|&w| latest(&mut state.writes, w));
            other.reads.iter().for_each(|&r| latest(&mut state.reads, r));
        }
        ranges.insert(start, (end, state));
    }
}

/// Keeps in `stamps` the latest stamp of each queue, `s` included.
fn latest(stamps: &mut Vec<Stamp>, s: Stamp) {
    match stamps.iter_mut().find(|t| t.queue == s.queue) {
        Some(t) => t.seq = t.seq.max(s.seq),
        None => stamps.push(s),
    }
}

/// Merges the adjacent ranges of one state from the one holding `low` to the one starting at `high`, so that
/// reads that cut a memory into pieces (strided reads, whose bounding ranges overlap) do not leave it in ever
/// more pieces for every later access to walk.
fn coalesce(ranges: &mut Ranges, low: i128, high: i128) {
    let from = ranges.range(..=low).next_back().map_or(low, |(&s, _)| s);
    let keys: Vec<i128> = ranges.range(from..=high).map(|(&s, _)| s).collect();
    let mut kept = keys[0];
    for &k in &keys[1..] {
        let (end, state) = ranges[&kept].clone();
        if end == k && ranges[&k].1 == state {
            let (next_end, _) = ranges.remove(&k).expect("a range");
            ranges.get_mut(&kept).expect("a range").0 = next_end;
        } else {
            kept = k;
        }
    }
}

fn read_by(state: &mut State, me: Stamp) {
    latest(&mut state.reads, me);
}

/// Splits the range holding `at` (if one starts before it and ends after) in two.
fn split_at(ranges: &mut Ranges, at: i128) {
    let Some((&start, (end, state))) = ranges.range(..at).next_back() else { return };
    if *end <= at || start == at {
        return;
    }
    let (end, state) = (*end, state.clone());
    ranges.insert(start, (at, state.clone()));
    ranges.insert(at, (end, state));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialects::npu::access::AccessPattern;

    fn access(write: bool, low: u64, len: u32) -> Access {
        Access { write, site: Site::Hbm(0), pattern: AccessPattern::new(low, &[], len) }
    }

    fn stamp(queue: usize, seq: u64) -> Stamp {
        Stamp { queue, seq }
    }

    #[test]
    fn orders_reads_after_writes_and_writes_after_reads() {
        let mut h = Hazards::default();
        assert!(h.order(&[access(true, 0, 64)], stamp(0, 1)).is_empty());
        // A read of part of it waits for the write.
        assert_eq!(h.order(&[access(false, 32, 64)], stamp(1, 1)), vec![stamp(0, 1)]);
        // Bytes nobody wrote or read order nothing.
        assert!(h.order(&[access(true, 128, 64)], stamp(2, 1)).is_empty());
        // A write over the read bytes waits for the reader (and the writer).
        assert_eq!(h.order(&[access(true, 0, 200)], stamp(2, 2)), vec![stamp(0, 1), stamp(1, 1)]);
        // After it, only it matters.
        assert_eq!(h.order(&[access(false, 100, 8)], stamp(0, 2)), vec![stamp(2, 2)]);
        // Its own queue is in order already.
        assert!(h.order(&[access(false, 0, 8)], stamp(2, 3)).is_empty());
    }

    #[test]
    fn disjoint_ranges_do_not_order() {
        let mut h = Hazards::default();
        h.order(&[access(true, 0, 64)], stamp(0, 1));
        assert!(h.order(&[access(true, 64, 64)], stamp(1, 1)).is_empty());
        assert!(h.order(&[access(false, 64, 8)], stamp(2, 1)) == vec![stamp(1, 1)]);
        assert_eq!(h.sites[&Site::Hbm(0)].len(), 3);
    }
}
