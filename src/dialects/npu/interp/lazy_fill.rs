//! Memsets of data memory carried out lazily, and the DMA that lands inside one. A lowered convolution zeroes each
//! slice's window box, then one DMA writes the input's rows into it (not one run: the box's rows are longer than
//! the input's, their ends stay zero); a matmul then reads the box at every tap's offset. Copying all of that
//! into every slice's data memory costs more than the convolution itself, and the slices of a block of pixels hold
//! the same box. So a memset of one run records a *fill* (the run holds its value), and a DMA out of HBM whose
//! destination lies inside a fill that nothing else wrote becomes its *overlay* (the fill's bytes but for the
//! packets the DMA wrote, which are the ones it read in HBM, as they are now).
//!
//! A fill is carried out (its value written, then its overlay copied) like a forward: when anything else touches
//! it, when its overlay's HBM buffer is written, or at the end of the run. Only a matmul reading its `A` inside a
//! fill reads it as it is (`shared_a`): fills of equal value and overlay hold equal bytes, so the slices reading
//! them share one copy. Every instruction sees the bytes an eager run would have left.

use super::run_index::{Run, RunIndex};
use super::state::{contiguous_start, Memories};
use crate::dialects::npu::access::AccessPattern;
use crate::dialects::npu::dma::Dma;
use crate::dialects::npu::ops::instruction::Site;
use crate::dialects::npu::ops::memset::Memset;
use crate::dialects::npu::ops::onchip::Space;
use foldhash::{HashMap, HashMapExt, HashSet};

/// A memset not carried out yet: `len` bytes from its first one hold `element` repeated, but for those `over`
/// wrote.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Fill {
    /// How many bytes it covers.
    pub len: usize,
    /// The value's bytes.
    pub element: Vec<u8>,
    /// The DMA that wrote into it since.
    pub over: Option<Overlay>,
}

/// A DMA out of HBM into a fill: the packets `dst` writes are those `pattern` reads in HBM buffer `src`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Overlay {
    /// The kernel argument whose buffer it reads.
    pub src: u32,
    /// What it reads there.
    pub pattern: AccessPattern,
    /// Where it writes, in the fill's memory.
    pub dst: AccessPattern,
}

impl Fill {
    /// Its bytes, from its first one: the value, then the overlay's packets.
    pub fn bytes(&self, at: usize, hbm: &[super::memory::Bytes]) -> Vec<u8> {
        let mut out = self.element.repeat(self.len / self.element.len().max(1));
        out.extend_from_slice(&self.element[..self.len - out.len()]);
        if let Some(o) = &self.over {
            let (from, packet) = (&hbm[o.src as usize], o.pattern.packet as usize);
            for (s, d) in o.pattern.offsets().zip(o.dst.offsets()) {
                let (s, d) = ((o.pattern.base as i128 + s) as usize, (o.dst.base as i128 + d) as usize - at);
                out[d..d + packet].copy_from_slice(from.read(s, packet).expect("checked written when overlaid"));
            }
        }
        out
    }
}

/// The fills alive, by memory and first byte, and the overlaid ones by the HBM buffer they read ([`RunIndex`]).
pub type Fills = RunIndex<Fill>;

impl Run for Fill {
    fn bytes(&self) -> usize {
        self.len
    }
    fn source(&self) -> Option<u32> {
        self.over.as_ref().map(|o| o.src)
    }
}

impl Fills {
    /// The first byte of the fill of `site` holding bytes `[low, high)`.
    pub fn holding(&self, site: Site, low: usize, high: usize) -> Option<usize> {
        let (at, f) = self.last_from(site, low)?;
        (at + f.len >= high).then_some(at)
    }
}

impl Memories {
    /// Records memset `m` as fills when it writes one run of data memory (after [`Memories::settle`] for its
    /// accesses); whether it did.
    pub fn fill_lazily(&mut self, m: &Memset) -> bool {
        let (Some(at), Some(len)) = (contiguous_start(&m.dst.pattern), m.dst.pattern.bytes()) else { return false };
        if m.dst.space != Space::Dm || len == 0 {
            return false;
        }
        let element = m.element();
        for slice in m.slices.first..m.slices.end {
            let fill = Fill { len: len as usize, element: element.clone(), over: None };
            self.fills.insert(m.slices.site(Space::Dm, slice), at, fill);
        }
        true
    }

    /// Per DMA command of one step, the fill it would overlay: one with no overlay yet holding all its destination
    /// (not one run: a run becomes a forward), which no other command of the step writes.
    pub fn overlay_targets(&self, parts: &[Dma]) -> Vec<Option<(Site, usize)>> {
        if self.fills.is_empty() {
            return vec![None; parts.len()];
        }
        let mut writers: HashMap<(Site, usize), usize> = HashMap::new();
        let targets: Vec<Option<(Site, usize)>> = parts
            .iter()
            .map(|d| {
                let site = Site::of(&d.dst.memory);
                let (low, high) = d.dst.pattern.range()?;
                for at in self.fills.meeting(site, low, high) {
                    *writers.entry((site, at)).or_default() += 1;
                }
                let hbm = matches!(Site::of(&d.src.memory), Site::Hbm(_));
                if !hbm || contiguous_start(&d.dst.pattern).is_some() {
                    return None;
                }
                let at = self.fills.holding(site, low as usize, high as usize)?;
                self.fills.get(site, at).filter(|f| f.over.is_none()).map(|_| (site, at))
            })
            .collect();
        targets.into_iter().map(|t| t.filter(|key| writers[key] == 1)).collect()
    }

    /// Makes `dma` the overlay of the fill at `key` ([`Memories::overlay_targets`]); its source bytes must all have
    /// been written, as for a copy (else the first one nothing wrote).
    pub fn overlay(&mut self, dma: &Dma, (site, at): (Site, usize)) -> Result<(), usize> {
        let Site::Hbm(src) = Site::of(&dma.src.memory) else { unreachable!("an overlay reads HBM") };
        let (from, pattern) = (&self.hbm[src as usize], &dma.src.pattern);
        if !from.all_written() {
            for offset in pattern.offsets() {
                from.read((pattern.base as i128 + offset) as usize, pattern.packet as usize)?;
            }
        }
        let mut fill = self.fills.remove(site, at);
        fill.over = Some(Overlay { src, pattern: pattern.clone(), dst: dma.dst.pattern.clone() });
        self.fills.insert(site, at, fill);
        Ok(())
    }

    /// Makes the fills a write of `[low, high)` of `site` meets safe to write over: those in `keep` stay, those
    /// the write covers as one run (`run`) and the instruction does not read (`reads`: its byte ranges read in
    /// `site`) are dropped, and the others carried out.
    pub(super) fn settle_fills_written(
        &mut self,
        site: Site,
        (low, high): (i128, i128),
        run: bool,
        reads: Option<&[(i128, i128)]>,
        keep: &HashSet<(Site, usize)>,
    ) {
        for at in self.fills.meeting(site, low, high) {
            if keep.contains(&(site, at)) {
                continue;
            }
            let (fl, fh) = (at as i128, (at + self.fills.get(site, at).expect("a fill").len) as i128);
            let read = reads.is_some_and(|rs| rs.iter().any(|&(l, h)| l < fh && fl < h));
            match run && !read && low <= fl && fh <= high {
                true => drop(self.fills.remove(site, at)),
                false => self.carry_out_fill(site, at),
            }
        }
    }

    /// Carries out the fills meeting bytes `[low, high)` of `site` but those in `keep`.
    pub(super) fn settle_fills_read(&mut self, site: Site, (low, high): (i128, i128), keep: &HashSet<(Site, usize)>) {
        for at in self.fills.meeting(site, low, high) {
            if !keep.contains(&(site, at)) {
                self.carry_out_fill(site, at);
            }
        }
    }

    /// Carries out the fills whose overlay reads HBM buffer `buffer` (before something writes it).
    pub(super) fn carry_out_fills_from(&mut self, buffer: u32) {
        let found = self.fills.reading(buffer);
        for (site, at) in found {
            self.carry_out_fill(site, at);
        }
    }

    /// Writes the fill at byte `at` of `site` into place and forgets it.
    fn carry_out_fill(&mut self, site: Site, at: usize) {
        let fill = self.fills.remove(site, at);
        let bytes = fill.bytes(at, &self.hbm);
        self.get(site).write(at, &bytes);
    }
}
