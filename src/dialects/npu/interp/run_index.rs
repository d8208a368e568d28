//! Where the interpreter's lazy writes lie: runs of bytes of a memory not written yet (a DMA's forward, a
//! memset's fill), by memory and first byte, and by the HBM buffer each reads (so that a write to a buffer finds
//! its own without scanning the others). Runs of one memory never overlap.

use crate::dialects::npu::ops::instruction::Site;
use foldhash::HashMap;
use std::collections::{BTreeMap, BTreeSet};

/// A lazy write: how many bytes it covers and the HBM buffer it reads, if any.
pub trait Run {
    /// How many bytes it covers.
    fn bytes(&self) -> usize;
    /// The kernel argument whose HBM buffer it reads.
    fn source(&self) -> Option<u32>;
}

/// The runs alive.
#[derive(Debug)]
pub struct RunIndex<T> {
    at: HashMap<Site, BTreeMap<usize, T>>,
    from: HashMap<u32, BTreeSet<(Site, usize)>>,
    live: usize,
}

impl<T> Default for RunIndex<T> {
    fn default() -> Self {
        RunIndex { at: HashMap::default(), from: HashMap::default(), live: 0 }
    }
}

impl<T: Run> RunIndex<T> {
    /// Whether none is alive.
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// The run starting at byte `at` of `site`.
    pub fn get(&self, site: Site, at: usize) -> Option<&T> {
        self.at.get(&site)?.get(&at)
    }

    /// The last run of `site` starting at or before byte `at`, and its first byte.
    pub fn last_from(&self, site: Site, at: usize) -> Option<(usize, &T)> {
        self.at.get(&site)?.range(..=at).next_back().map(|(&first, run)| (first, run))
    }

    /// The first bytes of the runs of `site` that meet bytes `[low, high)`: only the last one starting below `low`
    /// can reach into the range.
    pub fn meeting(&self, site: Site, low: i128, high: i128) -> Vec<usize> {
        let Some(map) = self.at.get(&site) else { return vec![] };
        let (low, high) = (low.max(0) as usize, high.max(0) as usize);
        let below = map.range(..low).next_back().filter(|&(&at, r)| at + r.bytes() > low).map(|(&at, _)| at);
        below.into_iter().chain(map.range(low..high).map(|(&at, _)| at)).collect()
    }

    /// The first bytes of the runs of `site`, in order.
    pub fn firsts(&self, site: Site) -> Vec<usize> {
        self.at.get(&site).map_or(vec![], |map| map.keys().copied().collect())
    }

    /// The memories holding runs.
    pub fn sites(&self) -> impl Iterator<Item = Site> + '_ {
        self.at.keys().copied()
    }

    /// Records `run` from byte `at` of `site` (where no other lies).
    pub fn insert(&mut self, site: Site, at: usize, run: T) {
        if let Some(src) = run.source() {
            self.from.entry(src).or_default().insert((site, at));
        }
        self.at.entry(site).or_default().insert(at, run);
        self.live += 1;
    }

    /// Forgets the run at byte `at` of `site`, which lives.
    pub fn remove(&mut self, site: Site, at: usize) -> T {
        let run = self.at.get_mut(&site).and_then(|m| m.remove(&at)).expect("a run");
        if let Some(set) = run.source().and_then(|src| self.from.get_mut(&src)) {
            set.remove(&(site, at));
        }
        self.live -= 1;
        run
    }

    /// The runs reading HBM buffer `buffer` (by memory and first byte), no longer indexed by it: the caller carries
    /// them out.
    pub fn reading(&mut self, buffer: u32) -> Vec<(Site, usize)> {
        self.from.remove(&buffer).into_iter().flatten().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct R(usize, Option<u32>);

    impl Run for R {
        fn bytes(&self) -> usize {
            self.0
        }
        fn source(&self) -> Option<u32> {
            self.1
        }
    }

    #[test]
    fn finds_runs_by_place_and_by_source() {
        let (site, mut index) = (Site::Hbm(7), RunIndex::default());
        index.insert(site, 0, R(8, Some(1)));
        index.insert(site, 16, R(8, None));
        assert_eq!(index.meeting(site, 4, 20), vec![0, 16]);
        assert_eq!(index.meeting(site, 8, 16), Vec::<usize>::new());
        assert_eq!(index.last_from(site, 12).map(|(at, _)| at), Some(0));
        assert_eq!(index.reading(1), vec![(site, 0)]);
        assert_eq!(index.remove(site, 0).0, 8);
        assert_eq!(index.firsts(site), vec![16]);
        index.remove(site, 16);
        assert!(index.is_empty());
    }
}
