//! Slices of one `npu.matmul` that read their `A` inside fills of one content ([`super::lazy_fill`]: a
//! convolution's window, zeroed and overlaid by the input's rows, broadcast to every slice of a block of pixels)
//! multiplied as one GEMM. The window is built once, outside data memory; `A` is gathered out of it once (at every
//! tap's offset: an im2col); the slices' `B`s (each a block of output channels, through their TRF loads,
//! [`super::trf_forward`]) are set side by side; and each slice's block of the product is copied into its
//! accumulator when something touches them (the product is deferred, [`super::deferred`]). The values are each slice's own GEMM's, but for rounding, as for [`super::stacked`]: the GEMM
//! library sums a float's `k` terms in an order that depends on the shape.

use super::deferred::{Source, Term};
use super::forward::Through;
use super::lazy_fill::Fill;
use super::matmul::a_order;
use super::memory::Bytes;
use super::parallel::min_len;
use super::state::{contiguous_start, gather_into, Memories};
use super::trf_forward::{b_in_hbm, b_placed, BView, Copied};
use crate::dialects::npu::access::AccessPattern;
use crate::dialects::npu::ops::instruction::Site;
use crate::dialects::npu::ops::matmul::Matmul;
use crate::dialects::npu::ops::onchip::Space;
use crate::machine::ElemType;
use foldhash::{HashMap, HashMapExt, HashSet};
use rayon::prelude::*;

/// Slices whose `A` lies in fills of equal content, from byte `at` of their data memories.
#[derive(Debug)]
pub struct Group {
    /// The fills' first byte.
    pub at: usize,
    /// The slices, in order.
    pub slices: Vec<u64>,
    /// Where each slice's `B` lies in HBM: the buffer and the view there ([`b_in_hbm`]).
    pub bs: Vec<(u32, BView)>,
}

/// The groups of `mm`'s slices (whose `B` has view `v`): slices whose `A` lies inside a fill, by the fill's
/// place and content. Only `f32` matmuls writing `C` as one run, with `B` in HBM; a slice adding to an accumulator
/// not all written is left out (its own GEMM reports it).
pub fn groups(mm: &Matmul, mem: &Memories, v: &BView) -> Vec<Group> {
    let (Some((low, high)), Some(c)) = (mm.a.pattern.range(), contiguous_start(&mm.c.pattern)) else { return vec![] };
    if mm.from != ElemType::F32 || mem.fills.is_empty() {
        return vec![];
    }
    let through = Through { hbm: &mem.hbm, forwards: &mem.forwards };
    let mut by: HashMap<(usize, &Fill), usize> = HashMap::new();
    let mut groups: Vec<Group> = Vec::new();
    for slice in mm.slices.first..mm.slices.end {
        let dm = mm.slices.site(Space::Dm, slice);
        let Some(at) = mem.fills.holding(dm, low as usize, high as usize) else { continue };
        let Some(b) = b_in_hbm(v, mm.n as usize, dm, through) else { continue };
        if !mem.accumulator_ready(mm, slice, c) {
            continue;
        }
        let fill = mem.fills.get(dm, at).expect("a fill");
        let g = *by.entry((at, fill)).or_insert_with(|| {
            groups.push(Group { at, slices: vec![], bs: vec![] });
            groups.len() - 1
        });
        groups[g].slices.push(slice);
        groups[g].bs.push(b);
    }
    groups
}

/// The fills the groups' `A`s lie in (by memory and first byte), which the matmul reads as they are.
pub fn kept(mm: &Matmul, groups: &[Group]) -> HashSet<(Site, usize)> {
    groups.iter().flat_map(|g| g.slices.iter().map(|&s| (mm.slices.site(Space::Dm, s), g.at))).collect()
}

/// Runs matmul `mm` (its `B`s copied out in `copies` where they must be) on the groups: those whose slices read
/// the same `B`s in the same order (a convolution's blocks of pixels, each over every block of output channels) as
/// one product, their `A`s stacked, deferred until something touches the accumulators ([`super::deferred`]); a
/// product the matmul adds into takes its `A` and `B` as a new term instead ([`Memories::defer`]).
pub fn run_groups(mm: &Matmul, mem: &mut Memories, groups: &[Group], copies: &Copied) {
    let c = contiguous_start(&mm.c.pattern).expect("grouped with C in one run");
    for gs in sharing_b(groups) {
        let (a, strides) = stacked_a(mm, &gs, mem);
        let b = Source::Held(side_by_side(mm, gs[0], mem, copies), (mm.n as usize * gs[0].slices.len(), 1));
        let term = Term { k: mm.k as usize, a: Source::Held(a, strides), b };
        let slices: Vec<&[u64]> = gs.iter().map(|g| g.slices.as_slice()).collect();
        mem.defer(mm, c, &slices, term);
    }
}

/// The products the groups make (their sets sharing `B`), each as its groups' slices.
pub fn units(groups: &[Group]) -> Vec<Vec<&[u64]>> {
    sharing_b(groups).iter().map(|set| set.iter().map(|g| g.slices.as_slice()).collect()).collect()
}

/// The groups in sets whose slices read the same `B`s (by buffer and view in HBM) in the same order.
fn sharing_b(groups: &[Group]) -> Vec<Vec<&Group>> {
    let mut by: HashMap<&[(u32, BView)], usize> = HashMap::new();
    let mut sets: Vec<Vec<&Group>> = Vec::new();
    for g in groups {
        let set = *by.entry(&g.bs).or_insert_with(|| {
            sets.push(vec![]);
            sets.len() - 1
        });
        sets[set].push(g);
    }
    sets
}

/// The `B`s of group `g`'s slices side by side (`k` rows of `n` columns per slice).
fn side_by_side(mm: &Matmul, g: &Group, mem: &Memories, copies: &Copied) -> Vec<f32> {
    let (k, n) = (mm.k as usize, mm.n as usize);
    let columns = n * g.slices.len();
    let mut b = vec![0f32; k * columns];
    for (i, placed) in g.bs.iter().enumerate() {
        let (bi, (rs, cs)) = b_placed(placed, n, &mem.hbm, copies);
        for (p, row) in b.chunks_exact_mut(columns).enumerate() {
            let to = &mut row[i * n..(i + 1) * n];
            let first = p as isize * rs;
            match cs {
                1 => to.copy_from_slice(&bi[first as usize..first as usize + n]),
                _ => to.iter_mut().enumerate().for_each(|(j, e)| *e = bi[(first + j as isize * cs) as usize]),
            }
        }
    }
    b
}

/// The groups' `A`s (`m` × `k` `f32`s each, gathered out of each group's window, built once outside data memory)
/// stacked, and the strides of the rows and columns: column-major (column `p` holds every group's column `p`, in
/// group order) when `A` is read down its columns ([`columns`]), else as the gather is fastest.
fn stacked_a(mm: &Matmul, gs: &[&Group], mem: &Memories) -> (Vec<f32>, (usize, usize)) {
    if let Some(stacked) = columns(mm, gs, mem) {
        return (stacked, (1, mm.m as usize * gs.len()));
    }
    let (m, k) = (mm.m as usize, mm.k as usize);
    let jobs = min_len(gs.len(), (m * k * 4 * gs.len()) as u64);
    let each: Vec<(Vec<f32>, (usize, usize))> = gs.par_iter().with_min_len(jobs).map(|g| a_of(mm, g, mem)).collect();
    if each.len() == 1 || each[0].1 == (k, 1) {
        let strides = each[0].1;
        return (each.into_iter().flat_map(|(a, _)| a).collect(), strides);
    }
    // Column-major: each group's columns below the last group's.
    let rows = m * gs.len();
    let mut stacked = vec![0f32; rows * k];
    for (g, (a, _)) in each.iter().enumerate() {
        for (p, column) in a.chunks_exact(m).enumerate() {
            stacked[p * rows + g * m..p * rows + (g + 1) * m].copy_from_slice(column);
        }
    }
    (stacked, (1, rows))
}

/// The groups' `A`s stacked column-major, each packet of each window copied straight into its place (a piece per
/// column it meets), when `A` is read fastest down its columns ([`a_order`]: a convolution's window, runs of a row's
/// pixels at every channel and tap). The packets' places in a window are found once for all the groups.
fn columns(mm: &Matmul, gs: &[&Group], mem: &Memories) -> Option<Vec<f32>> {
    let (m, k) = (mm.m as usize, mm.k as usize);
    let (pattern, strides) = a_order(&mm.a.pattern, m, k, 4);
    let pattern = pattern.coalesced();
    let per = pattern.packet as usize / 4;
    if strides != (1, m) || per == 0 || !pattern.packet.is_multiple_of(4) {
        return None;
    }
    let offsets: Vec<usize> =
        pattern.offsets().map(|o| usize::try_from(pattern.base as i128 + o)).collect::<Result<_, _>>().ok()?;
    let rows = m * gs.len();
    let mut stacked = vec![0f32; rows * k];
    for (g, group) in gs.iter().enumerate() {
        let dm = mm.slices.site(Space::Dm, group.slices[0]);
        let window = mem.fills.get(dm, group.at).expect("a fill").bytes(group.at, &mem.hbm);
        for (j, &at) in offsets.iter().enumerate() {
            // The packet's elements, a piece per column it meets.
            let (mut q, mut from) = (j * per, at - group.at);
            while q < (j + 1) * per {
                let (column, row) = (q / m, q % m);
                let take = (m - row).min((j + 1) * per - q);
                let to = &mut stacked[column * rows + g * m + row..][..take];
                bytemuck::cast_slice_mut::<f32, u8>(to).copy_from_slice(&window[from..][..take * 4]);
                (q, from) = (q + take, from + take * 4);
            }
        }
    }
    Some(stacked)
}

/// Group `g`'s `A` (`m` × `k` `f32`s) gathered out of its window (built once, outside data memory), and the strides
/// of its rows and columns: row-major or column-major, as the gather is fastest.
fn a_of(mm: &Matmul, g: &Group, mem: &Memories) -> (Vec<f32>, (usize, usize)) {
    let (m, k) = (mm.m as usize, mm.k as usize);
    let dm = mm.slices.site(Space::Dm, g.slices[0]);
    let window = Bytes::full(mem.fills.get(dm, g.at).expect("a fill").bytes(g.at, &mem.hbm));
    let inside = AccessPattern { base: mm.a.pattern.base - g.at as u64, ..mm.a.pattern.clone() };
    let (pattern, strides) = a_order(&inside, m, k, 4);
    let mut a = vec![0f32; m * k];
    gather_into(&window, &pattern, bytemuck::cast_slice_mut(&mut a)).expect("a window written whole");
    (a, strides)
}
