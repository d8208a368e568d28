//! The interpreter's memories: byte arrays that remember, a bit per byte, which bytes hold data (reading a byte
//! nothing wrote is an error, never a stale value), one per HBM buffer and one per on-chip memory of a slice;
//! and the conversion between a buffer's bytes and an array of its element type (little-endian).

use crate::array::alloc::{zeroed, AllocError, Zeroable};
use crate::array::{Array, DType, Data};
use crate::machine::ElemType;
use bytemuck::Pod;
use rayon::prelude::*;
use std::borrow::Cow;

/// Bytes and, per byte, whether something wrote it (a bit per byte), with the count of bytes nothing wrote (so
/// reads of a memory written whole, such as a bound input, check nothing).
#[derive(Clone, Debug)]
pub struct Bytes {
    data: Vec<u8>,
    written: Vec<u64>,
    unwritten: usize,
    /// A bit per block of [`DIRTY_BLOCK`] words of `written` that may have bits set: clearing for the next run
    /// clears only these (a slice's data memory is 512 KiB and a kernel often writes a few scattered boxes of it).
    dirty: Vec<u64>,
}

/// Words of the written bits (each for 64 bytes) that one bit of [`Bytes`]'s dirty blocks stands for.
const DIRTY_BLOCK: usize = 64;

/// The dirty-block words for `len` bytes.
fn dirty_blocks(len: usize) -> Vec<u64> {
    vec![0; len.div_ceil(64).div_ceil(DIRTY_BLOCK).div_ceil(64)]
}

impl Bytes {
    /// `len` bytes nothing has written.
    pub fn empty(len: usize) -> Bytes {
        Bytes { data: vec![0; len], written: vec![0; len.div_ceil(64)], unwritten: len, dirty: dirty_blocks(len) }
    }

    /// `data`, all written.
    pub fn full(data: Vec<u8>) -> Bytes {
        let (written, dirty) = (vec![0; data.len().div_ceil(64)], dirty_blocks(data.len()));
        let mut bytes = Bytes { written, unwritten: data.len(), data, dirty };
        bytes.mark(0, bytes.data.len());
        bytes
    }

    /// Bytes `[at, at + len)`, or the offset of the first one nothing wrote (the caller checked the bounds).
    pub fn read(&self, at: usize, len: usize) -> Result<&[u8], usize> {
        if self.unwritten == 0 {
            return Ok(&self.data[at..at + len]);
        }
        match self.first_unwritten(at, at + len) {
            Some(k) => Err(k),
            None => Ok(&self.data[at..at + len]),
        }
    }

    /// Writes `bytes` at `at` (the caller checked the bounds).
    pub fn write(&mut self, at: usize, bytes: &[u8]) {
        copy(&mut self.data[at..at + bytes.len()], bytes);
        self.mark(at, at + bytes.len());
    }

    /// Bytes `[at, at + len)` to write in place, marked written (the caller checked the bounds).
    pub fn write_in_place(&mut self, at: usize, len: usize) -> &mut [u8] {
        self.mark(at, at + len);
        &mut self.data[at..at + len]
    }

    /// The bytes from `at` on, whether written or not (for a caller that checked they were).
    pub fn unchecked_from(&self, at: usize) -> &[u8] {
        &self.data[at..]
    }

    /// Whether every byte has been written.
    pub fn all_written(&self) -> bool {
        self.unwritten == 0
    }

    /// Whether every byte of `[from, to)` was written (the caller checked the bounds).
    pub fn written_between(&self, from: usize, to: usize) -> bool {
        self.unwritten == 0 || self.first_unwritten(from, to).is_none()
    }

    /// How many bytes there are.
    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// The same memory with nothing written: its old bytes stay but cannot be read until written again (a memory
    /// reused by the next run costs a pass over its written bits, not fresh pages).
    pub fn cleared(mut self) -> Bytes {
        for (i, bits) in self.dirty.iter_mut().enumerate() {
            while *bits != 0 {
                let block = i * 64 + bits.trailing_zeros() as usize;
                let words = block * DIRTY_BLOCK..((block + 1) * DIRTY_BLOCK).min(self.written.len());
                self.written[words].fill(0);
                *bits &= *bits - 1;
            }
        }
        self.unwritten = self.data.len();
        self
    }

    /// All the bytes, those nothing wrote set to 0 (what a buffer reads back as).
    pub fn contents(&mut self) -> &[u8] {
        if self.unwritten == 0 {
            return &self.data;
        }
        let len = self.data.len();
        for (word, &bits) in self.written.iter().enumerate().filter(|(_, &b)| b != u64::MAX) {
            let bytes = &mut self.data[word * 64..(word * 64 + 64).min(len)];
            if bits == 0 {
                bytes.fill(0);
                continue;
            }
            for (_, byte) in bytes.iter_mut().enumerate().filter(|(b, _)| bits & (1 << b) == 0) {
                *byte = 0;
            }
        }
        &self.data
    }

    /// Marks `[from, to)` written: the partial words at the ends bit by bit, the whole words between at once.
    fn mark(&mut self, from: usize, to: usize) {
        if self.unwritten == 0 || from >= to {
            return;
        }
        for block in from / 64 / DIRTY_BLOCK..=(to - 1) / 64 / DIRTY_BLOCK {
            self.dirty[block / 64] |= 1 << (block % 64);
        }
        let (first, last) = (from.div_ceil(64), to / 64);
        if first >= last {
            return self.mark_bits(from, to);
        }
        self.mark_bits(from, first * 64);
        let words = &mut self.written[first..last];
        self.unwritten -= words.iter().map(|w| w.count_zeros() as usize).sum::<usize>();
        words.fill(u64::MAX);
        self.mark_bits(last * 64, to);
    }

    /// Marks `[from, to)` written, a word at a time.
    fn mark_bits(&mut self, from: usize, to: usize) {
        let mut at = from;
        while at < to {
            let (word, bit) = (at / 64, at % 64);
            let n = (64 - bit).min(to - at);
            let fresh = !self.written[word] & mask(bit, n);
            self.written[word] |= fresh;
            self.unwritten -= fresh.count_ones() as usize;
            at += n;
        }
    }

    /// The first byte of `[from, to)` nothing wrote: the partial words at the ends bit by bit, the whole words between
    /// in one scan.
    fn first_unwritten(&self, from: usize, to: usize) -> Option<usize> {
        let (first, last) = (from.div_ceil(64), to / 64);
        if first >= last {
            return self.first_unwritten_bits(from, to);
        }
        self.first_unwritten_bits(from, first * 64)
            .or_else(|| {
                let word = self.written[first..last].iter().position(|&w| w != u64::MAX)? + first;
                Some(word * 64 + self.written[word].trailing_ones() as usize)
            })
            .or_else(|| self.first_unwritten_bits(last * 64, to))
    }

    /// The first byte of `[from, to)` nothing wrote, a word at a time.
    fn first_unwritten_bits(&self, from: usize, to: usize) -> Option<usize> {
        let mut at = from;
        while at < to {
            let (word, bit) = (at / 64, at % 64);
            let n = (64 - bit).min(to - at);
            let missing = !self.written[word] & mask(bit, n);
            if missing != 0 {
                return Some(word * 64 + missing.trailing_zeros() as usize);
            }
            at += n;
        }
        None
    }
}

/// `n` bits from bit `bit` (`bit + n <= 64`).
fn mask(bit: usize, n: usize) -> u64 {
    let ones = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
    ones << bit
}

/// The array type a buffer of `elem` binds to, if arrays have one.
pub fn dtype_of(elem: ElemType) -> Option<DType> {
    Some(match elem {
        ElemType::F32 => DType::F32,
        ElemType::Bf16 => DType::BF16,
        ElemType::F16 => DType::F16,
        ElemType::I8 => DType::I8,
        ElemType::I32 => DType::I32,
        ElemType::F8 => return None,
    })
}

/// Bytes per piece of a long copy on one thread.
const COPY_PIECE: usize = 1 << 18;

/// Copies `from` into `to` (as long): a long copy in pieces on rayon's threads (binding an input, reading a buffer
/// back: mostly cache misses and first touches of pages, which threads overlap).
fn copy(to: &mut [u8], from: &[u8]) {
    if from.len() < 2 * COPY_PIECE {
        return to.copy_from_slice(from);
    }
    to.par_chunks_mut(COPY_PIECE).zip(from.par_chunks(COPY_PIECE)).for_each(|(o, b)| o.copy_from_slice(b));
}

/// The little-endian bytes of `array`'s elements: its own memory on a little-endian host.
pub fn to_bytes(array: &Array) -> Option<Cow<'_, [u8]>> {
    fn le<T: Pod>(v: &[T]) -> Cow<'_, [u8]> {
        let bytes: &[u8] = bytemuck::cast_slice(v);
        if cfg!(target_endian = "little") {
            return Cow::Borrowed(bytes);
        }
        let mut owned = bytes.to_vec();
        owned.chunks_exact_mut(std::mem::size_of::<T>()).for_each(<[u8]>::reverse);
        Cow::Owned(owned)
    }
    Some(match array.data() {
        Data::F32(v) => le(v),
        Data::BF16(v) => le(v),
        Data::F16(v) => le(v),
        Data::I8(v) => le(v),
        Data::I32(v) => le(v),
        _ => return None,
    })
}

/// The array of `dtype` elements (a vector) that `bytes` hold, `None` for a type arrays of bytes do not have; an
/// error when its memory cannot be allocated.
pub fn from_bytes(dtype: DType, bytes: &[u8]) -> Result<Option<Array>, AllocError> {
    fn elements<T: Pod + Zeroable>(bytes: &[u8]) -> Result<Vec<T>, AllocError> {
        let mut v: Vec<T> = zeroed(bytes.len() / std::mem::size_of::<T>())?;
        let out: &mut [u8] = bytemuck::cast_slice_mut(&mut v);
        let n = out.len();
        copy(out, &bytes[..n]);
        if cfg!(target_endian = "big") {
            out.chunks_exact_mut(std::mem::size_of::<T>()).for_each(<[u8]>::reverse);
        }
        Ok(v)
    }
    let data = match dtype {
        DType::F32 => Data::F32(elements(bytes)?),
        DType::BF16 => Data::BF16(elements(bytes)?),
        DType::F16 => Data::F16(elements(bytes)?),
        DType::I8 => Data::I8(elements(bytes)?),
        DType::I32 => Data::I32(elements(bytes)?),
        _ => return Ok(None),
    };
    let len = data.len() as u64;
    Ok(Array::new(vec![len], data).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_bytes_are_tracked_across_words() {
        let mut m = Bytes::empty(200);
        m.write(60, &[7; 70]);
        assert_eq!(m.read(60, 70).unwrap(), &[7; 70][..]);
        assert_eq!(m.read(59, 2), Err(59));
        assert_eq!(m.read(100, 40), Err(130));
        assert_eq!(Bytes::full(vec![1; 129]).read(0, 129).unwrap().len(), 129);
    }

    #[test]
    fn the_first_unwritten_byte_is_found_in_any_range() {
        // Pieces written at odd places over several words; every range's first unwritten byte, against a byte map.
        let mut m = Bytes::empty(400);
        let mut written = [false; 400];
        for (at, len) in [(3, 70), (130, 128), (300, 1), (310, 64), (64, 10)] {
            m.write(at, &vec![1; len]);
            written[at..at + len].fill(true);
        }
        for from in 0..400 {
            for to in from..=400 {
                let want = (from..to).find(|&b| !written[b]);
                assert_eq!(m.first_unwritten(from, to), want, "[{from}, {to})");
            }
        }
    }

    #[test]
    fn a_memory_written_whole_in_overlapping_pieces_reads_whole() {
        let mut m = Bytes::empty(100);
        m.write(0, &[1; 50]);
        m.write(40, &[2; 60]);
        assert_eq!(m.unwritten, 0);
        assert_eq!(m.read(0, 100).unwrap()[45], 2);
        let mut m = m.cleared();
        assert_eq!(m.read(99, 1), Err(99));
        m.write(70, &[3; 3]);
        let contents = m.contents();
        assert_eq!((contents[69], contents[70], contents[72], contents[73], contents[0]), (0, 3, 3, 0, 0));
    }

    #[test]
    fn clearing_forgets_every_piece_written_since_the_last_clearing() {
        let mut m = Bytes::empty(1000);
        for (at, len) in [(500, 10), (3, 1), (990, 10)] {
            m.write(at, &vec![1; len]);
        }
        let mut m = m.cleared();
        assert_eq!([m.read(500, 1), m.read(3, 1), m.read(999, 1)], [Err(500), Err(3), Err(999)]);
        m.write(700, &[2; 64]);
        let m = m.cleared();
        assert_eq!((m.first_unwritten(0, 1000), m.unwritten), (Some(0), 1000));
        assert_eq!(m.read(700, 64), Err(700));
    }
}
