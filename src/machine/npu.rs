//! The numbers of `tap-npu v0`, the abstract NPU (FuriosaAI RNGD shapes and figures where public), in one
//! configuration that the NPU cycle model and the sharding cost model both read.
//!
//! Every field documents its class, as the machine description does: **P** published (RNGD vISA book, vendor
//! specifications), **D** derived from published numbers, **A** our assumption. The defaults are the `rngd-lite`
//! profile; every field is public so a test or a command line can override it, and [`NpuConfig::validate`]
//! rejects zeros. Times are cycles of the chip clock.

use super::device::{Device, ElemType, Memory, OpClass};
use super::error::{positive, MachineError};
use super::link::Link;

const KIB: u64 = 1024;

/// The configuration of one NPU chip and of the links between chips.
#[derive(Debug, Clone, PartialEq)]
pub struct NpuConfig {
    /// Profile name.
    pub profile: String,
    /// Clock, Hz (P: 1 GHz).
    pub clock_hz: f64,
    /// Chips, joined by links (A: 1; a sharded program's devices). Each is a whole chip with its own HBM.
    pub chips: u64,
    /// Clusters per chip (P: 2).
    pub clusters: u64,
    /// Slices per cluster (P: 256).
    pub slices_per_cluster: u64,
    /// HBM capacity, bytes (P: 48 GB; taken as 48 GiB).
    pub hbm_bytes: u64,
    /// HBM aggregate bandwidth cap across all DMA engines, bytes/cycle (A: 1.5 TB/s rounded to 6 × 256 = 1536).
    pub hbm_bytes_per_cycle: u64,
    /// Data memory per slice, bytes (P: 512 KiB).
    pub dm_slice_bytes: u64,
    /// DM slice port, bytes/cycle, shared by fetch, commit and DMA (P: 128).
    pub dm_port_bytes_per_cycle: u64,
    /// TRF lanes per slice (P: 8); also the `n` a matmul pass covers.
    pub trf_lanes: u64,
    /// TRF bytes per lane (P: 8 KiB).
    pub trf_lane_bytes: u64,
    /// VRF per slice, bytes (P: 8 KiB).
    pub vrf_slice_bytes: u64,
    /// Accumulator per slice, bytes (A: 64 KiB, Gemmini's default).
    pub acc_slice_bytes: u64,
    /// DMA engines per chip (P: 8).
    pub dma_engines: u64,
    /// Cycles to start one DMA command (P: ≈500).
    pub dma_startup_cycles: u64,
    /// HBM access unit, bytes: a DMA moves one per cycle (P: 256).
    pub dma_unit_bytes: u64,
    /// Largest DMA packet, bytes (P: 4096).
    pub max_packet_bytes: u64,
    /// DM writes must be aligned to this many bytes (P: 8).
    pub dm_write_align: u64,
    /// Extra cycles per DMA packet whose HBM read is not unit-aligned (D: ≈2× read cost).
    pub unaligned_read_cycles: u64,
    /// Extra cycles per DMA packet writing part of an HBM unit (D: ≈50× read-modify-write).
    pub partial_write_cycles: u64,
    /// Setup cycles of a compute op (A: not public).
    pub compute_setup_cycles: u64,
    /// NoC flit, bytes: register-file loads, casts and memsets move one per cycle (P flit size; the rate A).
    pub flit_bytes: u64,
    /// Vector elements per cycle per slice, 32-bit types (P: 8).
    pub vector_elems_per_cycle: u64,
    /// Transcendental elements per cycle per slice (P for the float cluster's 4; applying it to transcendentals A).
    pub transcendental_elems_per_cycle: u64,
    /// Bytes of the `a` operand a matmul lane consumes per cycle (P: packet ≤ 64 B), so `k` per cycle is
    /// `64 / element bytes` (32 bf16, 64 i8).
    pub matmul_packet_bytes: u64,
    /// Chip-to-chip link bandwidth, bytes/cycle (A: 64, Ethernet-class links such as Wormhole's).
    pub link_bytes_per_cycle: u64,
    /// Chip-to-chip transfer latency, cycles (A: 1,000).
    pub link_latency_cycles: u64,
}

impl std::fmt::Display for NpuConfig {
    /// One `name = value` line per parameter.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (name, value) in self.entries() {
            writeln!(f, "{name} = {value}")?;
        }
        Ok(())
    }
}

impl Default for NpuConfig {
    /// The `rngd-lite` profile.
    fn default() -> NpuConfig {
        NpuConfig {
            profile: "rngd-lite".to_string(),
            clock_hz: 1e9,
            chips: 1,
            clusters: 2,
            slices_per_cluster: 256,
            hbm_bytes: 48 * KIB * KIB * KIB,
            hbm_bytes_per_cycle: 1536,
            dm_slice_bytes: 512 * KIB,
            dm_port_bytes_per_cycle: 128,
            trf_lanes: 8,
            trf_lane_bytes: 8 * KIB,
            vrf_slice_bytes: 8 * KIB,
            acc_slice_bytes: 64 * KIB,
            dma_engines: 8,
            dma_startup_cycles: 500,
            dma_unit_bytes: 256,
            max_packet_bytes: 4096,
            dm_write_align: 8,
            unaligned_read_cycles: 1,
            partial_write_cycles: 50,
            compute_setup_cycles: 64,
            flit_bytes: 32,
            vector_elems_per_cycle: 8,
            transcendental_elems_per_cycle: 4,
            matmul_packet_bytes: 64,
            link_bytes_per_cycle: 64,
            link_latency_cycles: 1000,
        }
    }
}

/// Where an integer parameter lives in a configuration.
type Field = fn(&mut NpuConfig) -> &mut u64;

/// The integer parameters by name, for overrides and printing (the profile name and the clock are apart).
const COUNTS: &[(&str, Field)] = &[
    ("chips", |c| &mut c.chips),
    ("clusters", |c| &mut c.clusters),
    ("slices_per_cluster", |c| &mut c.slices_per_cluster),
    ("hbm_bytes", |c| &mut c.hbm_bytes),
    ("hbm_bytes_per_cycle", |c| &mut c.hbm_bytes_per_cycle),
    ("dm_slice_bytes", |c| &mut c.dm_slice_bytes),
    ("dm_port_bytes_per_cycle", |c| &mut c.dm_port_bytes_per_cycle),
    ("trf_lanes", |c| &mut c.trf_lanes),
    ("trf_lane_bytes", |c| &mut c.trf_lane_bytes),
    ("vrf_slice_bytes", |c| &mut c.vrf_slice_bytes),
    ("acc_slice_bytes", |c| &mut c.acc_slice_bytes),
    ("dma_engines", |c| &mut c.dma_engines),
    ("dma_startup_cycles", |c| &mut c.dma_startup_cycles),
    ("dma_unit_bytes", |c| &mut c.dma_unit_bytes),
    ("max_packet_bytes", |c| &mut c.max_packet_bytes),
    ("dm_write_align", |c| &mut c.dm_write_align),
    ("unaligned_read_cycles", |c| &mut c.unaligned_read_cycles),
    ("partial_write_cycles", |c| &mut c.partial_write_cycles),
    ("compute_setup_cycles", |c| &mut c.compute_setup_cycles),
    ("flit_bytes", |c| &mut c.flit_bytes),
    ("vector_elems_per_cycle", |c| &mut c.vector_elems_per_cycle),
    ("transcendental_elems_per_cycle", |c| &mut c.transcendental_elems_per_cycle),
    ("matmul_packet_bytes", |c| &mut c.matmul_packet_bytes),
    ("link_bytes_per_cycle", |c| &mut c.link_bytes_per_cycle),
    ("link_latency_cycles", |c| &mut c.link_latency_cycles),
];

/// Most DMA engines a chip may have: each is a queue of the interpreter, and a queue's name is `dma<n>`.
pub const MAX_DMA_ENGINES: u64 = 64;

/// Most chips a machine may have (each brings its queues to the interpreter's schedule).
pub const MAX_CHIPS: u64 = 64;

/// Most clusters per chip, and most slices per cluster (a slice's memories are numbered by chip, cluster and slice).
pub const MAX_GEOMETRY: u64 = 1 << 12;

/// Largest value of any integer parameter (sizes and cycles stay far from overflowing `i64` arithmetic).
pub const MAX_PARAMETER: u64 = 1 << 48;

/// Slowest clock, Hz (times in seconds and microseconds stay finite).
pub const MIN_CLOCK_HZ: f64 = 1.0;

impl NpuConfig {
    /// Sets the integer parameter `name` (a field's name, `slices_per_cluster` say); `profile` and `clock_hz` are
    /// fields of their own. Validate afterwards.
    pub fn set(&mut self, name: &str, value: u64) -> Result<(), MachineError> {
        let (_, field) = COUNTS.iter().find(|(n, _)| *n == name).ok_or_else(|| MachineError::UnknownParameter {
            what: format!("NPU parameter '{name}' (one of profile, clock_hz, {})", Self::names().join(", ")),
        })?;
        *field(self) = value;
        Ok(())
    }

    /// The integer parameters' names.
    pub fn names() -> Vec<&'static str> {
        COUNTS.iter().map(|(n, _)| *n).collect()
    }

    /// Every parameter as `(name, value)`, the profile and clock first.
    pub fn entries(&self) -> Vec<(&'static str, String)> {
        let mut copy = self.clone();
        let mut out = vec![("profile", self.profile.clone()), ("clock_hz", format!("{}", self.clock_hz))];
        out.extend(COUNTS.iter().map(|(n, field)| (*n, field(&mut copy).to_string())));
        out
    }

    /// Errors on a non-positive clock or a zero where a count, size or rate must be at least 1 (penalties and
    /// setup cycles may be 0).
    pub fn validate(&self) -> Result<(), MachineError> {
        positive("NPU clock", self.clock_hz)?;
        if self.clock_hz < MIN_CLOCK_HZ {
            return Err(MachineError::BadNumber {
                what: "NPU clock".into(),
                value: self.clock_hz,
                expected: ">= 1 Hz",
            });
        }
        let mut copy = self.clone();
        for (name, field) in COUNTS {
            let value = *field(&mut copy);
            if value > MAX_PARAMETER {
                return Err(MachineError::TooLarge {
                    what: format!("NPU {name}"),
                    value,
                    max: format!("MAX_PARAMETER ({MAX_PARAMETER})"),
                });
            }
        }
        let at_least_one = [
            ("chips", self.chips),
            ("clusters", self.clusters),
            ("slices per cluster", self.slices_per_cluster),
            ("HBM bytes", self.hbm_bytes),
            ("HBM bytes per cycle", self.hbm_bytes_per_cycle),
            ("DM bytes per slice", self.dm_slice_bytes),
            ("DM port bytes per cycle", self.dm_port_bytes_per_cycle),
            ("TRF lanes", self.trf_lanes),
            ("TRF bytes per lane", self.trf_lane_bytes),
            ("VRF bytes per slice", self.vrf_slice_bytes),
            ("accumulator bytes per slice", self.acc_slice_bytes),
            ("DMA engines", self.dma_engines),
            ("DMA unit bytes", self.dma_unit_bytes),
            ("largest DMA packet", self.max_packet_bytes),
            ("DM write alignment", self.dm_write_align),
            ("flit bytes", self.flit_bytes),
            ("vector elements per cycle", self.vector_elems_per_cycle),
            ("transcendental elements per cycle", self.transcendental_elems_per_cycle),
            ("matmul packet bytes", self.matmul_packet_bytes),
            ("link bytes per cycle", self.link_bytes_per_cycle),
        ];
        for (what, v) in at_least_one {
            if v == 0 {
                return Err(MachineError::Zero { what: format!("NPU {what}") });
            }
        }
        let limits = [
            ("NPU DMA engines", self.dma_engines, "MAX_DMA_ENGINES", MAX_DMA_ENGINES),
            ("NPU chips", self.chips, "MAX_CHIPS", MAX_CHIPS),
            ("NPU clusters", self.clusters, "MAX_GEOMETRY", MAX_GEOMETRY),
            ("NPU slices per cluster", self.slices_per_cluster, "MAX_GEOMETRY", MAX_GEOMETRY),
        ];
        for (what, value, name, max) in limits {
            if value > max {
                return Err(MachineError::TooLarge { what: what.into(), value, max: format!("{name} ({max})") });
            }
        }
        Ok(())
    }

    /// Slices per chip.
    pub fn slices(&self) -> u64 {
        self.clusters.saturating_mul(self.slices_per_cluster)
    }

    /// `k` elements a matmul lane consumes per cycle for this element type (32 for bf16, 64 for i8).
    pub fn matmul_k_per_cycle(&self, elem: ElemType) -> u64 {
        (self.matmul_packet_bytes / elem.bytes()).max(1)
    }

    /// The chip as a [`Device`], rates per cycle for the whole chip (every slice in lockstep): matrix FLOPs
    /// `2 · slices · lanes · k_per_cycle` for bf16, f8 and i8 (D: 262,144 bf16 FLOP/cycle against the published
    /// 256 TFLOPS at 1 GHz); vector and transcendental elements `slices · rate` for f32 and i32; memories `hbm`
    /// (main), `dm`, `trf`, `vrf`, `acc`.
    pub fn device(&self) -> Result<Device, MachineError> {
        self.validate()?;
        let slices = self.slices() as f64;
        let mut device = Device::new(&self.profile);
        for elem in [ElemType::F32, ElemType::Bf16, ElemType::F8, ElemType::I8] {
            let macs = self.trf_lanes * self.matmul_k_per_cycle(elem);
            device = device.with_throughput(OpClass::Matrix, elem, 2.0 * slices * macs as f64)?;
        }
        for elem in [ElemType::F32, ElemType::I32] {
            device = device.with_throughput(OpClass::Vector, elem, slices * self.vector_elems_per_cycle as f64)?;
        }
        let transcendental = slices * self.transcendental_elems_per_cycle as f64;
        device = device.with_throughput(OpClass::Transcendental, ElemType::F32, transcendental)?;
        let s = self.slices();
        let flit = self.flit_bytes as f64;
        device
            .with_memory(Memory::new("hbm", self.hbm_bytes, 1, self.hbm_bytes_per_cycle as f64)?)?
            .with_memory(Memory::new("dm", self.dm_slice_bytes, s, self.dm_port_bytes_per_cycle as f64)?)?
            .with_memory(Memory::new("trf", self.trf_lanes * self.trf_lane_bytes, s, flit)?)?
            .with_memory(Memory::new("vrf", self.vrf_slice_bytes, s, flit)?)?
            .with_memory(Memory::new("acc", self.acc_slice_bytes, s, flit)?)
    }

    /// The chip-to-chip link: `α` = latency cycles, `β` = 1 / bytes per cycle (`npu-machine` §10).
    pub fn link(&self) -> Result<Link, MachineError> {
        Link::new(self.link_latency_cycles as f64, self.link_bytes_per_cycle as f64)
    }

    /// Cycles of one DMA command moving `packets` packets of `packet_bytes` aligned bytes:
    /// `startup + f · packets · ceil(packet_bytes / unit)`, `f = 2` when source and destination are the same
    /// tier (HBM→HBM, same-cluster DM→DM: read and write serialize), else 1. Unaligned reads and partial writes
    /// add [`NpuConfig::unaligned_read_cycles`] and [`NpuConfig::partial_write_cycles`] per packet on top.
    pub fn dma_cycles(&self, packets: u64, packet_bytes: u64, same_tier: bool) -> u64 {
        let f = if same_tier { 2 } else { 1 };
        let units = packets.saturating_mul(packet_bytes.div_ceil(self.dma_unit_bytes.max(1)));
        self.dma_startup_cycles.saturating_add(units.saturating_mul(f))
    }

    /// Cycles of a chip-to-chip transfer of `bytes`: `latency + ceil(bytes / link bandwidth)` (`npu-machine` §10).
    pub fn link_cycles(&self, bytes: u64) -> u64 {
        self.link_latency_cycles.saturating_add(bytes.div_ceil(self.link_bytes_per_cycle.max(1)))
    }

    /// Cycles of `npu.matmul` of `m × k` by `k × n`: `setup + m · ceil(k / k_per_cycle) · ceil(n / lanes)`.
    pub fn matmul_cycles(&self, m: u64, k: u64, n: u64, elem: ElemType) -> u64 {
        let passes = m
            .saturating_mul(k.div_ceil(self.matmul_k_per_cycle(elem)))
            .saturating_mul(n.div_ceil(self.trf_lanes.max(1)));
        self.compute_setup_cycles.saturating_add(passes)
    }

    /// The elements a row of `extent` elements takes in a buffer laid out for this machine, the policy
    /// `resolve-layouts` and the lowering share: a multiple of `dm_write_align` elements (so that a row, or any
    /// piece of it starting at such a multiple, is a DMA packet of aligned bytes whatever the element size), and
    /// of 64 elements from 256 on (at most a quarter more, so that long rows also start on 64-byte lines).
    pub fn padded_row(&self, extent: u64) -> u64 {
        let unit = if extent >= 256 { 64.max(self.dm_write_align) } else { self.dm_write_align.max(1) };
        extent.max(1).div_ceil(unit).saturating_mul(unit)
    }

    /// Cycles of an elementwise vector op over `n` elements per slice: `setup + ceil(n / rate)`, the rate being
    /// the transcendental one for `exp`, `tanh` and the like.
    pub fn vector_cycles(&self, n: u64, transcendental: bool) -> u64 {
        let rate = if transcendental { self.transcendental_elems_per_cycle } else { self.vector_elems_per_cycle };
        self.compute_setup_cycles.saturating_add(n.div_ceil(rate.max(1)))
    }

    /// Cycles of a transfer through the NoC one flit per cycle (`load_trf`, `load_vrf`, `cast`, `memset`):
    /// `setup + ceil(bytes / flit)`.
    pub fn flit_cycles(&self, bytes: u64) -> u64 {
        self.compute_setup_cycles.saturating_add(bytes.div_ceil(self.flit_bytes.max(1)))
    }
}
