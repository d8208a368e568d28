//! Slices of one `npu.matmul` multiplied as one GEMM. A lowered contraction gives each slice a tile of a few dozen
//! rows, and a CPU multiplies such small tiles at a fraction of its rate. Where the slices' `A`s are row blocks of
//! one matrix in HBM (through their DMAs' forwards) and their `B`s column blocks of another (through the load that
//! filled their TRF and the DMA behind it, [`super::trf_forward`]), each next to the last, a grid of slices computes
//! the blocks of one product: one GEMM over the stacked rows and the side-by-side columns computes them all, and
//! each slice's block is copied into its accumulator (when something touches them: the product is deferred,
//! [`super::deferred`], `A` and `B` read in HBM in place). The values are each slice's own GEMM's, but for rounding: the
//! GEMM library picks its kernel (and with it the order a small product's `k` terms are summed in) by the shape,
//! so a float element may differ in its last bit (`tests/npu_forwarding.rs` checks on small integers, whose sums
//! are exact).

use super::deferred::{Source, Term};
use super::forward::Through;
use super::state::{contiguous_start, Memories};
use super::trf_forward::{b_in_hbm, BView};
use crate::dialects::npu::ops::matmul::Matmul;
use crate::dialects::npu::ops::onchip::Space;
use crate::machine::ElemType;
use std::collections::BTreeMap;

/// What slices must share to stack: `A`'s HBM buffer and byte stride of rows, then `B`'s buffer, the levels of its
/// rows ([`BView`]) and its byte stride of columns.
type Shared = (u32, usize, u32, Vec<(usize, usize)>, usize);

/// Slices whose products are the blocks of one product: `rows` row blocks of `A` (`m` rows each, consecutive in HBM
/// from byte `a`) by `columns` column blocks of `B` (`n` columns each, from byte `b`); the slices row-major.
pub struct Stack {
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

/// Runs matmul `mm` on each of its `stacks` ([`stacks`]) as one product, deferred until something touches the
/// accumulators ([`super::deferred`]); the slices left for their own GEMMs, in order.
pub fn run_stacked(mm: &Matmul, mem: &mut Memories, stacks: Vec<Stack>) -> Vec<u64> {
    let all: Vec<u64> = (mm.slices.first..mm.slices.end).collect();
    let Some(c) = contiguous_start(&mm.c.pattern) else { return all };
    let mut stacked = vec![false; all.len()];
    for stack in stacks {
        stack.slices.iter().for_each(|&slice| stacked[(slice - mm.slices.first) as usize] = true);
        let term = term(mm, &stack);
        mem.defer(mm, c, &stack.row_blocks(), term);
    }
    all.into_iter().filter(|s| !stacked[(s - mm.slices.first) as usize]).collect()
}

/// The stacks of two or more of `mm`'s slices (whose `B` has view `v`): none unless `mm` multiplies `f32` into `C`
/// in one run.
pub fn stacks(mm: &Matmul, mem: &Memories, v: &BView) -> Vec<Stack> {
    match contiguous_start(&mm.c.pattern).filter(|_| mm.from == ElemType::F32) {
        Some(c) => stacks_at(mm, mem, v, c),
        None => vec![],
    }
}

/// The products the stacks make, each as its row blocks' slices.
pub fn units(stacks: &[Stack]) -> Vec<Vec<&[u64]>> {
    stacks.iter().map(Stack::row_blocks).collect()
}

impl Stack {
    /// Its slices by row block of the product.
    fn row_blocks(&self) -> Vec<&[u64]> {
        self.slices.chunks(self.columns).collect()
    }
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
        if !mem.accumulator_ready(mm, slice, c) {
            continue;
        }
        let strides = b.rows.iter().map(|r| r.1).chain([b.at, b.col, a, stride]);
        if strides.into_iter().all(|x| x.is_multiple_of(4)) {
            groups.entry((ab, stride, bb, b.rows, b.col)).or_default().entry(b.at).or_default().push((a, slice));
        }
    }
    groups
}

/// The stacks of two or more of `mm`'s slices ([`placed`], `C` from byte `c`): per column block of `B`, runs of
/// consecutive row blocks of `A`; then equal runs of rows in runs of consecutive column blocks.
fn stacks_at(mm: &Matmul, mem: &Memories, v: &BView, c: usize) -> Vec<Stack> {
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

/// One stack's product as a term: its slices' `A` row blocks stacked (in HBM in place) times its `B` column blocks
/// side by side (in HBM in place).
fn term(mm: &Matmul, stack: &Stack) -> Term {
    let (m, k) = (mm.m as usize, mm.k as usize);
    let (ab, stride, bb, b_rows, col) = &stack.shared;
    let rows = m * stack.slices.len() / stack.columns;
    let a = BView { at: stack.a, rows: vec![(rows, *stride)], col: 4 };
    let b = BView { at: stack.b, rows: b_rows.clone(), col: *col };
    Term { k, a: Source::Hbm(*ab, a), b: Source::Hbm(*bb, b) }
}
