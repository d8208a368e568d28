//! Slices of one `npu.matmul` multiplied as one GEMM. A lowered contraction gives each slice a tile of a few dozen
//! rows, and a CPU multiplies such small tiles at a fraction of its rate. Where the slices' `A`s are row blocks of
//! one matrix in HBM (through their DMAs' forwards) and their `B`s column blocks of another (through the load that
//! filled their TRF and the DMA behind it, [`super::trf_forward`]), each next to the last, a grid of slices computes
//! the blocks of one product: one GEMM over the stacked rows and the side-by-side columns computes them all, and
//! each slice's block is copied into its accumulator. The values are each slice's own GEMM's, but for rounding: the
//! GEMM library picks its kernel (and with it the order a small product's `k` terms are summed in) by the shape,
//! so a float element may differ in its last bit (`tests/npu_forwarding.rs` checks on small integers, whose sums
//! are exact).

use super::forward::Through;
use super::memory::Bytes;
use super::state::{contiguous_start, Memories};
use super::trf_forward::{b_in_hbm, floats, operand, BView};
use crate::array::gemm::Gemm;
use crate::dialects::npu::ops::matmul::Matmul;
use crate::dialects::npu::ops::onchip::Space;
use crate::machine::ElemType;
use rayon::prelude::*;
use std::collections::BTreeMap;

/// What slices must share to stack: `A`'s HBM buffer and byte stride of rows, then `B`'s buffer, the levels of its
/// rows ([`BView`]) and its byte stride of columns.
type Shared = (u32, usize, u32, Vec<(usize, usize)>, usize);

/// Slices whose products are the blocks of one product: `rows` row blocks of `A` (`m` rows each, consecutive in HBM
/// from byte `a`) by `columns` column blocks of `B` (`n` columns each, from byte `b`); the slices row-major.
struct Stack {
    shared: Shared,
    a: usize,
    b: usize,
    columns: usize,
    slices: Vec<u64>,
}

/// A column block of `B` (its first byte) and the slices meeting it, in the order of their rows.
type ColumnBlock = (usize, Vec<u64>);

/// Per first byte of `B`, the first bytes of `A` and their slices, by what they share.
type Placed = BTreeMap<Shared, BTreeMap<usize, Vec<(usize, u64)>>>;

/// Runs matmul `mm` (whose `B` has view `v`) on each stack of two or more of its slices as one GEMM; the slices left
/// for their own GEMMs, in order.
pub fn run_stacked(mm: &Matmul, mem: &mut Memories, v: &BView) -> Vec<u64> {
    let all: Vec<u64> = (mm.slices.first..mm.slices.end).collect();
    let Some(c) = contiguous_start(&mm.c.pattern).filter(|_| mm.from == ElemType::F32) else { return all };
    let stacks = stacks(mm, mem, v, c);
    if stacks.is_empty() {
        return all;
    }
    let mut taken: Vec<(Stack, Vec<Bytes>)> = stacks
        .into_iter()
        .map(|s| {
            let accs = s.slices.iter().map(|&slice| mem.take(mm.slices.site(Space::Acc, slice))).collect();
            (s, accs)
        })
        .collect();
    let hbm = &mem.hbm;
    taken.par_iter_mut().for_each(|(stack, accs)| multiply(mm, stack, accs, hbm, c));
    let mut stacked = vec![false; all.len()];
    for (stack, accs) in taken {
        for (&slice, acc) in stack.slices.iter().zip(accs) {
            stacked[(slice - mm.slices.first) as usize] = true;
            mem.put(mm.slices.site(Space::Acc, slice), acc);
        }
    }
    all.into_iter().filter(|s| !stacked[(s - mm.slices.first) as usize]).collect()
}

/// Where each slice's `A` row block and `B` column block lie, by what they share: per first byte of `B`, the first
/// bytes of `A` and their slices. Only slices whose `A` and `B` lie in HBM as `f32`; a slice whose accumulator `C`
/// (at byte `c`) it adds to was not all written is left out (its own GEMM reports it).
fn placed(mm: &Matmul, mem: &Memories, v: &BView, c: usize) -> Placed {
    let (m, k, n) = (mm.m as usize, mm.k as usize, mm.n as usize);
    let through = Through { hbm: &mem.hbm, forwards: &mem.forwards };
    let mut groups = Placed::new();
    for slice in mm.slices.first..mm.slices.end {
        let dm = mm.slices.site(Space::Dm, slice);
        let Some((ab, a, stride)) = through.rows_at(dm, &mm.a.pattern, m, k * 4) else { continue };
        let Some((bb, b)) = b_in_hbm(v, n, dm, through) else { continue };
        let acc = mem.slices.get(&mm.slices.site(Space::Acc, slice));
        if mm.accumulate && !acc.is_some_and(|b| b.written_between(c, c + m * n * 4)) {
            continue;
        }
        let strides = b.rows.iter().map(|r| r.1).chain([b.at, b.col, a, stride]);
        if strides.into_iter().all(|x| x.is_multiple_of(4)) {
            groups.entry((ab, stride, bb, b.rows, b.col)).or_default().entry(b.at).or_default().push((a, slice));
        }
    }
    groups
}

/// The stacks of two or more of `mm`'s slices ([`placed`]): per column block of `B`, runs of consecutive row blocks of
/// `A`; then equal runs of rows in runs of consecutive column blocks.
fn stacks(mm: &Matmul, mem: &Memories, v: &BView, c: usize) -> Vec<Stack> {
    let (m, n) = (mm.m as usize, mm.n as usize);
    let mut stacks = Vec::new();
    for (shared, columns) in placed(mm, mem, v, c) {
        // Runs of `A`'s row blocks by their first byte and length: each such run meets these column blocks of `B`
        // (their first bytes), with these slices (in the order of their rows).
        let mut by_span: BTreeMap<(usize, usize), Vec<ColumnBlock>> = BTreeMap::new();
        for (b, mut rows) in columns {
            rows.sort_unstable();
            for run in runs(&rows, |&(a, _)| a, m * shared.1) {
                let slices = run.iter().map(|&(_, s)| s).collect();
                by_span.entry((run[0].0, run.len())).or_default().push((b, slices));
            }
        }
        for ((a, rows), mut blocks) in by_span {
            blocks.sort_unstable();
            for run in runs(&blocks, |(b, _)| *b, n * shared.4) {
                if rows * run.len() > 1 {
                    let slices = (0..rows).flat_map(|r| run.iter().map(move |(_, s)| s[r])).collect();
                    stacks.push(Stack { shared: shared.clone(), a, b: run[0].0, columns: run.len(), slices });
                }
            }
        }
    }
    stacks
}

/// `items` (sorted by `at`) cut into runs whose `at` steps by `step` from one to the next.
fn runs<T>(items: &[T], at: impl Fn(&T) -> usize, step: usize) -> Vec<&[T]> {
    let mut out = Vec::new();
    let mut start = 0;
    for end in 1..=items.len() {
        if end == items.len() || at(&items[end]) != at(&items[end - 1]) + step {
            out.push(&items[start..end]);
            start = end;
        }
    }
    out
}

/// One stack's GEMM: its slices' `A` row blocks stacked (in HBM in place) times its `B` column blocks side by side
/// (in HBM in place), added to (or written over) the slices' accumulators `accs` at byte `c`.
fn multiply(mm: &Matmul, stack: &Stack, accs: &mut [Bytes], hbm: &[Bytes], c: usize) {
    let (m, k, n) = (mm.m as usize, mm.k as usize, mm.n as usize);
    let (ab, stride, bb, b_rows, col) = &stack.shared;
    let (rows, columns) = (m * stack.slices.len() / stack.columns, n * stack.columns);
    let a = floats(hbm[*ab as usize].unchecked_from(0), stack.a, *stride, 4).expect("aligned").0;
    let b_view = BView { at: stack.b, rows: b_rows.clone(), col: *col };
    let (b, b_strides) = operand(hbm[*bb as usize].unchecked_from(0), &b_view, columns);
    let mut product = vec![0f32; rows * columns];
    // Slice `i`'s block starts at row `i / columns · m`, column `i % columns · n`; its rows are `n` floats apart
    // from `columns` there.
    let block = |i: usize| (i / stack.columns * m * columns + i % stack.columns * n, columns);
    if mm.accumulate {
        for (i, acc) in accs.iter().enumerate() {
            let (first, pitch) = block(i);
            let from: &[u8] = &acc.unchecked_from(c)[..m * n * 4];
            for (r, bytes) in from.chunks_exact(n * 4).enumerate() {
                let at = first + r * pitch;
                bytemuck::cast_slice_mut::<f32, u8>(&mut product[at..at + n]).copy_from_slice(bytes);
            }
        }
    }
    f32::gemm_strided(rows, k, columns, &a, (stride / 4, 1), &b, b_strides, &mut product, mm.accumulate);
    for (i, acc) in accs.iter_mut().enumerate() {
        let (first, pitch) = block(i);
        let to = acc.write_in_place(c, m * n * 4);
        for (r, bytes) in to.chunks_exact_mut(n * 4).enumerate() {
            bytes.copy_from_slice(bytemuck::cast_slice(&product[first + r * pitch..first + r * pitch + n]));
        }
    }
}
