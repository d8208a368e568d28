//! `npu.load_trf` carried out lazily: a matmul reads its `B` through the load that filled the tensor register file
//! (TRF). A load copies a box of data memory into the TRF's lanes (for weights stored row by row, a transposition:
//! a move per element); the matmul then reads `B`'s columns out of the lanes. When every element of `B` is one the
//! load copied out of `f32`-aligned data memory, at a fixed row and column stride there (a [`BView`]), the matmul
//! can multiply that data memory in place, or the HBM behind it where a DMA's forward still holds the box (or a
//! larger one around it).
//!
//! A load is *elided* (not carried out at all) when every instruction that reads the TRF bytes it wrote, until they
//! are overwritten whole, is a matmul with such a view, and nothing writes the data memory it read between the load
//! and those matmuls. Both depend only on the instructions and the order they run in, never on the data, so
//! [`TrfPlan::of`] finds them once, when the program is loaded. An elided load still checks, when it runs, that
//! the bytes it reads were written or are a forward's; if not, it is carried out after all (and fails as an eager
//! run would). Every instruction sees the values an eager run would give it (`Npu::eager` runs without any of this,
//! for the property tests), but for rounding: the GEMM library picks its kernel for a small product by the layout
//! of `B` (here where it lies, there the TRF's transposed copy), and with it the order the `k` terms are summed in,
//! so a float element may differ in its last bit (the tests use small integers, whose sums are exact).

use super::forward::{Forward, Through};
use super::memory::Bytes;
use super::state::{gather, Memories};
use crate::dialects::npu::access::AccessPattern;
use crate::dialects::npu::ops::instruction::{Access, Instruction, Site};
use crate::dialects::npu::ops::matmul::Matmul;
use crate::dialects::npu::ops::onchip::Space;
use crate::dialects::npu::ops::stream::{Kind, Stream};
use crate::machine::{ElemType, NpuConfig};
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

/// Where a matmul's `B` (`f32`, `k` rows of `n` columns) lies in the data memory of each of its slices: element
/// `(p, j)` at byte `at + p · row + j · col`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BView {
    /// The first element's byte.
    pub at: usize,
    /// Bytes from one row to the next.
    pub row: usize,
    /// Bytes from one column to the next.
    pub col: usize,
}

impl BView {
    /// Bytes from the first element to past the last.
    pub fn span(&self, k: usize, n: usize) -> usize {
        (k - 1) * self.row + (n - 1) * self.col + 4
    }
}

/// The loads elided and the matmuls that read through a load, found once per program.
#[derive(Clone, Debug, Default)]
pub struct TrfPlan {
    /// Per matmul step reading through a load: its `B`'s view, and the data memory it reads instead of the TRF (a
    /// run per slice, for [`Memories::settle`]).
    views: HashMap<usize, (BView, Vec<Access>)>,
    /// The load steps not carried out, and the data memory each reads (per slice: the site and its byte range).
    elided: HashMap<usize, Vec<(Site, usize, usize)>>,
}

impl TrfPlan {
    /// The plan for the steps `actions` (their accesses in `accesses`) run in `order` on `cfg`.
    pub fn of(actions: &[Option<Instruction>], accesses: &[Vec<Access>], order: &[usize], cfg: &NpuConfig) -> TrfPlan {
        let mut walk = Walk::default();
        for &k in order {
            walk.step(k, actions[k].as_ref(), &accesses[k], cfg);
        }
        let elided = walk.loads.into_iter().filter(|(_, l)| l.ok).map(|(k, l)| (k, l.reads)).collect();
        TrfPlan { views: walk.views, elided }
    }

    /// The view of step `k`'s `B` when it is a matmul that reads through a load, and the data memory it reads.
    pub fn view(&self, k: usize) -> Option<&(BView, Vec<Access>)> {
        self.views.get(&k)
    }

    /// Whether step `k` is a load that need not be carried out now: elided, and the bytes it reads all written or
    /// a forward's.
    pub fn skips(&self, k: usize, mem: &Memories) -> bool {
        self.elided.get(&k).is_some_and(|reads| reads.iter().all(|&(site, low, high)| mem.readable(site, low, high)))
    }
}

/// A load that may be elided, while the program is walked.
struct Load {
    /// No instruction but a matmul with a view reads its bytes, and none overwrites only some of them.
    ok: bool,
    /// Something wrote the data memory it read (matmuls after that read the TRF).
    stale: bool,
    /// Its stream.
    stream: Stream,
    /// The data memory it reads: per slice, the site and its byte range.
    reads: Vec<(Site, usize, usize)>,
}

/// The state of the walk over the program in order.
#[derive(Default)]
struct Walk {
    /// Per TRF site, the step that wrote it last.
    latest: HashMap<Site, usize>,
    /// The loads that may be elided, by step.
    loads: HashMap<usize, Load>,
    /// Per data-memory site, the loads (still the latest writers of their TRF) that read it.
    reading: HashMap<Site, Vec<usize>>,
    /// The views found.
    views: HashMap<usize, (BView, Vec<Access>)>,
    /// The view of each distinct load and matmul shape (a program repeats a few many times).
    known: HashMap<(AccessPattern, AccessPattern, u64, u64, u64), Option<BView>>,
    /// The elements [`view_of`] has enumerated so far (at most [`MAX_VIEW_ELEMENTS`]).
    enumerated: u64,
}

/// Most load elements a program's plan enumerates to find views (each distinct load and matmul shape costs the
/// load's elements, at most the TRF's bytes / 4); past it, the remaining matmuls read the TRF, as an eager run does
/// (slower, the same results), so a hostile kernel of many distinct shapes cannot make loading slow.
pub const MAX_VIEW_ELEMENTS: u64 = 1 << 22;

impl Walk {
    fn step(&mut self, k: usize, action: Option<&Instruction>, accesses: &[Access], cfg: &NpuConfig) {
        match action {
            Some(Instruction::Matmul(mm)) => self.matmul(k, mm, cfg),
            _ => {
                for r in accesses.iter().filter(|a| !a.write && is(a.site, Space::Trf)) {
                    self.spoil(self.latest.get(&r.site).copied());
                }
            }
        }
        for w in accesses.iter().filter(|a| a.write) {
            if is(w.site, Space::Dm) {
                self.written_dm(w);
            }
        }
        for w in accesses.iter().filter(|a| a.write && is(a.site, Space::Trf)) {
            self.written_trf(k, w);
        }
        if let Some(Instruction::Stream(s)) = action {
            self.load(k, s);
        }
    }

    /// A matmul: it reads through the load that last wrote the TRF of all its slices when that load's bytes are
    /// unchanged and lay out its `B` as a view; else it reads the TRF, and the loads it reads must be carried out.
    fn matmul(&mut self, k: usize, mm: &Matmul, cfg: &NpuConfig) {
        let s = mm.slices;
        let writers: HashSet<Option<usize>> =
            (s.first..s.end).map(|slice| self.latest.get(&s.site(Space::Trf, slice)).copied()).collect();
        let through = match writers.iter().next() {
            Some(&Some(load)) if writers.len() == 1 => self.view(load, mm, cfg),
            _ => None,
        };
        let Some(view) = through else {
            writers.into_iter().for_each(|w| self.spoil(w));
            return;
        };
        let pattern = AccessPattern::new(view.at as u64, &[], view.span(mm.k as usize, mm.n as usize) as u32);
        let reads = (s.first..s.end)
            .map(|slice| Access { write: false, site: s.site(Space::Dm, slice), pattern: pattern.clone() })
            .collect();
        self.views.insert(k, (view, reads));
    }

    /// The view of `mm`'s `B` in the data memory load step `load` read, if it is one and its bytes are unchanged.
    fn view(&mut self, load: usize, mm: &Matmul, cfg: &NpuConfig) -> Option<BView> {
        let l = self.loads.get(&load).filter(|l| !l.stale)?;
        let key = (l.stream.src.pattern.clone(), l.stream.dst.pattern.clone(), mm.b_base, mm.k, mm.n);
        if let Some(&known) = self.known.get(&key) {
            return known;
        }
        let elements = l.stream.dst.pattern.bytes().unwrap_or(u64::MAX) / 4;
        if self.enumerated.saturating_add(elements) > MAX_VIEW_ELEMENTS {
            return None;
        }
        self.enumerated += elements;
        let view = view_of(&l.stream, mm, cfg);
        self.known.insert(key, view);
        view
    }

    /// The load of step `load` (if any) must be carried out: something reads its bytes other than through a view.
    fn spoil(&mut self, load: Option<usize>) {
        if let Some(l) = load.and_then(|k| self.loads.get_mut(&k)) {
            l.ok = false;
        }
    }

    /// A write to data memory: the loads that read what it writes are stale.
    fn written_dm(&mut self, w: &Access) {
        let Some((low, high)) = w.pattern.range() else { return };
        let Some(loads) = self.reading.get_mut(&w.site) else { return };
        let trf = trf_of(w.site);
        // Loads no longer the latest writer of their TRF are dropped here, once each.
        loads.retain(|load| self.latest.get(&trf) == Some(load));
        for load in loads.iter() {
            let l = self.loads.get_mut(load).expect("a load");
            // The same bytes on every slice: no search of its slices' reads for this one.
            let (lo, hi) = l.stream.src.pattern.range().expect("a load with a range");
            l.stale |= lo < high && low < hi;
        }
    }

    /// A write to a TRF: it becomes the latest writer there; the load it overwrites only in part must be carried
    /// out (what it leaves may still be read).
    fn written_trf(&mut self, k: usize, w: &Access) {
        if let Some(old) = self.latest.insert(w.site, k).filter(|&old| old != k) {
            let covered = self.loads.get(&old).is_none_or(|l| covers(&w.pattern, &l.stream.dst.pattern));
            if !covered {
                self.spoil(Some(old));
            }
        }
    }

    /// A stream: an `f32` load of the TRF from data memory may be elided.
    fn load(&mut self, k: usize, s: &Stream) {
        if s.kind != Kind::LoadTrf || s.from != ElemType::F32 || s.src.space != Space::Dm {
            return;
        }
        let Some((low, high)) = s.src.pattern.range() else { return };
        let slices = s.slices.first..s.slices.end;
        let reads: Vec<(Site, usize, usize)> =
            slices.map(|slice| (s.slices.site(Space::Dm, slice), low as usize, high as usize)).collect();
        for r in &reads {
            self.reading.entry(r.0).or_default().push(k);
        }
        self.loads.insert(k, Load { ok: true, stale: false, stream: s.clone(), reads });
    }
}

/// Whether `site` is a memory of `space`.
fn is(site: Site, space: Space) -> bool {
    matches!(site, Site::Slice(s, ..) if s == space)
}

/// The TRF of the slice whose data memory is `dm`.
fn trf_of(dm: Site) -> Site {
    match dm {
        Site::Slice(_, chip, cluster, slice) => Site::Slice(Space::Trf, chip, cluster, slice),
        hbm => hbm,
    }
}

/// Whether a write of `by` leaves none of the bytes `old` wrote (the same pattern, or one run over them).
fn covers(by: &AccessPattern, old: &AccessPattern) -> bool {
    if by == old {
        return true;
    }
    let run = by.coalesced();
    let whole = run.bytes() == Some(run.contiguous_run());
    match (whole.then(|| run.range()).flatten(), old.range()) {
        (Some((l, h)), Some((ol, oh))) => l <= ol && oh <= h,
        _ => false,
    }
}

/// Where `mm`'s `B` lies in the data memory `load` read: every element one the load copied, from a 4-byte-aligned
/// place, at a fixed non-negative row and column stride. Enumerates the load's elements once (at most the TRF's
/// bytes / 4; a load writing more than the TRF holds has no view).
fn view_of(load: &Stream, mm: &Matmul, cfg: &NpuConfig) -> Option<BView> {
    let (src, dst) = (&load.src.pattern, &load.dst.pattern);
    let aligned = |p: &AccessPattern| p.misaligned(4).is_none();
    let fits = dst.bytes().is_some_and(|b| b <= Space::Trf.capacity(cfg));
    if mm.from != ElemType::F32 || !aligned(src) || !aligned(dst) || !fits {
        return None;
    }
    let place: HashMap<u64, u64> = elements(dst).zip(elements(src)).collect();
    let (k, n) = (mm.k, mm.n);
    let at = |p: u64, j: u64| place.get(&mm.b_offset(p, j, cfg)).copied();
    let origin = at(0, 0)?;
    let row = if k > 1 { at(1, 0)?.checked_sub(origin)? } else { 0 };
    let col = if n > 1 { at(0, 1)?.checked_sub(origin)? } else { 0 };
    for p in 0..k {
        for j in 0..n {
            if at(p, j)? != origin + p * row + j * col {
                return None;
            }
        }
    }
    Some(BView { at: origin as usize, row: row as usize, col: col as usize })
}

/// The address of each 4-byte element of `pattern`'s packets, in order (packets and addresses 4-byte aligned).
fn elements(pattern: &AccessPattern) -> impl Iterator<Item = u64> + '_ {
    let base = pattern.base as i128;
    pattern.offsets().flat_map(move |o| (0..pattern.packet as u64 / 4).map(move |q| (base + o) as u64 + 4 * q))
}

/// A GEMM operand: its `f32` elements (borrowed in place, or copied out) and the strides of its rows and columns.
pub type Operand<'a> = (Cow<'a, [f32]>, (isize, isize));

/// `B` (`k` × `n`) of a matmul with view `v` on the slice whose data memory is `site` (`dm`), as `f32` with the
/// strides of its rows and columns: in HBM in place where a forward holds it at a fixed stride, else in data
/// memory in place, else copied out (bytes not aligned for `f32`).
pub fn b_operand<'a>(
    v: &BView,
    (k, n): (usize, usize),
    site: Site,
    dm: &'a Bytes,
    through: Through<'a>,
) -> Operand<'a> {
    if let Some((buffer, at, row, col)) = b_in_hbm(v, (k, n), site, through) {
        let hbm = through.hbm[buffer as usize].unchecked_from(0);
        return floats(hbm, at, row, col)
            .unwrap_or_else(|| (Cow::Owned(copied(hbm, at, row, col, (k, n))), (n as isize, 1)));
    }
    if let Some(f) = through.forwards.holding(site, v.at, v.span(k, n)) {
        let hbm = &through.hbm[f.src as usize];
        let run = gather(hbm, &f.pattern).expect("checked written when forwarded");
        return (Cow::Owned(copied(&run, v.at - f.at, v.row, v.col, (k, n))), (n as isize, 1));
    }
    let data = dm.unchecked_from(0);
    floats(data, v.at, v.row, v.col)
        .unwrap_or_else(|| (Cow::Owned(copied(data, v.at, v.row, v.col, (k, n))), (n as isize, 1)))
}

/// Where view `v` of `B` (`k` × `n`) in the data memory `site` lies in HBM when a DMA's forward holds it at fixed
/// strides there: the buffer, the first byte and the bytes between rows and between columns.
pub fn b_in_hbm(
    v: &BView,
    (k, n): (usize, usize),
    site: Site,
    through: Through<'_>,
) -> Option<(u32, usize, usize, usize)> {
    let f = through.forwards.holding(site, v.at, v.span(k, n))?;
    let (at, row, col) = in_hbm(f, v, (k, n))?;
    Some((f.src, at, row, col))
}

/// Where view `v` lies in HBM behind forward `f` (whose destination holds the view's bytes) at fixed strides: its
/// first byte and the bytes between rows and between columns. The forward must read one run per packet at one
/// stride, and `B`'s rows (or its columns) must each lie inside one packet, stepping whole packets.
fn in_hbm(f: &Forward, v: &BView, (k, n): (usize, usize)) -> Option<(usize, usize, usize)> {
    let (base, packet, stride) = f.runs()?;
    let (q, skip) = ((v.at - f.at) / packet, (v.at - f.at) % packet);
    let first = base + q * stride + skip;
    let inside = |count: usize, step: usize| skip + (count - 1) * step + 4 <= packet;
    if v.row.is_multiple_of(packet) && inside(n, v.col) {
        Some((first, v.row / packet * stride, v.col))
    } else if v.col.is_multiple_of(packet) && inside(k, v.row) {
        Some((first, v.row, v.col / packet * stride))
    } else {
        None
    }
}

/// `data` from byte `at` on as `f32`s with strides `row` and `col` (bytes) in elements, when all are aligned.
pub fn floats(data: &[u8], at: usize, row: usize, col: usize) -> Option<Operand<'_>> {
    let aligned = [at, row, col].iter().all(|x| x.is_multiple_of(4));
    let floats: &[f32] = bytemuck::try_cast_slice(&data[at..data.len() / 4 * 4]).ok().filter(|_| aligned)?;
    Some((Cow::Borrowed(floats), ((row / 4) as isize, (col / 4) as isize)))
}

/// `B`'s `k` × `n` elements out of `data` (element `(p, j)` at `at + p · row + j · col`), row by row.
fn copied(data: &[u8], at: usize, row: usize, col: usize, (k, n): (usize, usize)) -> Vec<f32> {
    let element = |i: usize| f32::from_le_bytes([data[i], data[i + 1], data[i + 2], data[i + 3]]);
    (0..k).flat_map(|p| (0..n).map(move |j| element(at + p * row + j * col))).collect()
}

impl Memories {
    /// Whether bytes `[low, high)` of `site` may be read: inside one forward, or all written.
    pub fn readable(&self, site: Site, low: usize, high: usize) -> bool {
        if self.forwards.holding(site, low, high - low).is_some() {
            return true;
        }
        !self.forwards.meets(site, low, high) && self.slices.get(&site).is_some_and(|b| b.written_between(low, high))
    }
}
