//! Memories kept from one run for the next. A kernel asks for the same memories run after run, and the pages of a
//! fresh allocation cost more to fault in than the bytes cost to copy, so an [`super::Npu`] hands the last run's
//! memories to the next one: their pages, never their contents (nothing in them can be read until written again).

use super::memory::Bytes;
use std::collections::HashMap;

/// Memories of the last run, by size; no more than that run held.
#[derive(Debug, Default)]
pub struct Spare {
    by_size: HashMap<usize, Vec<Bytes>>,
}

impl Spare {
    /// A memory of `len` bytes with nothing written: a kept one when there is one of that size, else a new one.
    pub fn take(&mut self, len: usize) -> Bytes {
        match self.by_size.get_mut(&len).and_then(Vec::pop) {
            Some(bytes) => bytes.cleared(),
            None => Bytes::empty(len),
        }
    }

    /// Keeps `bytes` for the next run.
    pub fn keep(&mut self, bytes: Bytes) {
        if !bytes.is_empty() {
            self.by_size.entry(bytes.len()).or_default().push(bytes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_memory_comes_back_with_nothing_written() {
        let mut spare = Spare::default();
        let mut bytes = spare.take(16);
        bytes.write(0, &[1; 16]);
        spare.keep(bytes);
        let again = spare.take(16);
        assert_eq!(again.read(0, 1), Err(0));
        assert_eq!(spare.take(16).len(), 16);
    }
}
