//! Products of matmuls run as one GEMM ([`super::stacked`], [`super::shared_a`]) kept until something touches
//! their accumulators. A lowered contraction or convolution runs a matmul per chunk of `k`, each adding into the
//! accumulators the last one wrote; multiplied one by one, every chunk is a GEMM and a copy of the product into
//! (and out of) every slice's accumulator. So such a product is *deferred*: its `A` and `B` are kept (as held
//! elements, or as views of HBM where the stacked slices read them in place), and a matmul that adds into the
//! same accumulators over the same blocks joins it with its own term. When anything else touches one of the
//! accumulators, or writes an HBM buffer a term reads, the product is carried out: terms whose `A` and `B` are
//! views continuing each other along `k` (the chunks of one matrix) merge into one, each term is a GEMM into one
//! product, and the product is copied into each accumulator once; terms that hold their operands go to a thread of
//! the product's own as they come ([`super::background`]), so that their GEMMs run while the interpreter goes on.
//! The values are the chunks' own but for rounding (the GEMM library sums `k` in an order that depends on the
//! shape), as for [`super::stacked`].

use super::background::{Background, BACKGROUND_WORK, MAX_BACKGROUND_PRODUCTS};
use super::memory::Bytes;
use super::parallel::min_len;
use super::state::{contiguous_start, Memories};
use super::trf_forward::{operand, BView};
use crate::array::gemm::Gemm;
use crate::dialects::npu::ops::instruction::{Access, Site};
use crate::dialects::npu::ops::matmul::Matmul;
use crate::dialects::npu::ops::onchip::{Slices, Space};
use foldhash::HashSet;
use rayon::prelude::*;
use std::borrow::Cow;

/// A product not carried out yet: `C` (from byte `c` of each slice's accumulator, `m` × `n`) is `base` plus each
/// term's `A · B`, `A` the groups' stacked rows (`m` per group; a group is a block of rows of the product) by the
/// term's `k`, `B` `k` by the slices' blocks side by side (`n` columns per slice of a group).
pub struct Deferred {
    slices: Slices,
    /// The slices of each group, groups in the order of `A`'s row blocks.
    groups: Vec<Vec<u64>>,
    /// Their accumulators.
    accs: HashSet<Site>,
    c: usize,
    m: usize,
    n: usize,
    /// The terms the interpreter's thread adds when the product is carried out, after those of `background`.
    terms: Vec<Term>,
    /// The accumulators before the first matmul, when it added to them (row-major, `rows` by `columns`), unless
    /// `background` took them.
    base: Option<Vec<f32>>,
    /// The thread adding the first terms, when they hold their operands and are worth one.
    background: Option<Background>,
}

/// One matmul's `A · B`: `A` `rows` by `k`, `B` `k` by `columns`.
pub struct Term {
    /// `k`.
    pub k: usize,
    /// `A`.
    pub a: Source,
    /// `B`.
    pub b: Source,
}

/// Where a term's matrix lies.
pub enum Source {
    /// Its elements, with the strides of its rows and columns.
    Held(Vec<f32>, (usize, usize)),
    /// A view of the HBM buffer of a kernel argument (its rows at the view's levels, its columns at its column
    /// stride), which must not be written before the product is carried out.
    Hbm(u32, BView),
}

impl Source {
    /// The matrix (`columns` wide) as `f32`s and the strides of its rows and columns.
    fn resolve<'a>(&'a self, columns: usize, hbm: &'a [Bytes]) -> (Cow<'a, [f32]>, (isize, isize)) {
        match self {
            Source::Held(v, (r, c)) => (Cow::Borrowed(v), (*r as isize, *c as isize)),
            Source::Hbm(buffer, view) => operand(hbm[*buffer as usize].unchecked_from(0), view, columns),
        }
    }

    /// The one row stride and the column stride of a view of HBM buffer `buffer` with one level of rows.
    fn rows_in(&self, buffer: u32) -> Option<(&BView, usize)> {
        match self {
            Source::Hbm(b, view) if *b == buffer => Some((view, view.row()?)),
            _ => None,
        }
    }
}

impl Term {
    /// `next` appended along `k` when both are views of the same buffers continuing each other: `next`'s `A` starts
    /// `k` columns after this one's, its `B` `k` rows below; whether it was.
    fn absorb(&mut self, next: &Term) -> bool {
        let (Source::Hbm(ab, a), Source::Hbm(bb, b)) = (&self.a, &self.b) else { return false };
        let (Some((na, _)), Some((nb, _))) = (next.a.rows_in(*ab), next.b.rows_in(*bb)) else { return false };
        let (Some(b_row), [(count, _)]) = (b.row(), b.rows.as_slice()) else { return false };
        let follows = na.at == a.at + self.k * a.col
            && (na.rows.as_slice(), na.col) == (a.rows.as_slice(), a.col)
            && nb.at == b.at + self.k * b_row
            && nb.col == b.col
            && nb.row() == Some(b_row)
            && *count == self.k
            && nb.rows.len() == 1;
        if follows {
            let k = self.k + next.k;
            let Source::Hbm(_, b) = &mut self.b else { unreachable!("a view") };
            b.rows = vec![(k, b_row)];
            self.k = k;
        }
        follows
    }

    /// `product` (`rows` × `columns`, row-major) plus (`accumulate`) or set to `A · B`, `hbm` the HBM buffers a
    /// view reads.
    pub fn add_into(&self, rows: usize, columns: usize, hbm: &[Bytes], product: &mut [f32], accumulate: bool) {
        let ((a, (ra, ca)), (b, b_strides)) = (self.a.resolve(self.k, hbm), self.b.resolve(columns, hbm));
        f32::gemm_strided(rows, self.k, columns, &a, (ra as usize, ca as usize), &b, b_strides, product, accumulate);
    }

    /// Whether it holds both its operands.
    fn held(&self) -> bool {
        matches!((&self.a, &self.b), (Source::Held(..), Source::Held(..)))
    }

    /// Whether it reads HBM buffer `buffer`.
    fn reads(&self, buffer: u32) -> bool {
        [&self.a, &self.b].iter().any(|s| matches!(s, Source::Hbm(b, _) if *b == buffer))
    }
}

impl Deferred {
    /// The product of matmul `mm` over `groups` (their slices), with no term yet, added to `base` when given.
    pub fn new(mm: &Matmul, c: usize, groups: Vec<Vec<u64>>, base: Option<Vec<f32>>) -> Deferred {
        let accs = groups.iter().flatten().map(|&s| mm.slices.site(Space::Acc, s)).collect();
        let (m, n) = (mm.m as usize, mm.n as usize);
        Deferred { slices: mm.slices, groups, accs, c, m, n, terms: vec![], base, background: None }
    }

    /// Whether matmul `mm`, over `groups` (by their slices) and writing `C` from byte `c`, adds into this product.
    pub fn joins(&self, mm: &Matmul, c: usize, groups: &[&[u64]]) -> bool {
        mm.accumulate
            && (mm.slices, c, mm.m as usize, mm.n as usize) == (self.slices, self.c, self.m, self.n)
            && groups.len() == self.groups.len()
            && groups.iter().zip(&self.groups).all(|(g, h)| *g == h.as_slice())
    }

    /// Adds a term (of a matmul that [`Deferred::joins`] it, or the first): to the thread adding the terms before
    /// it, or starting one when it is the first and `room` allows one more ([`Background`]), when it holds its
    /// operands and all before it went there; else into the last term when it continues it along `k`, or after it.
    fn push(&mut self, term: Term, room: bool) {
        if self.terms.is_empty() && term.held() {
            let (rows, columns) = self.shape();
            let worth = (rows * term.k * columns) as u64 >= BACKGROUND_WORK;
            if self.background.is_none() && room && worth {
                match Background::start(rows, columns, self.base.take()) {
                    Ok(thread) => self.background = Some(thread),
                    Err(base) => self.base = base,
                }
            }
            if let Some(thread) = &self.background {
                return thread.add(term);
            }
        }
        if !self.terms.last_mut().is_some_and(|last| last.absorb(&term)) {
            self.terms.push(term);
        }
    }

    /// The rows and columns of the product.
    fn shape(&self) -> (usize, usize) {
        (self.m * self.groups.len(), self.n * self.groups[0].len())
    }

    /// A GEMM per term into one product, copied into each slice's accumulator.
    fn carry_out(mut self, mem: &mut Memories) {
        let (rows, columns) = self.shape();
        let (mut product, mut accumulate) = match (self.background.take(), self.base.take()) {
            (Some(thread), _) => (thread.finish(), true),
            (None, Some(base)) => (base, true),
            (None, None) => (vec![0f32; rows * columns], false),
        };
        for term in &self.terms {
            term.add_into(rows, columns, &mem.hbm, &mut product, accumulate);
            accumulate = true;
        }
        let (m, n, c) = (self.m, self.n, self.c);
        let site = |s: u64| self.slices.site(Space::Acc, s);
        let mut accs: Vec<Vec<_>> =
            self.groups.iter().map(|g| g.iter().map(|&s| mem.take(site(s))).collect()).collect();
        // Group `g`'s rows of the product, from `g · m`; slice `i`'s block in them from column `i · n`.
        let jobs = min_len(accs.len(), (product.len() * 4) as u64);
        product.par_chunks(m * columns).zip(accs.par_iter_mut()).with_min_len(jobs).for_each(|(rows, accs)| {
            for (i, acc) in accs.iter_mut().enumerate() {
                let to = acc.write_in_place(c, m * n * 4);
                for (row, bytes) in rows.chunks_exact(columns).zip(to.chunks_exact_mut(n * 4)) {
                    bytes.copy_from_slice(bytemuck::cast_slice(&row[i * n..(i + 1) * n]));
                }
            }
        });
        for (g, accs) in self.groups.iter().zip(accs) {
            for (&s, bytes) in g.iter().zip(accs) {
                mem.put(site(s), bytes);
            }
        }
    }
}

impl Memories {
    /// Defers `term` of matmul `mm` over `groups` (their slices, writing `C` from byte `c`): joined to the product
    /// it adds into, or a new product (from the accumulators when `mm` adds to them).
    pub fn defer(&mut self, mm: &Matmul, c: usize, groups: &[&[u64]], term: Term) {
        let room = self.deferred.iter().filter(|d| d.background.is_some()).count() < MAX_BACKGROUND_PRODUCTS;
        if let Some(d) = self.deferred.iter_mut().find(|d| d.joins(mm, c, groups)) {
            return d.push(term, room);
        }
        let base = mm.accumulate.then(|| accumulators(mm, groups, self, c));
        let owned = groups.iter().map(|g| g.to_vec()).collect();
        let mut product = Deferred::new(mm, c, owned, base);
        product.push(term, room);
        self.deferred.push(product);
    }

    /// Whether matmul `mm` adds into deferred products as a whole: its slices are those of `units` (each a product's
    /// groups of slices), each of which joins a product; then the instruction leaves them deferred.
    pub fn joins_all(&self, mm: &Matmul, units: &[Vec<&[u64]>]) -> bool {
        let Some(c) = contiguous_start(&mm.c.pattern) else { return false };
        let covered: usize = units.iter().flatten().map(|g| g.len()).sum();
        covered as u64 == mm.slices.end - mm.slices.first
            && units.iter().all(|u| self.deferred.iter().any(|d| d.joins(mm, c, u)))
    }

    /// Whether matmul `mm` on `slice` may join a product (writing `C` from byte `c`): it overwrites its accumulator,
    /// or adds to one a deferred product will write, or that is written all over `C` (else its own GEMM reports
    /// the unwritten bytes).
    pub fn accumulator_ready(&self, mm: &Matmul, slice: u64, c: usize) -> bool {
        let site = mm.slices.site(Space::Acc, slice);
        let written = |b: &Bytes| b.written_between(c, c + (mm.m * mm.n * 4) as usize);
        !mm.accumulate
            || self.deferred.iter().any(|d| d.accs.contains(&site))
            || self.slices.get(&site).is_some_and(written)
    }

    /// Carries out the deferred products whose accumulators `accesses` touch, or an HBM buffer of whose they write.
    pub fn settle_deferred(&mut self, accesses: &[Access]) {
        let meets = |d: &Deferred| {
            accesses.iter().any(|a| match a.site {
                Site::Hbm(buffer) => a.write && d.terms.iter().any(|t| t.reads(buffer)),
                site => d.accs.contains(&site),
            })
        };
        while let Some(i) = self.deferred.iter().position(meets) {
            let d = self.deferred.swap_remove(i);
            d.carry_out(self);
        }
    }
}

/// The accumulators of `groups` (their slices; from byte `c`, all written) as one product: group `g`'s rows from
/// `g · m`, slice `i`'s block in them from column `i · n` (row-major).
pub fn accumulators(mm: &Matmul, groups: &[&[u64]], mem: &Memories, c: usize) -> Vec<f32> {
    let (m, n) = (mm.m as usize, mm.n as usize);
    let columns = n * groups[0].len();
    let mut product = vec![0f32; m * groups.len() * columns];
    let jobs = min_len(groups.len(), (product.len() * 4) as u64);
    product.par_chunks_mut(m * columns).zip(groups.par_iter()).with_min_len(jobs).for_each(|(rows, g)| {
        for (i, &slice) in g.iter().enumerate() {
            let from = &mem.peek(mm.slices.site(Space::Acc, slice)).unchecked_from(c)[..m * n * 4];
            for (row, bytes) in rows.chunks_exact_mut(columns).zip(from.chunks_exact(n * 4)) {
                bytemuck::cast_slice_mut::<f32, u8>(&mut row[i * n..(i + 1) * n]).copy_from_slice(bytes);
            }
        }
    });
    product
}
