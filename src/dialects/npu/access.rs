//! The one addressing primitive of `tap-npu v0` (`npu-machine.md` §3): an access pattern is a base address, loops
//! of `(count, stride)` from outer to inner, and a packet size. For each tuple of loop indices (innermost fastest)
//! it touches `packet` contiguous bytes at `base + Σ index·stride`. DMA descriptors, on-chip operands, the verifier
//! (bounds, injective writes), the interpreter (which bytes an instruction reads and writes, for its race detector)
//! and the cost model (packets, alignment) all read this one type. The layout library's address generation
//! produces its loops; the conversion that knows both does the translation.

use std::fmt;

/// Most packets [`AccessPattern::injectivity`] enumerates when the loops do not nest (each stride at least the
/// span of the loops inside it); past it, injectivity is [`Injectivity::Unknown`], which the verifier reports.
pub const MAX_ENUMERATED_PACKETS: u64 = 1 << 20;

/// One loop: how many times, and how far apart in bytes.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Loop {
    /// Iterations (0 makes the pattern empty).
    pub count: u32,
    /// Bytes between iterations (negative walks down, 0 repeats).
    pub stride: i64,
}

/// An access pattern: `packet` bytes at `base + Σ index·stride` for every index tuple of `loops`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AccessPattern {
    /// Byte address of the first packet.
    pub base: u64,
    /// The loops, outer to inner.
    pub loops: Vec<Loop>,
    /// Contiguous bytes per packet.
    pub packet: u32,
}

/// Whether a pattern touches each byte at most once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Injectivity {
    /// No byte is touched twice.
    Injective,
    /// The packets starting at these two offsets from the base overlap (the first is the earlier packet).
    Overlap(i128, i128),
    /// The loops do not nest and there are more than [`MAX_ENUMERATED_PACKETS`] packets to compare.
    Unknown,
}

impl AccessPattern {
    /// A pattern of `loops` `(count, stride)`, outer to inner.
    pub fn new(base: u64, loops: &[(u32, i64)], packet: u32) -> AccessPattern {
        AccessPattern { base, loops: loops.iter().map(|&(count, stride)| Loop { count, stride }).collect(), packet }
    }

    /// The number of packets, `None` past `u64`.
    pub fn packets(&self) -> Option<u64> {
        self.loops.iter().try_fold(1u64, |n, l| n.checked_mul(l.count as u64))
    }

    /// The bytes it moves (`packets × packet`), `None` past `u64`.
    pub fn bytes(&self) -> Option<u64> {
        self.packets()?.checked_mul(self.packet as u64)
    }

    /// The byte range `[low, high)` it touches, exactly (every loop reaches both ends of its range); `None` when it
    /// touches nothing.
    pub fn range(&self) -> Option<(i128, i128)> {
        if self.packet == 0 || self.loops.iter().any(|l| l.count == 0) {
            return None;
        }
        let (mut low, mut high) = (self.base as i128, self.base as i128 + self.packet as i128);
        for l in &self.loops {
            let reach = (l.count as i128 - 1) * l.stride as i128;
            if reach < 0 {
                low += reach;
            } else {
                high += reach;
            }
        }
        Some((low, high))
    }

    /// Whether every byte it touches lies in `[0, size)`.
    pub fn within(&self, size: u64) -> bool {
        self.range().is_none_or(|(low, high)| low >= 0 && high <= size as i128)
    }

    /// The offset of each packet from `base`, in order (innermost loop fastest). Iterative: no recursion on the
    /// number of loops.
    pub fn offsets(&self) -> Offsets<'_> {
        let empty = self.loops.iter().any(|l| l.count == 0);
        Offsets { loops: &self.loops, index: vec![0; self.loops.len()], offset: 0, done: empty }
    }

    /// The first of the base, the packet and the strides that is not a multiple of `align`, named, with its value
    /// (what a write into data memory must avoid).
    pub fn misaligned(&self, align: i64) -> Option<(&'static str, i64)> {
        [("base", self.base as i64), ("packet", self.packet as i64)]
            .into_iter()
            .chain(self.loops.iter().map(|l| ("stride", l.stride)))
            .find(|(_, v)| v % align.max(1) != 0)
    }

    /// The longest run of contiguous bytes the pattern moves at once: the packet, grown by each innermost loop
    /// whose stride equals the run so far (the vISA sequencer's `contiguous_run`).
    pub fn contiguous_run(&self) -> u64 {
        let mut run = self.packet as u64;
        for l in self.loops.iter().rev() {
            if l.count <= 1 {
                continue;
            }
            if l.stride != run as i64 {
                break;
            }
            run = run.saturating_mul(l.count as u64);
        }
        run
    }

    /// The same packets in the same order, described with as few loops as possible: loops of one iteration are
    /// dropped, an innermost loop stepping by the packet joins it, and a loop stepping by the whole span of the
    /// loop inside it joins that loop. The interpreter walks the shorter form (a 4-byte packet with 32 neighbours
    /// becomes one 128-byte packet); nothing it reads or writes changes.
    pub fn coalesced(&self) -> AccessPattern {
        if self.loops.iter().any(|l| l.count == 0) {
            return self.clone();
        }
        let mut packet = self.packet as u64;
        let mut loops: Vec<Loop> = Vec::with_capacity(self.loops.len());
        for l in self.loops.iter().rev().filter(|l| l.count > 1) {
            match loops.last_mut() {
                None if l.stride == packet as i64 && packet * l.count as u64 <= u32::MAX as u64 => {
                    packet *= l.count as u64
                }
                Some(inner)
                    if inner.stride.checked_mul(inner.count as i64) == Some(l.stride)
                        && inner.count as u64 * l.count as u64 <= u32::MAX as u64 =>
                {
                    inner.count *= l.count
                }
                _ => loops.push(*l),
            }
        }
        loops.reverse();
        AccessPattern { base: self.base, loops, packet: packet as u32 }
    }

    /// Whether each byte is touched at most once (what a write pattern must be). Loops that nest (each stride, in
    /// absolute value, at least the span of the smaller ones and the packet) are injective at once; otherwise the
    /// packets are enumerated, sorted and compared, up to [`MAX_ENUMERATED_PACKETS`].
    pub fn injectivity(&self) -> Injectivity {
        let mut live: Vec<Loop> = self.loops.iter().copied().filter(|l| l.count > 1).collect();
        if self.packet == 0 || self.loops.iter().any(|l| l.count == 0) {
            return Injectivity::Injective;
        }
        if live.iter().any(|l| l.stride == 0) {
            return Injectivity::Overlap(0, 0);
        }
        live.sort_by_key(|l| l.stride.unsigned_abs());
        if nests(&live, self.packet) {
            return Injectivity::Injective;
        }
        match self.packets() {
            Some(n) if n <= MAX_ENUMERATED_PACKETS => self.compare_packets(),
            _ => Injectivity::Unknown,
        }
    }

    /// Sorts every packet's offset and reports the first two that overlap.
    fn compare_packets(&self) -> Injectivity {
        let mut starts: Vec<i128> = self.offsets().collect();
        starts.sort_unstable();
        match starts.windows(2).find(|w| w[1] - w[0] < self.packet as i128) {
            Some(w) => Injectivity::Overlap(w[0], w[1]),
            None => Injectivity::Injective,
        }
    }
}

/// Whether `loops` (sorted by absolute stride) nest: each stride at least the span of the packet and the loops
/// inside it, so that no two packets meet.
fn nests(loops: &[Loop], packet: u32) -> bool {
    let mut span = packet as u128;
    for l in loops {
        let stride = l.stride.unsigned_abs() as u128;
        if stride < span {
            return false;
        }
        span += (l.count as u128 - 1) * stride;
    }
    true
}

/// The packets' offsets from the base, in pattern order.
pub struct Offsets<'a> {
    loops: &'a [Loop],
    index: Vec<u32>,
    offset: i128,
    done: bool,
}

impl Iterator for Offsets<'_> {
    type Item = i128;

    fn next(&mut self) -> Option<i128> {
        if self.done {
            return None;
        }
        let current = self.offset;
        // Advance the odometer: the innermost loop that has iterations left steps; the ones inside it restart.
        self.done = true;
        for k in (0..self.loops.len()).rev() {
            let l = self.loops[k];
            if self.index[k] + 1 < l.count {
                self.index[k] += 1;
                self.offset += l.stride as i128;
                self.done = false;
                break;
            }
            self.offset -= (self.index[k] as i128) * l.stride as i128;
            self.index[k] = 0;
        }
        Some(current)
    }
}

impl fmt::Display for AccessPattern {
    /// `base 0, loops [(32, 1024), (2, 64)], packet 64`, as the dialect writes it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "base {}, loops [", self.base)?;
        for (i, l) in self.loops.iter().enumerate() {
            let sep = if i == 0 { "" } else { ", " };
            write!(f, "{sep}({}, {})", l.count, l.stride)?;
        }
        write!(f, "], packet {}", self.packet)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packets_run_innermost_fastest() {
        let ap = AccessPattern::new(100, &[(2, 1000), (3, 8)], 4);
        assert_eq!(ap.offsets().collect::<Vec<_>>(), vec![0, 8, 16, 1000, 1008, 1016]);
        assert_eq!((ap.packets(), ap.bytes()), (Some(6), Some(24)));
        assert_eq!(ap.range(), Some((100, 1120)));
        assert!(ap.within(1120) && !ap.within(1119));
    }

    #[test]
    fn negative_strides_reach_below_the_base() {
        let ap = AccessPattern::new(64, &[(4, -16)], 8);
        assert_eq!(ap.offsets().collect::<Vec<_>>(), vec![0, -16, -32, -48]);
        assert_eq!(ap.range(), Some((16, 72)));
        assert_eq!(AccessPattern::new(40, &[(4, -16)], 8).range(), Some((-8, 48)));
    }

    #[test]
    fn contiguous_runs_grow_through_matching_strides() {
        assert_eq!(AccessPattern::new(0, &[(32, 1024), (16, 64)], 64).contiguous_run(), 32768);
        assert_eq!(AccessPattern::new(0, &[(32, 2048), (16, 64)], 64).contiguous_run(), 1024);
        assert_eq!(AccessPattern::new(0, &[(32, 1024), (16, 128)], 64).contiguous_run(), 64);
        assert_eq!(AccessPattern::new(0, &[(4, 256), (1, 7)], 256).contiguous_run(), 1024);
    }

    #[test]
    fn injectivity_of_nested_broadcast_and_interleaved_loops() {
        assert_eq!(AccessPattern::new(0, &[(32, 1024), (16, 64)], 64).injectivity(), Injectivity::Injective);
        assert_eq!(AccessPattern::new(0, &[(4, 0)], 8).injectivity(), Injectivity::Overlap(0, 0));
        // Strides 8 and 12 with packets of 4 interleave without touching: 0 8 12 20 24 32.
        assert_eq!(AccessPattern::new(0, &[(3, 12), (2, 8)], 4).injectivity(), Injectivity::Injective);
        assert_eq!(AccessPattern::new(0, &[(3, 12), (2, 8)], 6).injectivity(), Injectivity::Overlap(8, 12));
        let huge = AccessPattern::new(0, &[(1 << 12, 3), (1 << 12, 5)], 1);
        assert_eq!(huge.injectivity(), Injectivity::Unknown);
        assert_eq!(AccessPattern::new(0, &[(0, 0)], 8).injectivity(), Injectivity::Injective);
    }
}
