//! The interpreter's memories: byte arrays that remember, a bit per byte, which bytes hold data (reading a byte
//! nothing wrote is an error, never a stale value), one per HBM buffer and one per data-memory slice, the slices allocated when first
//! touched; and the conversion between a buffer's bytes and an array of its element type (little-endian).

use crate::array::{Array, DType, Data};
use crate::machine::ElemType;
use half::{bf16, f16};

/// Bytes and, per byte, whether something wrote it (a bit per byte).
#[derive(Clone, Debug)]
pub struct Bytes {
    data: Vec<u8>,
    written: Vec<u64>,
}

impl Bytes {
    /// `len` bytes nothing has written.
    pub fn empty(len: usize) -> Bytes {
        Bytes { data: vec![0; len], written: vec![0; len.div_ceil(64)] }
    }

    /// `data`, all written.
    pub fn full(data: Vec<u8>) -> Bytes {
        let mut bytes = Bytes { written: vec![0; data.len().div_ceil(64)], data };
        bytes.mark(0, bytes.data.len());
        bytes
    }

    /// Bytes `[at, at + len)`, or the offset of the first one nothing wrote (the caller checked the bounds).
    pub fn read(&self, at: usize, len: usize) -> Result<&[u8], usize> {
        match self.first_unwritten(at, at + len) {
            Some(k) => Err(k),
            None => Ok(&self.data[at..at + len]),
        }
    }

    /// Writes `bytes` at `at` (the caller checked the bounds).
    pub fn write(&mut self, at: usize, bytes: &[u8]) {
        self.data[at..at + bytes.len()].copy_from_slice(bytes);
        self.mark(at, at + bytes.len());
    }

    /// Bytes `[at, at + len)` to write in place, marked written (the caller checked the bounds).
    pub fn write_in_place(&mut self, at: usize, len: usize) -> &mut [u8] {
        self.mark(at, at + len);
        &mut self.data[at..at + len]
    }

    /// The bytes, whether written or not (unwritten ones are 0).
    pub fn raw(&self) -> &[u8] {
        &self.data
    }

    /// Marks `[from, to)` written, a word at a time.
    fn mark(&mut self, from: usize, to: usize) {
        let mut at = from;
        while at < to {
            let (word, bit) = (at / 64, at % 64);
            let n = (64 - bit).min(to - at);
            self.written[word] |= mask(bit, n);
            at += n;
        }
    }

    /// The first byte of `[from, to)` nothing wrote, a word at a time.
    fn first_unwritten(&self, from: usize, to: usize) -> Option<usize> {
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

/// The little-endian bytes of `array`'s elements.
pub fn to_bytes(array: &Array) -> Option<Vec<u8>> {
    fn pack<T: Copy, const N: usize>(v: &[T], bytes: impl Fn(T) -> [u8; N]) -> Vec<u8> {
        let mut out = vec![0u8; v.len() * N];
        for (chunk, &x) in out.chunks_exact_mut(N).zip(v) {
            chunk.copy_from_slice(&bytes(x));
        }
        out
    }
    Some(match array.data() {
        Data::F32(v) => pack(v, f32::to_le_bytes),
        Data::BF16(v) => pack(v, |x: bf16| x.to_bits().to_le_bytes()),
        Data::F16(v) => pack(v, |x: f16| x.to_bits().to_le_bytes()),
        Data::I8(v) => pack(v, i8::to_le_bytes),
        Data::I32(v) => pack(v, i32::to_le_bytes),
        _ => return None,
    })
}

/// The array of `dtype` elements (a vector) that `bytes` hold.
pub fn from_bytes(dtype: DType, bytes: &[u8]) -> Option<Array> {
    let data = match dtype {
        DType::F32 => Data::F32(bytes.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect()),
        DType::BF16 => {
            Data::BF16(bytes.chunks_exact(2).map(|c| bf16::from_bits(u16::from_le_bytes([c[0], c[1]]))).collect())
        }
        DType::F16 => {
            Data::F16(bytes.chunks_exact(2).map(|c| f16::from_bits(u16::from_le_bytes([c[0], c[1]]))).collect())
        }
        DType::I8 => Data::I8(bytes.iter().map(|&b| b as i8).collect()),
        DType::I32 => Data::I32(bytes.chunks_exact(4).map(|c| i32::from_le_bytes(c.try_into().unwrap())).collect()),
        _ => return None,
    };
    let len = data.len() as u64;
    Array::new(vec![len], data).ok()
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
}
