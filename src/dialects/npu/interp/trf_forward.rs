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
use foldhash::{HashMap, HashSet};
use std::borrow::{Borrow, Cow};

/// Where a matmul's `B` (`f32`, `k` rows of `n` columns) lies in the data memory of each of its slices (or, for
/// [`b_in_hbm`], in HBM): element `(p, j)` at byte `at + offset(p) + j · col`, where row `p`'s offset is the sum of
/// its digits in the mixed radix of `rows`' counts times their strides. One level is a fixed row stride; the
/// kernels of a convolution's taps (input channel, kernel row, kernel column, each padded in memory) take three.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BView {
    /// The first element's byte.
    pub at: usize,
    /// The levels of the rows, outermost first: how many and the bytes from one to the next (their counts
    /// multiply to `k`).
    pub rows: Vec<(usize, usize)>,
    /// Bytes from one column to the next.
    pub col: usize,
}

impl BView {
    /// Bytes from the first element to past the last (`n` columns).
    pub fn span(&self, n: usize) -> usize {
        self.rows.iter().map(|&(count, stride)| (count - 1) * stride).sum::<usize>() + (n - 1) * self.col + 4
    }

    /// The bytes from one row to the next, when they are a fixed stride.
    pub fn row(&self) -> Option<usize> {
        match self.rows[..] {
            [] => Some(0),
            [(_, stride)] => Some(stride),
            _ => None,
        }
    }

    /// Each row's byte offset from the first, in order.
    fn row_offsets(&self) -> Vec<usize> {
        let mut offsets = vec![0];
        for &(count, stride) in self.rows.iter().rev() {
            let inner = offsets.clone();
            offsets = (0..count).flat_map(|i| inner.iter().map(move |o| i * stride + o)).collect();
        }
        offsets
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
        let elided: HashMap<_, _> = walk.loads.into_iter().filter(|(_, l)| l.ok).map(|(k, l)| (k, l.reads)).collect();
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
        let pattern = AccessPattern::new(view.at as u64, &[], view.span(mm.n as usize) as u32);
        let reads = (s.first..s.end)
            .map(|slice| Access { write: false, site: s.site(Space::Dm, slice), pattern: pattern.clone() })
            .collect();
        self.views.insert(k, (view, reads));
    }

    /// The view of `mm`'s `B` in the data memory load step `load` read, if it is one and its bytes are unchanged.
    fn view(&mut self, load: usize, mm: &Matmul, cfg: &NpuConfig) -> Option<BView> {
        let l = self.loads.get(&load).filter(|l| !l.stale)?;
        let key = (l.stream.src.pattern.clone(), l.stream.dst.pattern.clone(), mm.b_base, mm.k, mm.n);
        if let Some(known) = self.known.get(&key) {
            return known.clone();
        }
        let elements = l.stream.dst.pattern.bytes().unwrap_or(u64::MAX) / 4;
        if self.enumerated.saturating_add(elements) > MAX_VIEW_ELEMENTS {
            return None;
        }
        self.enumerated += elements;
        let view = view_of(&l.stream, mm, cfg);
        self.known.insert(key, view.clone());
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
/// place, at fixed non-negative strides (of the rows' levels, [`row_levels`], and of the columns). Enumerates the
/// load's elements once (at most the TRF's bytes / 4; a load writing more than the TRF holds has no view).
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
    let offset = |p: u64| at(p, 0)?.checked_sub(origin);
    let rows = row_levels(k, offset)?;
    let col = if n > 1 { at(0, 1)?.checked_sub(origin)? } else { 0 };
    let view = BView { at: origin as usize, rows, col: col as usize };
    for (p, row) in (0..k).zip(view.row_offsets()) {
        for j in 0..n {
            if at(p, j)? != origin + (row + j as usize * view.col) as u64 {
                return None;
            }
        }
    }
    Some(view)
}

/// The levels of `k` rows whose byte offsets from the first are `offset(p)`, outermost first: innermost, the
/// longest run of rows at a fixed stride that a whole number of times makes `k`; then runs of those, and so on.
/// Checks the levels' first rows only ([`view_of`] checks every row).
fn row_levels(k: u64, offset: impl Fn(u64) -> Option<u64>) -> Option<Vec<(usize, usize)>> {
    let mut levels = Vec::new();
    // Rows the inner levels count.
    let mut inner = 1;
    while inner < k {
        let stride = offset(inner)?;
        let mut count = 2;
        while inner * count < k && offset(inner * count)? == count * stride {
            count += 1;
        }
        while !k.is_multiple_of(inner * count) {
            count -= 1;
        }
        if count < 2 {
            return None;
        }
        levels.push((count as usize, stride as usize));
        inner *= count;
    }
    levels.reverse();
    Some(levels)
}

/// The address of each 4-byte element of `pattern`'s packets, in order (packets and addresses 4-byte aligned).
fn elements(pattern: &AccessPattern) -> impl Iterator<Item = u64> + '_ {
    let base = pattern.base as i128;
    pattern.offsets().flat_map(move |o| (0..pattern.packet as u64 / 4).map(move |q| (base + o) as u64 + 4 * q))
}

/// A GEMM operand: its `f32` elements (borrowed in place, or copied out) and the strides of its rows and columns.
pub type Operand<'a> = (Cow<'a, [f32]>, (isize, isize));

/// The `B`s in HBM that slices read copied out (rows of several levels), by buffer and view: slices reading the
/// same (a convolution's kernels, in every slice of a block of pixels) copy them once.
pub type Copied = HashMap<(u32, BView), Vec<f32>>;

/// `B` (`n` columns) of view `v` of the data memory of each of `slices`, copied out once where it lies in HBM in
/// rows of several levels.
pub fn copied_from_hbm(v: &BView, n: usize, slices: impl Iterator<Item = Site>, through: Through<'_>) -> Copied {
    let mut copies = Copied::default();
    copy_out(&mut copies, slices.filter_map(|site| b_in_hbm(v, n, site, through)), n, through.hbm);
    copies
}

/// Each of the `placed` `B`s (`n` columns; a buffer and its view there, [`b_in_hbm`]) whose rows lie in HBM in
/// several levels copied out into `copies`, once each.
pub fn copy_out<V: Borrow<BView>>(
    copies: &mut Copied,
    placed: impl Iterator<Item = (u32, V)>,
    n: usize,
    hbm: &[Bytes],
) {
    for (buffer, placed) in placed.filter(|(_, p)| p.borrow().row().is_none()) {
        let data = hbm[buffer as usize].unchecked_from(0);
        let key = (buffer, placed.borrow().clone());
        copies.entry(key).or_insert_with_key(|(_, p)| copied(data, p, n));
    }
}

/// `B` (`k` × `n`) of a matmul with view `v` on the slice whose data memory is `site` (`dm`), as `f32` with the
/// strides of its rows and columns: in HBM where a forward holds it at fixed strides ([`b_from_hbm`]), else in data
/// memory; in place when its rows are at a fixed stride, else copied out (rows of several levels, bytes not aligned
/// for `f32`).
pub fn b_operand<'a>(
    v: &BView,
    n: usize,
    site: Site,
    dm: &'a Bytes,
    through: Through<'a>,
    copies: &'a Copied,
) -> Operand<'a> {
    if let Some(b) = b_from_hbm(v, n, site, through, copies) {
        return b;
    }
    if let Some(f) = through.forwards.holding(site, v.at, v.span(n)) {
        let run = gather(&through.hbm[f.src as usize], &f.pattern).expect("checked written when forwarded");
        let inside = BView { at: v.at - f.at, ..v.clone() };
        return (Cow::Owned(copied(&run, &inside, n)), (n as isize, 1));
    }
    operand(dm.unchecked_from(0), v, n)
}

/// `B` of [`b_operand`] where a forward holds it in HBM at fixed strides: in `copies` when copied out already.
pub fn b_from_hbm<'a>(
    v: &BView,
    n: usize,
    site: Site,
    through: Through<'a>,
    copies: &'a Copied,
) -> Option<Operand<'a>> {
    Some(b_placed(&b_in_hbm(v, n, site, through)?, n, through.hbm, copies))
}

/// `B` (`n` columns) at `placed` (a buffer and the view there, [`b_in_hbm`]): in `copies` when copied out already.
pub fn b_placed<'a>(placed: &(u32, BView), n: usize, hbm: &'a [Bytes], copies: &'a Copied) -> Operand<'a> {
    match copies.get(placed) {
        Some(b) => (Cow::Borrowed(b), (n as isize, 1)),
        None => operand(hbm[placed.0 as usize].unchecked_from(0), &placed.1, n),
    }
}

/// View `v` of `data` (`n` columns) as a GEMM operand: in place when its rows are at a fixed stride and all is
/// aligned, else copied out row by row.
pub fn operand<'a>(data: &'a [u8], v: &BView, n: usize) -> Operand<'a> {
    v.row()
        .and_then(|row| floats(data, v.at, row, v.col))
        .unwrap_or_else(|| (Cow::Owned(copied(data, v, n)), (n as isize, 1)))
}

/// Where view `v` of `B` (`n` columns) in the data memory `site` lies in HBM when a DMA's forward holds it at fixed
/// strides there: the buffer, and the view there.
pub fn b_in_hbm(v: &BView, n: usize, site: Site, through: Through<'_>) -> Option<(u32, BView)> {
    let f = through.forwards.holding(site, v.at, v.span(n))?;
    Some((f.src, in_hbm(f, v, n)?))
}

/// Where view `v` (`n` columns) lies in HBM behind forward `f` (whose destination holds the view's bytes) at fixed
/// strides. The forward must read one run per packet at one stride; each level of the rows and the columns must
/// step whole packets, or stay inside the packet of the view's first element (those together).
fn in_hbm(f: &Forward, v: &BView, n: usize) -> Option<BView> {
    let (base, packet, stride) = f.runs()?;
    let (q, skip) = ((v.at - f.at) / packet, (v.at - f.at) % packet);
    let levels = v.rows.iter().copied().chain([(n, v.col)]);
    let moving = levels.clone().filter(|&(count, _)| count > 1);
    let inside: usize = moving.filter(|(_, s)| !s.is_multiple_of(packet)).map(|(count, s)| (count - 1) * s).sum();
    if skip + inside + 4 > packet {
        return None;
    }
    let hbm = |(count, s): (usize, usize)| match count > 1 && s.is_multiple_of(packet) {
        true => (count, s / packet * stride),
        false => (count, s),
    };
    let mut placed: Vec<(usize, usize)> = levels.map(hbm).collect();
    let col = placed.pop().expect("the columns").1;
    Some(BView { at: base + q * stride + skip, rows: merged(&placed), col })
}

/// Levels of rows (outermost first) with each level that steps over exactly the one inside it merged with it, and
/// single rows dropped: a convolution's kernels, padded in data memory, lie in HBM at one stride (channel, kernel
/// row and column one after another), which a GEMM reads in place.
fn merged(levels: &[(usize, usize)]) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::with_capacity(levels.len());
    for &(count, stride) in levels.iter().filter(|l| l.0 > 1) {
        match out.last_mut() {
            Some(last) if last.1 == count * stride => *last = (last.0 * count, stride),
            _ => out.push((count, stride)),
        }
    }
    out
}

/// `data` from byte `at` on as `f32`s with strides `row` and `col` (bytes) in elements, when all are aligned.
pub fn floats(data: &[u8], at: usize, row: usize, col: usize) -> Option<Operand<'_>> {
    let aligned = [at, row, col].iter().all(|x| x.is_multiple_of(4));
    let floats: &[f32] = bytemuck::try_cast_slice(&data[at..data.len() / 4 * 4]).ok().filter(|_| aligned)?;
    Some((Cow::Borrowed(floats), ((row / 4) as isize, (col / 4) as isize)))
}

/// The `k` × `n` elements of view `v` of `data`, row by row.
pub fn copied(data: &[u8], v: &BView, n: usize) -> Vec<f32> {
    let element = |i: usize| f32::from_le_bytes(data[i..i + 4].try_into().expect("4 bytes"));
    let rows = v.row_offsets();
    let mut out = vec![0f32; rows.len() * n];
    // Column by column: a column's rows lie close together, the columns often far apart.
    for j in 0..n {
        let first = v.at + j * v.col;
        for (p, row) in rows.iter().enumerate() {
            out[p * n + j] = element(first + row);
        }
    }
    out
}

impl Memories {
    /// Whether bytes `[low, high)` of `site` may be read: inside one forward, or all written (no fill among them).
    pub fn readable(&self, site: Site, low: usize, high: usize) -> bool {
        if self.forwards.holding(site, low, high - low).is_some() {
            return true;
        }
        let lazy =
            self.forwards.meets(site, low, high) || !self.fills.meeting(site, low as i128, high as i128).is_empty();
        !lazy && self.slices.get(&site).is_some_and(|b| b.written_between(low, high))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_convolutions_kernels_are_rows_of_three_levels() {
        // Input channel c, kernel row r, kernel column s at c·96 + r·32 + s·4 (each row of taps padded to 8): the
        // channels and kernel rows are one level.
        let offset = |p: u64| Some(p / 9 * 96 + p % 9 / 3 * 32 + p % 3 * 4);
        assert_eq!(row_levels(288, offset), Some(vec![(96, 32), (3, 4)]));
        let offset = |p: u64| Some(p / 9 * 128 + p % 9 / 3 * 32 + p % 3 * 4);
        assert_eq!(row_levels(288, offset), Some(vec![(32, 128), (3, 32), (3, 4)]));
        assert_eq!(row_levels(6, |p| Some(p * 4)), Some(vec![(6, 4)]));
        assert_eq!(row_levels(1, |_| Some(0)), Some(vec![]));
        let v = BView { at: 8, rows: vec![(2, 96), (3, 4)], col: 3072 };
        assert_eq!(v.row_offsets(), vec![0, 4, 8, 96, 100, 104]);
        assert_eq!(v.span(2), 96 + 8 + 3072 + 4);
    }

    #[test]
    fn levels_stepping_over_the_next_merge() {
        // In HBM a chunk of 32 channels' 3 × 3 taps lies at one stride; single rows go.
        assert_eq!(merged(&[(32, 36), (3, 12), (3, 4)]), vec![(288, 4)]);
        assert_eq!(merged(&[(32, 128), (1, 64), (3, 32), (3, 4)]), vec![(32, 128), (3, 32), (3, 4)]);
        assert_eq!(merged(&[(2, 96), (3, 32), (3, 4)]), vec![(6, 32), (3, 4)]);
        assert_eq!(merged(&[(1, 8)]), vec![]);
    }
}
