//! A deferred product's GEMMs ([`super::deferred`]) carried out on a thread of their own while the interpreter
//! goes on with the instructions after the matmul (the next chunk's DMAs and window, the moves of other slices),
//! so that the product is ready, or nearly, when something touches its accumulators. Only terms the product holds
//! ([`super::deferred::Source::Held`]: they own their elements) go there; a term that reads HBM in place waits for
//! the carrying out, on the interpreter's thread, since HBM may change under a thread that does not hold it.
//!
//! The terms go to the thread in order and it adds them in that order, so the product is what the interpreter's
//! own thread would compute. A thread that cannot be started leaves the product to the interpreter's thread, and so
//! does a run on one of rayon's threads: the product's GEMM needs rayon's threads, and runs occupying all of them
//! while they wait for their products would never end.

use super::deferred::Term;
use std::sync::mpsc::{channel, Sender};
use std::thread::JoinHandle;

/// Most products carried out on threads of their own at once (each holds its operands until it is carried out).
pub const MAX_BACKGROUND_PRODUCTS: usize = 2;

/// The least work (multiply-adds) of a term for which a product goes to a thread of its own: starting the thread
/// costs tens of microseconds, and a GEMM of 2^24 multiply-adds takes about a hundred on two cores.
pub const BACKGROUND_WORK: u64 = 1 << 24;

/// A product (`rows` × `columns`, row-major) whose terms a thread of its own adds as they come.
pub struct Background {
    terms: Sender<Term>,
    product: JoinHandle<Vec<f32>>,
}

impl Background {
    /// A thread adding terms into `base` (into zeros when none), or `base` back when the thread cannot be started or
    /// the caller is one of rayon's threads.
    pub fn start(rows: usize, columns: usize, base: Option<Vec<f32>>) -> Result<Background, Option<Vec<f32>>> {
        if rayon::current_thread_index().is_some() {
            return Err(base);
        }
        let (terms, arriving) = channel::<Term>();
        let (given, base_arrives) = channel::<Option<Vec<f32>>>();
        let thread = std::thread::Builder::new().name("npu-product".into());
        let spawned = thread.spawn(move || {
            let base = base_arrives.recv().expect("the base comes first");
            let mut accumulate = base.is_some();
            let mut product = base.unwrap_or_else(|| vec![0f32; rows * columns]);
            for term in arriving {
                term.add_into(rows, columns, &[], &mut product, accumulate);
                accumulate = true;
            }
            product
        });
        let Ok(product) = spawned else { return Err(base) };
        given.send(base).expect("the thread takes its base");
        Ok(Background { terms, product })
    }

    /// Adds `term` (which holds its operands) after those before it.
    pub fn add(&self, term: Term) {
        // The thread lives until `finish` drops the sender, so it takes every term.
        self.terms.send(term).expect("the product's thread takes terms until it is finished");
    }

    /// The product with every term added, once the thread has added them.
    pub fn finish(self) -> Vec<f32> {
        drop(self.terms);
        self.product.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialects::npu::interp::deferred::Source;

    fn term(k: usize, rows: usize, columns: usize, seed: usize) -> Term {
        let held = |len: usize, salt: usize| (0..len).map(|i| ((i * 7 + salt) % 11) as f32 - 5.0).collect();
        let a = Source::Held(held(rows * k, seed), (1, rows));
        let b = Source::Held(held(k * columns, seed + 3), (columns, 1));
        Term { k, a, b }
    }

    /// The thread adds its terms in order onto the base: what the caller's own GEMMs give.
    #[test]
    fn the_thread_gives_what_the_caller_gives() {
        let (rows, columns) = (6, 5);
        let base: Vec<f32> = (0..rows * columns).map(|i| i as f32).collect();
        let thread = Background::start(rows, columns, Some(base.clone())).unwrap_or_else(|_| panic!("a thread"));
        let mut want = base;
        for (k, seed) in [(3, 1), (4, 2)] {
            term(k, rows, columns, seed).add_into(rows, columns, &[], &mut want, true);
            thread.add(term(k, rows, columns, seed));
        }
        assert_eq!(thread.finish(), want);
    }

    /// Without a base, the first term sets the product.
    #[test]
    fn without_a_base_the_first_term_sets_the_product() {
        let thread = Background::start(2, 3, None).unwrap_or_else(|_| panic!("a thread"));
        thread.add(term(2, 2, 3, 0));
        let mut want = vec![f32::NAN; 6];
        term(2, 2, 3, 0).add_into(2, 3, &[], &mut want, false);
        assert_eq!(thread.finish(), want);
    }
}
