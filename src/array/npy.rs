//! NumPy `.npy` files: read any C- or Fortran-order file of a supported element type into an [`Array`], write an
//! array back (C order). `bf16`, which NumPy lacks, is read from `<V2` (as `ml_dtypes` writes it) or `<u2` bits
//! and written as `<V2`. Every problem is an error that says what is wrong with the file.

use super::{Array, ArrayError, DType, Data};
use half::bf16;
use npyz::{NpyFile, Order, TypeChar, WriteOptions, WriterBuilder};
use std::io::Read;

fn err(msg: impl Into<String>) -> ArrayError {
    ArrayError(msg.into())
}

/// Reads a `.npy` file's bytes.
pub fn read(bytes: &[u8]) -> Result<Array, ArrayError> {
    if !bytes.starts_with(b"\x93NUMPY") {
        return Err(err("not a .npy file (it does not start with \\x93NUMPY)"));
    }
    let data_len = npy_data_len(bytes)?;
    let npy = NpyFile::new(bytes).map_err(|e| err(format!("not a valid .npy header: {e}")))?;
    let shape = npy.shape().to_vec();
    let order = npy.order();
    let descr = npy.dtype().descr();
    let npyz::DType::Plain(ts) = npy.dtype() else {
        return Err(err(format!("element type {descr} is a record or array type, not a number")));
    };
    let dtype = match (ts.type_char(), ts.size_field()) {
        (TypeChar::Float, 4) => DType::F32,
        (TypeChar::Float, 8) => DType::F64,
        (TypeChar::Float, 2) => DType::F16,
        (TypeChar::Int, 1) => DType::I8,
        (TypeChar::Int, 4) => DType::I32,
        (TypeChar::Int, 8) => DType::I64,
        (TypeChar::Bool, 1) => DType::I1,
        (TypeChar::RawData | TypeChar::Uint, 2) => DType::BF16,
        _ => {
            return Err(err(format!(
                "unsupported element type {descr} (f32, f64, f16, bf16 as <V2, i8, i32, i64, bool)"
            )))
        }
    };
    let count = shape.iter().try_fold(1u64, |a, &b| a.checked_mul(b)).ok_or_else(|| err("the shape is too large"))?;
    let have = data_len as u64;
    let need = count.checked_mul(dtype.size() as u64).ok_or_else(|| err("the shape is too large"))?;
    if have != need {
        return Err(err(format!(
            "the header promises {count} elements ({need} bytes) of {descr} but the file holds {have} bytes of data"
        )));
    }
    let bad = |e: std::io::Error| err(format!("cannot read the data: {e}"));
    let data = match dtype {
        DType::F32 => Data::F32(npy.into_vec().map_err(bad)?),
        DType::F64 => Data::F64(npy.into_vec().map_err(bad)?),
        DType::F16 => Data::F16(npy.into_vec().map_err(bad)?),
        DType::I8 => Data::I8(npy.into_vec().map_err(bad)?),
        DType::I32 => Data::I32(npy.into_vec().map_err(bad)?),
        DType::I64 => Data::I64(npy.into_vec().map_err(bad)?),
        DType::I1 => Data::I1(npy.into_vec().map_err(bad)?),
        DType::BF16 => {
            let mut raw = vec![0u8; need as usize];
            npy.into_inner().read_exact(&mut raw).map_err(bad)?;
            let big = descr.starts_with('>');
            let bits = |c: &[u8]| if big { u16::from_be_bytes([c[0], c[1]]) } else { u16::from_le_bytes([c[0], c[1]]) };
            Data::BF16(raw.chunks_exact(2).map(|c| bf16::from_bits(bits(c))).collect())
        }
    };
    let array = Array::new(shape.clone(), data)?;
    Ok(match order {
        Order::C => array,
        Order::Fortran => from_fortran(&array),
    })
}

/// The number of data bytes after the header (checked against the header's own length field).
fn npy_data_len(bytes: &[u8]) -> Result<usize, ArrayError> {
    let short = || err("the file ends inside its header");
    let major = *bytes.get(6).ok_or_else(short)?;
    let (len_at, len_size) = if major == 1 { (8, 2) } else { (8, 4) };
    let field = bytes.get(len_at..len_at + len_size).ok_or_else(short)?;
    let header = field.iter().rev().fold(0usize, |acc, &b| acc * 256 + b as usize);
    let start = len_at + len_size + header;
    let text = bytes.get(len_at + len_size..start).ok_or_else(short)?;
    shape_fits(&String::from_utf8_lossy(text))?;
    bytes.len().checked_sub(start).ok_or_else(short)
}

/// Fails when the header's `'shape'` tuple is too large for any array (see [`super::fits`]; npyz would overflow on
/// it); a shape it cannot read is left to npyz's own error.
fn shape_fits(header: &str) -> Result<(), ArrayError> {
    let Some(at) = header.find("'shape'") else { return Ok(()) };
    let rest = &header[at..];
    let (Some(open), Some(close)) = (rest.find('('), rest.find(')')) else { return Ok(()) };
    let Some(dims) = rest.get(open + 1..close) else { return Ok(()) };
    let extents: Option<Vec<u64>> =
        dims.split(',').map(str::trim).filter(|d| !d.is_empty()).map(|d| d.parse().ok()).collect();
    match extents {
        Some(e) if !super::fits(&e, 1) => Err(err(format!("the shape ({dims}) is too large for any array"))),
        _ => Ok(()),
    }
}

/// The C-order array with the elements of a Fortran-order (column-major) one.
fn from_fortran(a: &Array) -> Array {
    let shape = a.shape().to_vec();
    let n = a.len();
    // Element i (C order) is at Fortran position Σ c_k · Π_{j<k} n_j.
    let c_strides = super::strides(&shape);
    let mut f_strides = vec![1usize; shape.len()];
    for k in 1..shape.len() {
        f_strides[k] = f_strides[k - 1] * shape[k - 1] as usize;
    }
    let picks: Vec<usize> =
        (0..n).map(|i| (0..shape.len()).map(|k| (i / c_strides[k]) % shape[k] as usize * f_strides[k]).sum()).collect();
    Array::new(shape, a.data().gather(&picks)).expect("same count")
}

/// The bytes of `a` as a C-order `.npy` file.
pub fn write(a: &Array) -> Result<Vec<u8>, ArrayError> {
    let mut out = Vec::with_capacity(a.len() * a.dtype().size() + 128);
    let shape = a.shape();
    let io = |e: std::io::Error| err(format!("cannot write: {e}"));
    fn put<T: npyz::AutoSerialize>(out: &mut Vec<u8>, shape: &[u64], v: &[T]) -> std::io::Result<()> {
        let mut w = WriteOptions::new().default_dtype().shape(shape).writer(out).begin_nd()?;
        w.extend(v.iter())?;
        w.finish()
    }
    match a.data() {
        Data::F32(v) => put(&mut out, shape, v),
        Data::F64(v) => put(&mut out, shape, v),
        Data::F16(v) => put(&mut out, shape, v),
        Data::I8(v) => put(&mut out, shape, v),
        Data::I32(v) => put(&mut out, shape, v),
        Data::I64(v) => put(&mut out, shape, v),
        Data::I1(v) => put(&mut out, shape, v),
        Data::BF16(v) => {
            let dtype = npyz::DType::Plain("<V2".parse().expect("a valid type string"));
            let opts = WriteOptions::<npyz::FixedSizeBytes<2>>::new().dtype(dtype).shape(shape);
            (|| {
                let mut w = opts.writer(&mut out).begin_nd()?;
                for x in v {
                    w.push(&npyz::FixedSizeBytes(x.to_bits().to_le_bytes()))?;
                }
                w.finish()
            })()
        }
    }
    .map_err(io)?;
    Ok(out)
}
