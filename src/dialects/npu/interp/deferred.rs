//! Products of grouped matmuls ([`super::shared_a`]) kept until something touches their accumulators. A lowered
//! convolution runs a matmul per chunk of input channels, each adding into the accumulators the last one wrote;
//! multiplied one by one, every chunk is a GEMM and a copy of the product into (and out of) 256 accumulators. So
//! a grouped matmul's product is *deferred*: its `A` and `B` are kept, and a matmul that adds into the same
//! accumulators over the same groups joins it with its own, so the chunks' GEMMs add into one product, written
//! into the accumulators once. Any other instruction touching one of the accumulators carries the product out
//! first; the values are the chunks' own but for rounding (the GEMM library sums `k` in an order that depends on
//! the shape), as for [`super::stacked`].

use super::parallel::min_len;
use super::state::Memories;
use crate::array::gemm::Gemm;
use crate::dialects::npu::ops::instruction::{Access, Site};
use crate::dialects::npu::ops::matmul::Matmul;
use crate::dialects::npu::ops::onchip::{Slices, Space};
use foldhash::HashSet;
use rayon::prelude::*;

/// A grouped product not carried out yet: `C` (from byte `c` of each slice's accumulator, `m` × `n`) is `base`
/// plus each term's `A · B`, `A` the groups' stacked rows (`m` per group) by the term's `k`, `B` `k` by the
/// slices' blocks side by side (`n` columns per slice of a group).
pub struct Deferred {
    slices: Slices,
    /// The slices of each group, groups in the order of `A`'s row blocks.
    groups: Vec<Vec<u64>>,
    /// Their accumulators.
    accs: HashSet<Site>,
    c: usize,
    m: usize,
    n: usize,
    terms: Vec<Term>,
    /// The accumulators before the first matmul, when it added to them (row-major, `rows` by `columns`).
    base: Option<Vec<f32>>,
}

/// One matmul's `A · B`: `A` (`rows` by `k`) with the strides of its rows and columns, `B` row-major (`k` by
/// `columns`).
pub struct Term {
    /// `k`.
    pub k: usize,
    /// `A` and its strides.
    pub a: (Vec<f32>, (usize, usize)),
    /// `B`.
    pub b: Vec<f32>,
}

impl Deferred {
    /// The product of matmul `mm` over `groups` (their slices), `term`, added to `base` when given.
    pub fn new(mm: &Matmul, c: usize, groups: Vec<Vec<u64>>, term: Term, base: Option<Vec<f32>>) -> Deferred {
        let accs = groups.iter().flatten().map(|&s| mm.slices.site(Space::Acc, s)).collect();
        let (m, n) = (mm.m as usize, mm.n as usize);
        Deferred { slices: mm.slices, groups, accs, c, m, n, terms: vec![term], base }
    }

    /// Whether matmul `mm`, over `groups` (by their slices) and writing `C` from byte `c`, adds into this product.
    pub fn joins(&self, mm: &Matmul, c: usize, groups: &[&[u64]]) -> bool {
        mm.accumulate
            && (mm.slices, c, mm.m as usize, mm.n as usize) == (self.slices, self.c, self.m, self.n)
            && groups.len() == self.groups.len()
            && groups.iter().zip(&self.groups).all(|(g, h)| *g == h.as_slice())
    }

    /// Adds the term of a matmul that [`Deferred::joins`] it.
    pub fn join(&mut self, term: Term) {
        self.terms.push(term);
    }

    /// The rows and columns of the product.
    fn shape(&self) -> (usize, usize) {
        (self.m * self.groups.len(), self.n * self.groups[0].len())
    }

    /// A GEMM per term into one product, copied into each slice's accumulator.
    fn carry_out(self, mem: &mut Memories) {
        let (rows, columns) = self.shape();
        let mut accumulate = self.base.is_some();
        let mut product = self.base.unwrap_or_else(|| vec![0f32; rows * columns]);
        for Term { k, a: (a, a_strides), b } in &self.terms {
            f32::gemm_strided(rows, *k, columns, a, *a_strides, b, (columns as isize, 1), &mut product, accumulate);
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
    /// Whether a deferred product will write the accumulator at `site`.
    pub fn deferred_into(&self, site: Site) -> bool {
        self.deferred.iter().any(|d| d.accs.contains(&site))
    }

    /// Carries out the deferred products whose accumulators `accesses` touch.
    pub fn settle_deferred(&mut self, accesses: &[Access]) {
        while let Some(i) = self.deferred.iter().position(|d| accesses.iter().any(|a| d.accs.contains(&a.site))) {
            let d = self.deferred.swap_remove(i);
            d.carry_out(self);
        }
    }
}
