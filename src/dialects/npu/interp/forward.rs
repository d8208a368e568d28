//! DMAs out of HBM carried out lazily (copy elision). A DMA that reads an HBM buffer and writes one run of bytes
//! records a *forward* instead of copying: its destination bytes are, by definition, the bytes its source pattern
//! reads, as they are now. The copy waits until something needs the bytes where they are:
//!
//! - a stream, a matmul or a vector function that reads the run whole reads through to HBM (the matmul's `A` tile
//!   in place, with its row stride, so a tile a DMA brought in is never copied at all);
//! - an instruction that overwrites the run whole (and does not read it) drops it; one that overwrites one run of
//!   bytes of it leaves the rest forwards (where they are whole packets of a pattern of one loop, else copies them);
//! - anything else that touches it and a write to the HBM it reads carry it out first, and so does the end of
//!   the run when it is in HBM.
//!
//! A forward's source cannot change while it lives and its destination is read only through it, so every
//! instruction sees the bytes an eager copy would have left: the results are the same, byte for byte.

use super::execute::copy_pattern;
use super::memory::Bytes;
use super::run_index::{Run, RunIndex};
use super::state::{contiguous_start, gather, scatter, Memories};
use crate::dialects::npu::access::AccessPattern;
use crate::dialects::npu::dma::Dma;
use crate::dialects::npu::ops::instruction::{Access, Site};
use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};

/// A DMA not carried out yet: `len` bytes from `at` of its destination are the bytes `pattern` reads from HBM buffer
/// `src`.
#[derive(Clone, Debug)]
pub struct Forward {
    /// The kernel argument whose buffer it reads.
    pub src: u32,
    /// What it reads there.
    pub pattern: AccessPattern,
    /// Where its bytes start in the destination.
    pub at: usize,
    /// How many there are.
    pub len: usize,
}

impl Forward {
    /// Where its source lies when it reads one run per packet at one stride (its pattern coalesced): the first byte,
    /// the packet's bytes and the stride (the packet, when there is one run).
    pub fn runs(&self) -> Option<(usize, usize, usize)> {
        let p = self.pattern.coalesced();
        let packet = p.packet as usize;
        let stride = match p.loops.iter().filter(|l| l.count > 1).collect::<Vec<_>>()[..] {
            [] => packet,
            [l] => usize::try_from(l.stride).ok()?,
            _ => return None,
        };
        Some((p.base as usize, packet, stride))
    }

    /// The forward of destination bytes `[lo, hi)` alone (inside this one's), when they are whole packets of its
    /// [`Forward::runs`], or any bytes of one run.
    fn part(&self, lo: usize, hi: usize) -> Option<Forward> {
        let (base, packet, stride) = self.runs()?;
        let (skip, len) = (lo - self.at, hi - lo);
        let pattern = if packet == self.len {
            AccessPattern::new((base + skip) as u64, &[], len as u32)
        } else if skip.is_multiple_of(packet) && len.is_multiple_of(packet) {
            let first = base + skip / packet * stride;
            AccessPattern::new(first as u64, &[((len / packet) as u32, stride as i64)], packet as u32)
        } else {
            return None;
        };
        Some(Forward { src: self.src, pattern, at: lo, len })
    }
}

/// The forwards alive, by destination memory and first byte, and by the HBM buffer they read ([`RunIndex`]).
pub type Forwards = RunIndex<Forward>;

impl Run for Forward {
    fn bytes(&self) -> usize {
        self.len
    }
    fn source(&self) -> Option<u32> {
        Some(self.src)
    }
}

impl Forwards {
    /// The forward whose destination is exactly bytes `[at, at + len)` of `site`.
    pub fn exact(&self, site: Site, at: usize, len: usize) -> Option<&Forward> {
        self.get(site, at).filter(|f| f.len == len)
    }

    /// The forward whose destination holds bytes `[at, at + len)` of `site`.
    pub fn holding(&self, site: Site, at: usize, len: usize) -> Option<&Forward> {
        let (_, f) = self.last_from(site, at)?;
        (f.at + f.len >= at + len).then_some(f)
    }

    /// Whether a forward into `site` meets bytes `[low, high)`.
    pub fn meets(&self, site: Site, low: usize, high: usize) -> bool {
        !self.meeting(site, low as i128, high as i128).is_empty()
    }
}

/// What an instruction can read through: the HBM buffers and the forwards into its memories.
#[derive(Clone, Copy)]
pub struct Through<'a> {
    /// The HBM buffers, by kernel argument.
    pub hbm: &'a [Bytes],
    /// The forwards alive.
    pub forwards: &'a Forwards,
}

impl<'a> Through<'a> {
    /// The bytes `pattern` reads from `site` when they are one forward's, whole, read from HBM.
    pub fn read(&self, site: Site, pattern: &AccessPattern) -> Option<Vec<u8>> {
        let f = self.forwards.exact(site, contiguous_start(pattern)?, pattern.bytes()? as usize)?;
        Some(gather(&self.hbm[f.src as usize], &f.pattern).expect("checked written when forwarded"))
    }

    /// Copies the bytes `pattern` reads from `site` to `dp`'s packets in `to`, from HBM, when they are one forward's
    /// whole; whether they were.
    pub fn copy(&self, site: Site, pattern: &AccessPattern, to: &mut Bytes, dp: &AccessPattern) -> bool {
        let Some(f) = contiguous_start(pattern).and_then(|at| self.forwards.exact(site, at, pattern.bytes()? as usize))
        else {
            return false;
        };
        let from = &self.hbm[f.src as usize];
        if f.pattern.packet == dp.packet && f.pattern.packets() == dp.packets() {
            copy_pattern(from, &f.pattern, to, dp).expect("checked written when forwarded");
        } else {
            scatter(to, dp, &gather(from, &f.pattern).expect("checked written when forwarded"));
        }
        true
    }

    /// `rows` rows of `row` bytes that `pattern` reads from `site` as they lie in HBM, when they are one forward's
    /// whole and it reads one row per packet at a fixed stride: the bytes from the first row on and the stride.
    pub fn rows(&self, site: Site, pattern: &AccessPattern, rows: usize, row: usize) -> Option<(&'a [u8], usize)> {
        let (buffer, first, stride) = self.rows_at(site, pattern, rows, row)?;
        Some((self.hbm[buffer as usize].unchecked_from(first), stride))
    }

    /// Where [`Through::rows`] finds its rows: the HBM buffer, the first row's byte and the stride.
    pub fn rows_at(&self, site: Site, pattern: &AccessPattern, rows: usize, row: usize) -> Option<(u32, usize, usize)> {
        let f = self.forwards.exact(site, contiguous_start(pattern)?, rows * row)?;
        let (base, packet, stride) = f.runs()?;
        if packet == rows * row {
            Some((f.src, base, row))
        } else {
            (packet == row && stride >= row).then_some((f.src, base, stride))
        }
    }
}

impl Memories {
    /// Makes an instruction's `accesses` safe to carry out on the bytes where they are. A write carries out the
    /// forwards and fills ([`super::lazy_fill`]) out of the HBM buffer it writes, and drops those it overwrites
    /// whole (when the instruction does not read them) or carries them out; a read carries out the forwards and
    /// fills it meets, except a forward it reads whole when `through` (the instruction reads such runs through to
    /// HBM).
    pub fn settle(&mut self, accesses: &[Access], through: bool) {
        self.settle_keeping(accesses, through, &HashSet::new());
    }

    /// [`Memories::settle`], but the fills in `keep` (by memory and first byte) stay: a DMA overlays them, or a
    /// matmul reads its `A` in them.
    pub fn settle_keeping(&mut self, accesses: &[Access], through: bool, keep: &HashSet<(Site, usize)>) {
        if self.forwards.is_empty() && self.fills.is_empty() {
            return;
        }
        // The byte ranges the instruction reads, by memory, gathered when a write first meets a forward or a fill:
        // one it both reads and overwrites is carried out, not dropped.
        let mut reads: Option<HashMap<Site, Vec<(i128, i128)>>> = None;
        for w in accesses.iter().filter(|a| a.write) {
            if let Site::Hbm(buffer) = w.site {
                self.carry_out_from(buffer);
                self.carry_out_fills_from(buffer);
            }
            let Some((low, high)) = w.pattern.range() else { continue };
            let whole = contiguous_start(&w.pattern).map(|at| (at, at + w.pattern.bytes().unwrap_or(0) as usize));
            for at in self.forwards.meeting(w.site, low, high) {
                let f = self.forwards.get(w.site, at).expect("a forward");
                let (fl, fh) = (f.at as i128, (f.at + f.len) as i128);
                let reads = reads.get_or_insert_with(|| read_ranges(accesses));
                let read = reads.get(&w.site).is_some_and(|rs| rs.iter().any(|&(l, h)| l < fh && fl < h));
                // What a run written whole overwrites need not be copied first: the forward keeps only the rest.
                match whole.filter(|_| !read) {
                    Some(overwritten) => self.split_around(w.site, at, overwritten),
                    None => self.carry_out(w.site, at),
                }
            }
            if !self.fills.meeting(w.site, low, high).is_empty() {
                let reads = reads.get_or_insert_with(|| read_ranges(accesses)).get(&w.site).cloned();
                self.settle_fills_written(w.site, (low, high), whole.is_some(), reads.as_deref(), keep);
            }
        }
        for r in accesses.iter().filter(|a| !a.write) {
            let Some((low, high)) = r.pattern.range() else { continue };
            self.settle_fills_read(r.site, (low, high), keep);
            let whole = contiguous_start(&r.pattern).zip(r.pattern.bytes());
            if through && whole.is_some_and(|(at, len)| self.forwards.exact(r.site, at, len as usize).is_some()) {
                continue;
            }
            for at in self.forwards.meeting(r.site, low, high) {
                self.carry_out(r.site, at);
            }
        }
    }

    /// Makes the runs `reads` (a matmul's `B` read in place, [`super::trf_forward`]) safe to read: a run one forward
    /// holds stays a forward (the matmul reads it in HBM); forwards meeting any other are carried out.
    pub fn settle_held(&mut self, reads: &[Access]) {
        for r in reads {
            let Some((low, high)) = r.pattern.range() else { continue };
            self.settle_fills_read(r.site, (low, high), &HashSet::new());
            if self.forwards.holding(r.site, low as usize, (high - low) as usize).is_some() {
                continue;
            }
            for at in self.forwards.meeting(r.site, low, high) {
                self.carry_out(r.site, at);
            }
        }
    }

    /// Records `dma` as a forward when it reads an HBM buffer and writes one run of another memory (after
    /// [`Memories::settle`] for its accesses); whether it did. Its source bytes must all have been written, as for a
    /// copy.
    pub fn forward(&mut self, dma: &Dma) -> Result<bool, usize> {
        let (src, dst) = (Site::of(&dma.src.memory), Site::of(&dma.dst.memory));
        let (Site::Hbm(buffer), Some(at), Some(len)) =
            (src, contiguous_start(&dma.dst.pattern), dma.dst.pattern.bytes())
        else {
            return Ok(false);
        };
        if src == dst {
            return Ok(false);
        }
        let pattern = &dma.src.pattern;
        let from = &self.hbm[buffer as usize];
        if !from.all_written() {
            for offset in pattern.offsets() {
                from.read((pattern.base as i128 + offset) as usize, pattern.packet as usize)?;
            }
        }
        // The destination's written bits stay as they are: its bytes are read only through the forward until it is
        // carried out (which writes and marks them) or overwritten whole.
        self.insert_forward(dst, Forward { src: buffer, pattern: pattern.clone(), at, len: len as usize });
        Ok(true)
    }

    fn insert_forward(&mut self, site: Site, f: Forward) {
        self.forwards.insert(site, f.at, f);
    }

    /// The forward at byte `at` of `site` without its bytes in `[low, high)` (about to be overwritten): the bytes
    /// below and above stay forwards where they are whole packets of a pattern of one loop (a box's rows, say: the
    /// next chunk's box written over part of the last one's leaves the rest unread, usually for good), and are
    /// copied into place otherwise.
    fn split_around(&mut self, site: Site, at: usize, (low, high): (usize, usize)) {
        let f = self.forwards.get(site, at).expect("a forward");
        let (below, above) = ((f.at, low.min(f.at + f.len)), (high.max(f.at), f.at + f.len));
        let parts: Option<Vec<Forward>> =
            [below, above].into_iter().filter(|(lo, hi)| lo < hi).map(|(lo, hi)| f.part(lo, hi)).collect();
        match parts {
            Some(parts) => {
                self.drop_forward(site, at);
                parts.into_iter().for_each(|p| self.insert_forward(site, p));
            }
            None => self.carry_out_except(site, at, (low, high)),
        }
    }

    /// Carries out the forwards left into HBM buffers, before they are read back (on-chip memories are not: nothing
    /// reads them after the run).
    pub fn carry_out_into_hbm(&mut self) {
        let sites: Vec<Site> = self.forwards.sites().filter(|s| matches!(s, Site::Hbm(_))).collect();
        for site in sites {
            for at in self.forwards.firsts(site) {
                self.carry_out(site, at);
            }
        }
    }

    /// Carries out the forwards that read HBM buffer `buffer` (before something writes it).
    fn carry_out_from(&mut self, buffer: u32) {
        for (site, at) in self.forwards.reading(buffer) {
            self.carry_out(site, at);
        }
    }

    /// Copies the forward at byte `at` of `site` into place and forgets it.
    fn carry_out(&mut self, site: Site, at: usize) {
        self.carry_out_except(site, at, (0, 0));
    }

    /// Copies the forward at byte `at` of `site` into place but for its bytes in `[low, high)` (which are about
    /// to be overwritten), and forgets it.
    fn carry_out_except(&mut self, site: Site, at: usize, (low, high): (usize, usize)) {
        let f = self.drop_forward(site, at);
        if low <= f.at && f.at + f.len <= high {
            return;
        }
        let (from, to) = self.pair(Site::Hbm(f.src), site);
        let (base, packet) = (f.pattern.base as i128, f.pattern.packet as usize);
        for (k, offset) in f.pattern.offsets().enumerate() {
            let (d, source) = (f.at + k * packet, (base + offset) as usize);
            // The packet's bytes below the skipped ones, and those above.
            for (lo, hi) in [(d, (d + packet).min(low)), (d.max(high), d + packet)] {
                if lo < hi {
                    to.write(lo, from.read(source + (lo - d), hi - lo).expect("checked written when forwarded"));
                }
            }
        }
    }

    /// Forgets the forward at byte `at` of `site`.
    fn drop_forward(&mut self, site: Site, at: usize) -> Forward {
        self.forwards.remove(site, at)
    }
}

/// The byte ranges `accesses` read, by memory.
fn read_ranges(accesses: &[Access]) -> HashMap<Site, Vec<(i128, i128)>> {
    let mut reads: HashMap<Site, Vec<(i128, i128)>> = HashMap::new();
    for r in accesses.iter().filter(|a| !a.write) {
        reads.entry(r.site).or_default().extend(r.pattern.range());
    }
    reads
}
