//! What a DMA command of `tap-npu v0` means, apart from its syntax (`npu-machine.md` §4–5): a source and a
//! destination, each a memory (HBM, or one slice's data memory) with an access pattern, and optionally a spread over
//! several slices (the `spatial` aggregate: one command scattering to, broadcasting to or gathering from many
//! slices' data memory); the rules a command must keep (packet limit, 8-byte aligned writes into DM, equal shapes,
//! injective in-bounds writes, no partial overlap) and its cycle cost (startup, 256-byte units, same-tier
//! serialization, unaligned HBM reads, partial HBM writes).
//! The `npu.dma` instruction, its verifier and the interpreter read these; the worked examples of the machine
//! description are its tests.

use super::access::{AccessPattern, Injectivity, Loop, MAX_ENUMERATED_PACKETS};
use crate::machine::NpuConfig;

/// Most slices one DMA command's spread may serve: the interpreter and the verifier walk them one by one (past it,
/// a verifier error).
pub const MAX_SPREAD_SLICES: u64 = 1 << 12;

/// Where one side of a DMA lies.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Memory {
    /// A chip's HBM; `region` tells buffers apart (two different kernel arguments never overlap).
    Hbm {
        /// The chip.
        chip: u64,
        /// The buffer (for example, the kernel argument's position).
        region: u32,
        /// Its size in bytes.
        bytes: u64,
    },
    /// The data memory of one slice.
    Dm {
        /// The chip.
        chip: u64,
        /// The cluster.
        cluster: u64,
        /// The slice within its cluster.
        slice: u64,
    },
}

impl Memory {
    /// The chip it is on.
    pub fn chip(&self) -> u64 {
        match *self {
            Memory::Hbm { chip, .. } | Memory::Dm { chip, .. } => chip,
        }
    }
}

/// One side of a DMA: a memory and the pattern of bytes it reads or writes there.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Side {
    /// The memory.
    pub memory: Memory,
    /// The bytes, as an access pattern into it.
    pub pattern: AccessPattern,
}

/// A DMA command: bytes read by `src`'s pattern are written, packet by packet in order, by `dst`'s; with a
/// `spread`, once per slice of it ([`Dma::parts`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Dma {
    /// Where it reads.
    pub src: Side,
    /// Where it writes.
    pub dst: Side,
    /// The slices besides the DM side's one, outer to inner (empty: that slice alone).
    pub spread: Vec<SpreadLoop>,
}

/// One loop of a spread over slices: for each of `count` indices, the DM side's slice moves `step` further in its
/// cluster and the HBM side's base `hbm_stride` bytes (0 with an HBM source: every slice gets the same bytes, read
/// once, a broadcast).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct SpreadLoop {
    /// Iterations (at least 1).
    pub count: u32,
    /// Slices between iterations.
    pub step: u64,
    /// Bytes the HBM side moves between iterations.
    pub hbm_stride: i64,
}

impl Dma {
    /// A command between one slice (or none) and HBM, without a spread.
    pub fn new(src: Side, dst: Side) -> Dma {
        Dma { src, dst, spread: Vec::new() }
    }

    /// The single-slice commands it is, one per index tuple of its spread (innermost fastest): the DM side on its
    /// slice, the HBM side's base moved by the tuple's strides. Without a spread, the command itself.
    pub fn parts(&self) -> Vec<Dma> {
        let mut out = vec![Dma::new(self.src.clone(), self.dst.clone())];
        for l in &self.spread {
            let mut next = Vec::with_capacity(out.len() * l.count as usize);
            for part in &out {
                for i in 0..l.count as i64 {
                    let mut p = part.clone();
                    for side in [&mut p.src, &mut p.dst] {
                        match &mut side.memory {
                            Memory::Dm { slice, .. } => *slice += i as u64 * l.step,
                            Memory::Hbm { .. } => {
                                side.pattern.base = (side.pattern.base as i64 + i * l.hbm_stride) as u64
                            }
                        }
                    }
                    next.push(p);
                }
            }
            out = next;
        }
        out
    }

    /// How many slices it serves (1 without a spread).
    pub fn slices(&self) -> u64 {
        self.spread.iter().fold(1u64, |n, l| n.saturating_mul(l.count as u64))
    }

    /// The HBM side: the source of a scatter or broadcast, the destination of a gather.
    fn hbm_side(&self) -> Option<&Side> {
        [&self.src, &self.dst].into_iter().find(|s| matches!(s.memory, Memory::Hbm { .. }))
    }

    /// Whether it moves bytes from one chip to another (over a link).
    pub fn crosses_chips(&self) -> bool {
        self.src.memory.chip() != self.dst.memory.chip()
    }

    /// Checks the machine's rules; the message names the rule and its numbers.
    pub fn check(&self, cfg: &NpuConfig) -> Result<(), String> {
        let (src, dst) = (&self.src.pattern, &self.dst.pattern);
        for side in [&self.src, &self.dst] {
            if side.memory.chip() >= cfg.chips {
                return Err(format!("chip {} is not on the machine ({} chips)", side.memory.chip(), cfg.chips));
            }
        }
        let hbm = |m: &Memory| matches!(m, Memory::Hbm { .. });
        if self.crosses_chips() && !(hbm(&self.src.memory) && hbm(&self.dst.memory)) {
            return Err(format!(
                "a DMA from chip {} to chip {} moves HBM to HBM",
                self.src.memory.chip(),
                self.dst.memory.chip()
            ));
        }
        if src.packet != dst.packet || src.loops.iter().map(|l| l.count).ne(dst.loops.iter().map(|l| l.count)) {
            return Err(format!("source and destination move different shapes: {src} vs {dst}"));
        }
        if src.packet == 0 {
            return Err("a packet of 0 bytes moves nothing".into());
        }
        if src.packet as u64 > cfg.max_packet_bytes {
            return Err(format!("packet of {} B is over the {} B limit", src.packet, cfg.max_packet_bytes));
        }
        self.check_alignment(cfg)?;
        for (side, what) in [(&self.src, "source"), (&self.dst, "destination")] {
            let size = self.capacity(side.memory, cfg);
            if !side.pattern.within(size) {
                let (low, high) = side.pattern.range().expect("a pattern out of bounds touches bytes");
                return Err(format!("the {what} touches bytes {low}..{high}, outside its {size} B"));
            }
        }
        match dst.injectivity() {
            Injectivity::Injective => {}
            Injectivity::Overlap(a, b) => {
                return Err(format!("the destination writes twice: packets at offsets {a} and {b} overlap"))
            }
            Injectivity::Unknown => {
                return Err(format!(
                    "cannot show the destination is written once: its loops do not nest and it has more than \
                     MAX_ENUMERATED_PACKETS ({MAX_ENUMERATED_PACKETS}) packets"
                ))
            }
        }
        self.check_overlap()?;
        self.check_spread(cfg)
    }

    /// A spread joins one HBM side and one DM side on one chip; its slices are distinct and in the cluster, every
    /// part's HBM bytes within the buffer and aligned as its first part's, and a gather's parts write apart.
    fn check_spread(&self, cfg: &NpuConfig) -> Result<(), String> {
        if self.spread.is_empty() {
            return Ok(());
        }
        let (Some(hbm), Some(Memory::Dm { slice, .. })) = (self.hbm_side(), self.dm_memory()) else {
            return Err("a spread over slices joins an HBM buffer and data memory".into());
        };
        if self.spread.iter().any(|l| l.count == 0) {
            return Err("a spread loop of 0 slices serves nothing".into());
        }
        if self.slices() > MAX_SPREAD_SLICES {
            return Err(format!(
                "the spread serves {} slices, more than MAX_SPREAD_SLICES ({MAX_SPREAD_SLICES})",
                self.slices()
            ));
        }
        let cluster = cfg.slices_per_cluster;
        if let Some(l) = self.spread.iter().find(|l| l.count > 1 && l.step >= cluster) {
            return Err(format!("the spread's slice step {} leaves the cluster of {cluster}", l.step));
        }
        let slices =
            AccessPattern::new(slice, &self.spread.iter().map(|l| (l.count, l.step as i64)).collect::<Vec<_>>(), 1);
        let (_, end) = slices.range().expect("a spread serves a slice");
        if end > cluster as i128 {
            return Err(format!("the spread reaches slice {} of a cluster of {}", end - 1, cfg.slices_per_cluster));
        }
        if let Injectivity::Overlap(a, _) = slices.injectivity() {
            return Err(format!("the spread names slice {} twice", slice as i128 + a));
        }
        let align = cfg.dm_write_align as i64;
        if let Some(l) = self.spread.iter().find(|l| l.hbm_stride % align != 0) {
            return Err(format!("the spread's HBM stride {} is not {align}-byte aligned", l.hbm_stride));
        }
        let Memory::Hbm { bytes, .. } = hbm.memory else { unreachable!("an HBM side") };
        let whole = self.hbm_extent();
        if !whole.within(bytes) {
            let (low, high) = whole.range().expect("a spread touches bytes");
            return Err(format!("the spread's HBM side touches bytes {low}..{high}, outside its {bytes} B"));
        }
        if !matches!(self.dst.memory, Memory::Hbm { .. }) {
            return Ok(());
        }
        match whole.injectivity() {
            Injectivity::Injective => Ok(()),
            Injectivity::Overlap(a, b) => {
                Err(format!("the spread's slices write HBM twice: packets at offsets {a} and {b} overlap"))
            }
            Injectivity::Unknown => Err(format!(
                "cannot show the spread's slices write HBM apart: its loops do not nest and it has more than \
                 MAX_ENUMERATED_PACKETS ({MAX_ENUMERATED_PACKETS}) packets"
            )),
        }
    }

    /// The DM side's memory (its first slice's).
    fn dm_memory(&self) -> Option<Memory> {
        [self.src.memory, self.dst.memory].into_iter().find(|m| matches!(m, Memory::Dm { .. }))
    }

    /// Every byte the HBM side touches over the spread: its pattern inside the spread's loops (a source's
    /// broadcast loops left out: they read the same bytes again).
    fn hbm_extent(&self) -> AccessPattern {
        let side = self.hbm_side().expect("a spread has an HBM side");
        let read = matches!(self.src.memory, Memory::Hbm { .. });
        let spread = self.spread.iter().filter(|l| !read || l.hbm_stride != 0);
        let spread = spread.map(|l| Loop { count: l.count, stride: l.hbm_stride });
        let mut p = side.pattern.clone();
        p.loops = spread.chain(side.pattern.loops.iter().copied()).collect();
        p
    }

    /// Writes into DM are 8-byte aligned (base, packet, every stride); HBM↔DM transfers have 8-byte aligned bases
    /// and packets on both sides.
    fn check_alignment(&self, cfg: &NpuConfig) -> Result<(), String> {
        let align = cfg.dm_write_align as i64;
        let dst = &self.dst.pattern;
        if matches!(self.dst.memory, Memory::Dm { .. }) {
            if let Some((what, v)) = dst.misaligned(align) {
                return Err(format!("writes into DM must be {align}-byte aligned, but the destination {what} is {v}"));
            }
        }
        let crosses = matches!(
            (self.src.memory, self.dst.memory),
            (Memory::Hbm { .. }, Memory::Dm { .. }) | (Memory::Dm { .. }, Memory::Hbm { .. })
        );
        if crosses {
            for (side, what) in [(&self.src.pattern, "source"), (dst, "destination")] {
                if side.base as i64 % align != 0 || side.packet as i64 % align != 0 {
                    return Err(format!(
                        "an HBM-DM transfer needs {align}-byte aligned bases and packets, but the {what} has base {} \
                         and packet {}",
                        side.base, side.packet
                    ));
                }
            }
        }
        Ok(())
    }

    /// Source and destination in one memory may be the same bytes or apart, not partly both.
    fn check_overlap(&self) -> Result<(), String> {
        if self.src.memory != self.dst.memory {
            return Ok(());
        }
        let (Some(a), Some(b)) = (self.src.pattern.range(), self.dst.pattern.range()) else { return Ok(()) };
        let apart = a.1 <= b.0 || b.1 <= a.0;
        if apart || self.src.pattern == self.dst.pattern {
            return Ok(());
        }
        Err(format!("source bytes {}..{} and destination bytes {}..{} partly overlap", a.0, a.1, b.0, b.1))
    }

    /// The bytes a memory holds.
    fn capacity(&self, memory: Memory, cfg: &NpuConfig) -> u64 {
        match memory {
            Memory::Hbm { bytes, .. } => bytes,
            Memory::Dm { .. } => cfg.dm_slice_bytes,
        }
    }

    /// Cycles: `startup + f · packets · ceil(packet / unit)` (`f = 2` within one tier: HBM to HBM, or DM to DM in
    /// one cluster), plus per packet an unaligned HBM read's and a partial HBM write's extra cycles; between chips,
    /// the link's `latency + ceil(bytes / bandwidth)`. A spread starts once and moves every part's packets, but a
    /// broadcast's once (the engine reads them once and the network delivers them to every slice).
    pub fn cycles(&self, cfg: &NpuConfig) -> u64 {
        if self.spread.is_empty() || self.hbm_side().is_none() {
            return self.part_cycles(cfg);
        }
        let extent = self.hbm_extent();
        let mut whole = Dma::new(self.src.clone(), self.dst.clone());
        whole.src.pattern = extent.clone();
        whole.dst.pattern = extent;
        whole.part_cycles(cfg)
    }

    /// The cycles of the command's own patterns (its spread aside).
    fn part_cycles(&self, cfg: &NpuConfig) -> u64 {
        let (src, dst) = (&self.src, &self.dst);
        if self.crosses_chips() {
            return cfg.link_cycles(src.pattern.bytes().unwrap_or(u64::MAX));
        }
        let same_tier = match (src.memory, dst.memory) {
            (Memory::Hbm { .. }, Memory::Hbm { .. }) => true,
            (Memory::Dm { cluster: a, .. }, Memory::Dm { cluster: b, .. }) => a == b,
            _ => false,
        };
        let packets = src.pattern.packets().unwrap_or(u64::MAX);
        let mut cycles = cfg.dma_cycles(packets, src.pattern.packet as u64, same_tier);
        let unit = cfg.dma_unit_bytes;
        if matches!(src.memory, Memory::Hbm { .. }) {
            let unaligned = count_packets(&src.pattern, unit, |start| start % unit as i128 != 0);
            cycles = cycles.saturating_add(unaligned.saturating_mul(cfg.unaligned_read_cycles));
        }
        if matches!(dst.memory, Memory::Hbm { .. }) {
            let whole = (dst.pattern.packet as u64).is_multiple_of(unit);
            let partial = count_packets(&dst.pattern, unit, |start| !whole || start % unit as i128 != 0);
            cycles = cycles.saturating_add(partial.saturating_mul(cfg.partial_write_cycles));
        }
        cycles
    }
}

/// How many packets of `ap` start at an address for which `test` holds: in closed form when every stride is a
/// multiple of the `unit` (then every packet has the first one's alignment), otherwise packet by packet.
fn count_packets(ap: &AccessPattern, unit: u64, test: impl Fn(i128) -> bool) -> u64 {
    let packets = ap.packets().unwrap_or(u64::MAX);
    if ap.loops.iter().all(|l| l.stride % unit.max(1) as i64 == 0) {
        return if test(ap.base as i128) { packets } else { 0 };
    }
    ap.offsets().filter(|&o| test(ap.base as i128 + o)).count() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    const HBM: Memory = Memory::Hbm { chip: 0, region: 0, bytes: 1 << 30 };
    const HBM2: Memory = Memory::Hbm { chip: 0, region: 1, bytes: 1 << 30 };
    const DM: Memory = Memory::Dm { chip: 0, cluster: 0, slice: 0 };
    const DM1: Memory = Memory::Dm { chip: 0, cluster: 0, slice: 1 };

    fn dma(src: Memory, src_base: u64, dst: Memory, dst_base: u64, bytes: u64, packet: u32) -> Dma {
        let loops = [(bytes.div_ceil(packet as u64) as u32, packet as i64)];
        Dma::new(
            Side { memory: src, pattern: AccessPattern::new(src_base, &loops, packet) },
            Side { memory: dst, pattern: AccessPattern::new(dst_base, &loops, packet) },
        )
    }

    #[test]
    fn the_worked_examples_of_the_machine_description() {
        let cfg = NpuConfig::default();
        assert_eq!(dma(HBM, 0, HBM2, 0, 16 << 10, 256).cycles(&cfg), 628); // 1
        let mut dm_big = cfg.clone();
        dm_big.dm_slice_bytes = 16 << 20;
        assert_eq!(dma(HBM, 0, DM, 0, 16 << 20, 4096).cycles(&cfg), 66_036); // 2
        assert_eq!(dma(DM, 0, DM1, 0, 16 << 20, 4096).cycles(&cfg), 131_572); // 3
        assert_eq!(dma(HBM, 0, DM, 0, 16 << 10, 4096).cycles(&cfg), 564); // 4
        assert_eq!(dma(HBM, 128, DM, 0, 16 << 10, 256).cycles(&cfg), 628); // 5
        assert_eq!(
            dma(HBM, 0, DM, 0, 16 << 10, 8192).check(&cfg).unwrap_err(),
            "packet of 8192 B is over the 4096 B limit"
        ); // 6
        let e = dma(HBM, 0, DM, 0, 1000, 100).check(&cfg).unwrap_err(); // 7
        assert_eq!(e, "writes into DM must be 8-byte aligned, but the destination packet is 100");
        assert!(dma(HBM, 0, DM, 0, 16 << 20, 4096).check(&dm_big).is_ok());
    }

    #[test]
    fn partial_hbm_writes_pay_for_read_modify_write() {
        let cfg = NpuConfig::default();
        let aligned = dma(DM, 0, HBM, 0, 4096, 256).cycles(&cfg);
        assert_eq!(aligned, 500 + 16);
        assert_eq!(dma(DM, 0, HBM, 8, 4096, 256).cycles(&cfg), aligned + 16 * cfg.partial_write_cycles);
        assert_eq!(dma(DM, 0, HBM, 0, 4096, 128).cycles(&cfg), 500 + 32 + 32 * cfg.partial_write_cycles);
    }

    #[test]
    fn rules_name_their_numbers() {
        let cfg = NpuConfig::default();
        let out = dma(HBM, 0, DM, 512 << 10, 64, 64).check(&cfg).unwrap_err();
        assert_eq!(out, "the destination touches bytes 524288..524352, outside its 524288 B");
        let mut twice = dma(HBM, 0, DM, 0, 64, 64);
        twice.dst.pattern = AccessPattern::new(0, &[(2, 0)], 32);
        twice.src.pattern = AccessPattern::new(0, &[(2, 32)], 32);
        assert_eq!(twice.check(&cfg).unwrap_err(), "the destination writes twice: packets at offsets 0 and 0 overlap");
        let overlap = dma(DM, 0, DM, 64, 256, 64);
        assert_eq!(
            overlap.check(&cfg).unwrap_err(),
            "source bytes 0..256 and destination bytes 64..320 partly overlap"
        );
        let shapes = Dma::new(dma(HBM, 0, DM, 0, 64, 64).src, dma(HBM, 0, DM, 0, 128, 64).dst);
        assert!(shapes.check(&cfg).unwrap_err().starts_with("source and destination move different shapes"));
        let unaligned = dma(HBM, 4, DM, 0, 64, 64).check(&cfg).unwrap_err();
        assert_eq!(
            unaligned,
            "an HBM-DM transfer needs 8-byte aligned bases and packets, but the source has base 4 and packet 64"
        );
    }
}
