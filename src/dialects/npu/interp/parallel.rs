//! When the interpreter's work is worth rayon's threads. Handing a job to the pool wakes its threads and puts the
//! caller to sleep until they finish: a few context switches, tens of microseconds on a busy machine. Most
//! instructions move a few KiB per slice, so moving them on the calling thread is faster; only work of
//! [`PARALLEL_WORK`] or more goes to the pool.

/// The work (bytes moved, or multiply-adds) from which an instruction's parts run on rayon's threads.
pub const PARALLEL_WORK: u64 = 1 << 20;

/// The least number of `items` per rayon job (for `with_min_len`) when they do `work` in all: all of them, so that
/// they run on the calling thread, below [`PARALLEL_WORK`].
pub fn min_len(items: usize, work: u64) -> usize {
    if work < PARALLEL_WORK {
        items.max(1)
    } else {
        1
    }
}
