//! Memories kept from one run for the next. A kernel asks for the same memories run after run, and the pages of a
//! fresh allocation cost more to fault in than the bytes cost to copy, so an [`super::Npu`] hands the last run's
//! memories to the next one: their pages, never their contents (nothing in them can be read until written again).
//! Each goes back to the memory it was (the same slice's data memory, say), whose pages the kernel touches again.

use super::memory::Bytes;
use crate::dialects::npu::ops::instruction::Site;
use foldhash::HashMap;

/// Memories of the last run, by the memory they were; no more than that run held.
#[derive(Debug, Default)]
pub struct Spare {
    by_site: HashMap<Site, Bytes>,
}

impl Spare {
    /// A memory of `len` bytes with nothing written for `site`: the one it was last run, else a new one.
    pub fn take(&mut self, site: Site, len: usize) -> Bytes {
        match self.by_site.remove(&site).filter(|b| b.len() == len) {
            Some(bytes) => bytes.cleared(),
            None => Bytes::empty(len),
        }
    }

    /// Keeps `bytes`, the memory at `site`, for the next run.
    pub fn keep(&mut self, site: Site, bytes: Bytes) {
        if !bytes.is_empty() {
            self.by_site.insert(site, bytes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_memory_comes_back_with_nothing_written() {
        let mut spare = Spare::default();
        let mut bytes = spare.take(Site::Hbm(0), 16);
        bytes.write(0, &[1; 16]);
        let data = bytes.unchecked_from(0).as_ptr();
        spare.keep(Site::Hbm(0), bytes);
        assert_eq!(spare.take(Site::Hbm(1), 16).len(), 16, "a new one for another memory");
        let again = spare.take(Site::Hbm(0), 16);
        assert_eq!(again.read(0, 1), Err(0));
        assert_eq!(again.unchecked_from(0).as_ptr(), data, "the memory it was");
    }
}
