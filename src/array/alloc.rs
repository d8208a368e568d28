//! Large cell buffers: zero-filled without touching their pages, backed by transparent huge pages where Linux
//! offers them (as NumPy asks for arrays of 4 MiB and more), and a failed allocation is an error, never an abort.

use std::alloc::{alloc_zeroed, Layout};
use std::fmt;

/// Buffers at least this large ask for huge pages: a 64 MiB buffer then faults in 32 pages instead of 16384.
pub const HUGE_PAGE_THRESHOLD: usize = 4 << 20;

/// Element types whose all-zero bytes are the value zero (`false` for `bool`).
pub trait Zeroable: Copy {}
impl Zeroable for f32 {}
impl Zeroable for f64 {}
impl Zeroable for i8 {}
impl Zeroable for i32 {}
impl Zeroable for i64 {}
impl Zeroable for bool {}
impl Zeroable for half::f16 {}
impl Zeroable for half::bf16 {}

/// A buffer that could not be allocated: how many bytes were asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AllocError {
    /// The size asked for, in bytes (`None` when it does not fit in `usize`).
    pub bytes: Option<usize>,
}

impl fmt::Display for AllocError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.bytes {
            Some(b) => write!(f, "out of memory: cannot allocate {b} bytes"),
            None => write!(f, "out of memory: the buffer's size overflows the address space"),
        }
    }
}

impl std::error::Error for AllocError {}

/// `n` zeros. The pages are left untouched, so that the first write to each faults it in (a huge page when the
/// buffer is large): writing zeros first would cost a pass over the memory.
pub fn zeroed<T: Zeroable>(n: usize) -> Result<Vec<T>, AllocError> {
    let layout = Layout::array::<T>(n).map_err(|_| AllocError { bytes: None })?;
    if layout.size() == 0 {
        return Ok(vec![]);
    }
    // SAFETY: the layout has a non-zero size; the pointer is checked for null.
    let ptr = unsafe { alloc_zeroed(layout) };
    if ptr.is_null() {
        return Err(AllocError { bytes: Some(layout.size()) });
    }
    advise_huge_pages(ptr, layout.size());
    // SAFETY: `ptr` was allocated by the global allocator with the layout of `n` `T`s, and zero bytes are `n`
    // valid `T`s (`Zeroable`).
    Ok(unsafe { Vec::from_raw_parts(ptr.cast::<T>(), n, n) })
}

/// Asks the kernel to back the whole 2 MiB pages inside `[ptr, ptr + len)` with huge pages (advice only: its
/// failure changes nothing but speed).
#[cfg(target_os = "linux")]
fn advise_huge_pages(ptr: *mut u8, len: usize) {
    const HUGE: usize = 2 << 20;
    if len < HUGE_PAGE_THRESHOLD {
        return;
    }
    let start = (ptr as usize).next_multiple_of(HUGE);
    let end = (ptr as usize + len) / HUGE * HUGE;
    if end > start {
        // SAFETY: the range lies inside the allocation just made; madvise changes no memory contents.
        unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) };
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_: *mut u8, _: usize) {}

/// The items of `iter` in a vector whose room (`iter`'s lower size bound: exact for the maps over slices and
/// ranges cell buffers are made from) is allocated fallibly: `collect` for buffers as large as a tensor.
pub fn collect<T>(iter: impl Iterator<Item = T>) -> Result<Vec<T>, AllocError> {
    let mut v = room(iter.size_hint().0)?;
    v.extend(iter);
    Ok(v)
}

/// `n` copies of `value`, allocated fallibly.
pub fn filled<T: Clone>(n: usize, value: T) -> Result<Vec<T>, AllocError> {
    let mut v = room(n)?;
    v.resize(n, value);
    Ok(v)
}

/// An empty vector with room for `n` items, allocated fallibly.
pub fn room<T>(n: usize) -> Result<Vec<T>, AllocError> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| AllocError { bytes: n.checked_mul(std::mem::size_of::<T>()) })?;
    Ok(v)
}
