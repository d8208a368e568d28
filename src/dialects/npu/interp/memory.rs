//! The interpreter's memories: byte arrays that remember which bytes hold data (reading a byte nothing wrote is an
//! error, never a stale value), one per HBM buffer and one per data-memory slice, the slices allocated when first
//! touched; and the conversion between a buffer's bytes and an array of its element type (little-endian).

use crate::array::{Array, DType, Data};
use crate::machine::ElemType;
use half::{bf16, f16};

/// Bytes and, per byte, whether something wrote it.
#[derive(Clone, Debug)]
pub struct Bytes {
    data: Vec<u8>,
    written: Vec<bool>,
}

impl Bytes {
    /// `len` bytes nothing has written.
    pub fn empty(len: usize) -> Bytes {
        Bytes { data: vec![0; len], written: vec![false; len] }
    }

    /// `data`, all written.
    pub fn full(data: Vec<u8>) -> Bytes {
        let written = vec![true; data.len()];
        Bytes { data, written }
    }

    /// Bytes `[at, at + len)`, or the offset of the first one nothing wrote (the caller checked the bounds).
    pub fn read(&self, at: usize, len: usize) -> Result<&[u8], usize> {
        match self.written[at..at + len].iter().position(|&w| !w) {
            Some(k) => Err(at + k),
            None => Ok(&self.data[at..at + len]),
        }
    }

    /// Writes `bytes` at `at` (the caller checked the bounds).
    pub fn write(&mut self, at: usize, bytes: &[u8]) {
        self.data[at..at + bytes.len()].copy_from_slice(bytes);
        self.written[at..at + bytes.len()].fill(true);
    }

    /// The bytes, whether written or not (unwritten ones are 0).
    pub fn raw(&self) -> &[u8] {
        &self.data
    }
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
    Some(match array.data() {
        Data::F32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        Data::BF16(v) => v.iter().flat_map(|x| x.to_bits().to_le_bytes()).collect(),
        Data::F16(v) => v.iter().flat_map(|x| x.to_bits().to_le_bytes()).collect(),
        Data::I8(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        Data::I32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
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
