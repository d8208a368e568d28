//! The machine's memories while a kernel runs: one byte memory per HBM buffer and one per slice and on-chip space
//! (allocated when first touched, so untouched slices cost nothing), and reading an operand's bytes out of a memory
//! (`gather`, an error on a byte nothing wrote) and writing them back (`scatter`).

use super::deferred::Deferred;
use super::forward::{Forwards, Through};
use super::lazy_fill::Fills;
use super::memory::Bytes;
use super::parallel::min_len;
use super::spare::Spare;
use crate::dialects::npu::access::{AccessPattern, Injectivity};
use crate::dialects::npu::ops::instruction::Site;
use crate::dialects::npu::ops::onchip::{Operand, Slices, Space};
use crate::machine::NpuConfig;
use foldhash::{HashMap, HashMapExt};
use rayon::prelude::*;

/// Every memory of the chip.
pub struct Memories {
    /// The HBM buffers, by kernel argument.
    pub hbm: Vec<Bytes>,
    /// The on-chip memories touched so far.
    pub slices: HashMap<Site, Bytes>,
    /// The bytes of each space per slice, in the order of [`Space::ALL`].
    capacity: [u64; 4],
    /// Memories of the last run, for the on-chip memories touched first.
    spare: Spare,
    /// DMAs not carried out yet.
    pub(super) forwards: Forwards,
    /// Memsets not carried out yet.
    pub(super) fills: Fills,
    /// Grouped matmuls' products not carried out yet.
    pub(super) deferred: Vec<Deferred>,
}

impl Memories {
    /// The memories, HBM bound to `hbm`, nothing on chip written yet; new on-chip memories come from `spare`.
    pub fn new(hbm: Vec<Bytes>, cfg: &NpuConfig, spare: Spare) -> Memories {
        let capacity = Space::ALL.map(|s| s.capacity(cfg));
        Memories {
            hbm,
            slices: HashMap::new(),
            capacity,
            spare,
            forwards: Forwards::default(),
            fills: Fills::default(),
            deferred: Vec::new(),
        }
    }

    /// Every memory of this run, kept for the next (what is left of the last run's is let go).
    pub fn into_spare(self) -> Spare {
        let mut spare = Spare::default();
        let hbm = self.hbm.into_iter().enumerate().map(|(i, b)| (Site::Hbm(i as u32), b));
        hbm.chain(self.slices).for_each(|(site, b)| spare.keep(site, b));
        spare
    }

    /// The memory at `site`.
    pub fn get(&mut self, site: Site) -> &mut Bytes {
        match site {
            Site::Hbm(region) => &mut self.hbm[region as usize],
            Site::Slice(space, ..) => {
                let size = self.capacity[space.index()] as usize;
                self.slices.entry(site).or_insert_with(|| self.spare.take(site, size))
            }
        }
    }

    /// The memory at `site` (allocated if new), moved out (an empty one left in its place) until [`Memories::put`]
    /// gives it back.
    pub fn take(&mut self, site: Site) -> Bytes {
        self.get(site);
        match site {
            Site::Hbm(region) => std::mem::replace(&mut self.hbm[region as usize], Bytes::empty(0)),
            Site::Slice(..) => self.slices.remove(&site).expect("allocated"),
        }
    }

    /// Gives back a memory [`Memories::take`] moved out.
    pub fn put(&mut self, site: Site, bytes: Bytes) {
        match site {
            Site::Hbm(region) => self.hbm[region as usize] = bytes,
            Site::Slice(..) => {
                self.slices.insert(site, bytes);
            }
        }
    }

    /// The memory at `site`, which exists.
    pub fn peek(&self, site: Site) -> &Bytes {
        match site {
            Site::Hbm(region) => &self.hbm[region as usize],
            Site::Slice(..) => &self.slices[&site],
        }
    }

    /// Two different memories at once (`a != b`).
    pub fn pair(&mut self, a: Site, b: Site) -> (&mut Bytes, &mut Bytes) {
        for site in [a, b] {
            self.get(site);
        }
        match (a, b) {
            (Site::Hbm(x), Site::Hbm(y)) => {
                let [p, q] = self.hbm.get_disjoint_mut([x as usize, y as usize]).expect("different buffers");
                (p, q)
            }
            (Site::Hbm(x), b) => (&mut self.hbm[x as usize], self.slices.get_mut(&b).expect("allocated")),
            (a, Site::Hbm(y)) => (self.slices.get_mut(&a).expect("allocated"), &mut self.hbm[y as usize]),
            (a, b) => {
                let [p, q] = self.slices.get_disjoint_mut([&a, &b]);
                (p.expect("allocated"), q.expect("allocated"))
            }
        }
    }
}

/// One slice's memories, taken out of [`Memories`] so that the slices of an instruction can run in parallel.
pub struct SliceMemories<'a> {
    /// The slice's number in its cluster.
    pub slice: u64,
    /// Its memories of the spaces the instruction names, in the order of [`Space::ALL`] (`None` for the others).
    pub spaces: [Option<Bytes>; 4],
    /// The instruction's slices.
    pub slices: Slices,
    /// What it reads through to HBM.
    pub through: Through<'a>,
}

impl SliceMemories<'_> {
    /// The memory of `space` of this slice.
    pub fn site(&self, space: Space) -> Site {
        self.slices.site(space, self.slice)
    }

    /// Its memory of `space` (one the instruction names).
    pub fn get(&mut self, space: Space) -> &mut Bytes {
        self.spaces[space.index()].as_mut().expect("a space the instruction names")
    }

    /// Its memories of two different spaces, the first to read and the second to write.
    pub fn two(&mut self, a: Space, b: Space) -> (&Bytes, &mut Bytes) {
        let [x, y] = self.spaces.get_disjoint_mut([a.index(), b.index()]).expect("two spaces");
        (x.as_ref().expect("a space the instruction names"), y.as_mut().expect("a space the instruction names"))
    }

    /// Whether a DMA's forward holds operand `o`'s bytes (it is read through to HBM, not in its memory).
    pub fn held(&self, o: &Operand) -> bool {
        let whole = contiguous_start(&o.pattern).zip(o.pattern.bytes());
        whole.is_some_and(|(at, len)| self.through.forwards.exact(self.site(o.space), at, len as usize).is_some())
    }

    /// Operand `o`'s bytes (read through to HBM when a DMA's forward holds them), or an error naming the first byte
    /// nothing wrote.
    pub fn read(&self, o: &Operand) -> Result<Vec<u8>, String> {
        if let Some(bytes) = self.through.read(self.site(o.space), &o.pattern) {
            return Ok(bytes);
        }
        let bytes = self.spaces[o.space.index()].as_ref().expect("a space the instruction names");
        gather(bytes, &o.pattern).map_err(unwritten(o.space, self.slice))
    }

    /// Operand `o`'s bytes as little-endian 32-bit words ([`SliceMemories::read`]).
    pub fn read_words(&self, o: &Operand) -> Result<Vec<u32>, String> {
        if let Some(bytes) = self.through.read(self.site(o.space), &o.pattern) {
            return Ok(words(&bytes));
        }
        let bytes = self.spaces[o.space.index()].as_ref().expect("a space the instruction names");
        let mut out = vec![0u32; o.pattern.bytes().unwrap_or(0) as usize / 4];
        gather_into(bytes, &o.pattern, bytemuck::cast_slice_mut(&mut out)).map_err(unwritten(o.space, self.slice))?;
        out.iter_mut().for_each(|w| *w = u32::from_le(*w));
        Ok(out)
    }

    /// Writes `data` at operand `o`'s bytes.
    pub fn write(&mut self, o: &Operand, data: &[u8]) {
        scatter(self.get(o.space), &o.pattern, data);
    }
}

/// The error for a read of a byte nothing wrote, in `space` of `slice`.
pub fn unwritten(space: Space, slice: u64) -> impl Fn(usize) -> String {
    move |at| format!("reads byte {at} of {} slice {slice}, which nothing wrote", space.name())
}

impl Memories {
    /// Runs `f` on each slice of `slices`, each on its own memories of the spaces `used` (allocated if new), in
    /// parallel when their `work` (each slice's bytes moved or multiply-adds) is worth it ([`min_len`]); the error
    /// of the first slice that fails.
    pub fn per_slice(
        &mut self,
        slices: &Slices,
        (used, work): (&[Space], u64),
        f: impl Fn(&mut SliceMemories) -> Result<(), String> + Sync,
    ) -> Result<(), String> {
        let all: Vec<u64> = (slices.first..slices.end).collect();
        self.per_slice_of(slices, &all, (used, work), f)
    }

    /// [`Memories::per_slice`] on the slices `which` names of the instruction's `slices` (in order).
    pub fn per_slice_of(
        &mut self,
        slices: &Slices,
        which: &[u64],
        (used, work): (&[Space], u64),
        f: impl Fn(&mut SliceMemories) -> Result<(), String> + Sync,
    ) -> Result<(), String> {
        let spaces: Vec<[Option<Bytes>; 4]> = which
            .iter()
            .map(|&slice| {
                Space::ALL.map(|space| {
                    let site = slices.site(space, slice);
                    used.contains(&space).then(|| self.take(site))
                })
            })
            .collect();
        let through = Through { hbm: &self.hbm, forwards: &self.forwards };
        let mut taken: Vec<SliceMemories> = which
            .iter()
            .copied()
            .zip(spaces)
            .map(|(slice, spaces)| SliceMemories { slice, spaces, slices: *slices, through })
            .collect();
        let jobs = min_len(taken.len(), work.saturating_mul(taken.len() as u64));
        let results: Vec<Result<(), String>> = taken.par_iter_mut().with_min_len(jobs).map(&f).collect();
        for one in taken {
            for (space, bytes) in Space::ALL.into_iter().zip(one.spaces) {
                if let Some(bytes) = bytes {
                    self.slices.insert(slices.site(space, one.slice), bytes);
                }
            }
        }
        results.into_iter().collect()
    }
}

/// The bytes `pattern` reads from `bytes`, in order, or the first byte nothing wrote (the caller checked bounds).
pub fn gather(bytes: &Bytes, pattern: &AccessPattern) -> Result<Vec<u8>, usize> {
    let mut out = vec![0u8; pattern.bytes().unwrap_or(0) as usize];
    gather_into(bytes, pattern, &mut out)?;
    Ok(out)
}

/// [`gather`] into `out`, which holds exactly the pattern's bytes (an `f32` buffer seen as bytes, say).
pub fn gather_into(bytes: &Bytes, pattern: &AccessPattern, out: &mut [u8]) -> Result<(), usize> {
    let pattern = pattern.coalesced();
    let packet = pattern.packet as usize;
    if let Some(start) = contiguous_start(&pattern) {
        out.copy_from_slice(bytes.read(start, out.len())?);
        return Ok(());
    }
    // Packets of a box written whole (the usual case) are read without checking each one: element-sized packets
    // (a transposition) cost a move each.
    let range = pattern.range().filter(|&(low, high)| bytes.written_between(low as usize, high as usize));
    if let Some((_, high)) = range {
        let data = &bytes.unchecked_from(0)[..high as usize];
        // Element-sized packets at element-aligned addresses move as words (one load and store each).
        let done = match packet {
            4 => copy_words::<u32>(&pattern, data, out),
            8 => copy_words::<u64>(&pattern, data, out),
            _ => false,
        };
        if !done {
            for_each_pair(&pattern, |from, to| out[to..to + packet].copy_from_slice(&data[from..from + packet]));
        }
        return Ok(());
    }
    for (offset, chunk) in pattern.offsets().zip(out.chunks_exact_mut(packet.max(1))) {
        chunk.copy_from_slice(bytes.read((pattern.base as i128 + offset) as usize, packet)?);
    }
    Ok(())
}

/// [`gather_into`]'s copy of packets of one `W` each, when the base, the strides and both buffers are aligned to
/// `W`; whether they were.
fn copy_words<W: bytemuck::Pod>(pattern: &AccessPattern, data: &[u8], out: &mut [u8]) -> bool {
    let size = std::mem::size_of::<W>();
    let aligned =
        (pattern.base as usize).is_multiple_of(size) && pattern.loops.iter().all(|l| l.stride % size as i64 == 0);
    let whole = &data[..data.len() / size * size];
    let (Ok(from), Ok(to)) = (bytemuck::try_cast_slice::<u8, W>(whole), bytemuck::try_cast_slice_mut::<u8, W>(out))
    else {
        return false;
    };
    if aligned {
        for_each_pair(pattern, |at, place| to[place / size] = from[at / size]);
    }
    aligned
}

/// Calls `f` with the address of each of `pattern`'s packets (inside its bounds, which the caller checked) and the
/// packet's place in pattern order (its index times the packet size), in address order (the loops by decreasing
/// stride): reading a transposition down its columns would touch a cache line per element.
fn for_each_pair(pattern: &AccessPattern, mut f: impl FnMut(usize, usize)) {
    if pattern.packets() == Some(0) {
        return;
    }
    // Each loop's count, stride, and stride in pattern order.
    let mut loops: Vec<(u32, i64, usize)> = Vec::with_capacity(pattern.loops.len());
    let mut step = pattern.packet as usize;
    for l in pattern.loops.iter().rev() {
        loops.push((l.count, l.stride, step));
        step *= l.count as usize;
    }
    loops.reverse();
    loops.sort_by_key(|l| std::cmp::Reverse(l.1.unsigned_abs()));
    let Some((&(count, stride, to_stride), outer)) = loops.split_last() else {
        return f(pattern.base as usize, 0);
    };
    let mut index = vec![0u32; outer.len()];
    let (mut from, mut to) = (pattern.base as i64, 0usize);
    loop {
        let (mut at, mut place) = (from, to);
        for _ in 0..count {
            f(at as usize, place);
            at += stride;
            place += to_stride;
        }
        // The odometer over the outer loops: the innermost with iterations left steps, those inside it restart.
        let mut k = outer.len();
        loop {
            if k == 0 {
                return;
            }
            k -= 1;
            let (c, s, t) = outer[k];
            if index[k] + 1 < c {
                index[k] += 1;
                from += s;
                to += t;
                break;
            }
            from -= index[k] as i64 * s;
            to -= index[k] as usize * t;
            index[k] = 0;
        }
    }
}

/// Writes `data` into `bytes` at `pattern`'s packets, in order (the caller checked bounds and length).
pub fn scatter(bytes: &mut Bytes, pattern: &AccessPattern, data: &[u8]) {
    let pattern = &pattern.coalesced();
    if let Some(start) = contiguous_start(pattern) {
        bytes.write(start, data);
        return;
    }
    let packet = (pattern.packet as usize).max(1);
    // Packets that tile their range (a transposed tile, say) are marked written at once, not one by one.
    if let Some((low, high)) = tiled_range(pattern) {
        let to = bytes.write_in_place(low, high - low);
        for (offset, chunk) in pattern.offsets().zip(data.chunks(packet)) {
            let at = (pattern.base as i128 + offset) as usize - low;
            to[at..at + chunk.len()].copy_from_slice(chunk);
        }
        return;
    }
    for (offset, chunk) in pattern.offsets().zip(data.chunks(packet)) {
        bytes.write((pattern.base as i128 + offset) as usize, chunk);
    }
}

/// The byte range `pattern`'s packets cover when they tile it: as many bytes as the range, none twice.
pub(super) fn tiled_range(pattern: &AccessPattern) -> Option<(usize, usize)> {
    let (low, high) = pattern.range()?;
    let dense = pattern.bytes()? as i128 == high - low && pattern.injectivity() == Injectivity::Injective;
    dense.then_some((low as usize, high as usize))
}

/// Where the pattern starts when its packets are one run of adjacent bytes in order (its contiguous run is all of
/// it).
pub fn contiguous_start(pattern: &AccessPattern) -> Option<usize> {
    (pattern.bytes() == Some(pattern.contiguous_run())).then_some(pattern.base as usize)
}

/// Little-endian 32-bit words (copied whole, then swapped on a big-endian host).
pub fn words(bytes: &[u8]) -> Vec<u32> {
    let len = bytes.len() / 4 * 4;
    let mut out = vec![0u32; len / 4];
    bytemuck::cast_slice_mut::<u32, u8>(&mut out).copy_from_slice(&bytes[..len]);
    out.iter_mut().for_each(|w| *w = u32::from_le(*w));
    out
}

/// The little-endian bytes of 32-bit words.
pub fn word_bytes(words: &[u32]) -> Vec<u8> {
    let little: Vec<u32> = words.iter().map(|w| w.to_le()).collect();
    bytemuck::cast_slice(&little).to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gathers_and_scatters_in_pattern_order() {
        let mut m = Bytes::full((0..32).collect());
        let rows = AccessPattern::new(4, &[(3, 8)], 2);
        assert_eq!(gather(&m, &rows).unwrap(), [4, 5, 12, 13, 20, 21]);
        let whole = AccessPattern::new(8, &[(2, 4)], 4);
        assert_eq!(gather(&m, &whole).unwrap(), (8..16).collect::<Vec<u8>>());
        scatter(&mut m, &rows, &[0; 6]);
        assert_eq!(gather(&m, &AccessPattern::new(3, &[], 4)).unwrap(), [3, 0, 0, 6]);
        assert_eq!(gather(&Bytes::empty(32), &rows), Err(4));
    }
}
