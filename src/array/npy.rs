//! NumPy `.npy` files: read any C- or Fortran-order file of a supported element type into an [`Array`], write an
//! array back (C order). `bf16`, which NumPy lacks, is read from `<V2` (as `ml_dtypes` writes it) or `<u2` bits
//! and written as `<V2`. Every problem is an error that says what is wrong with the file.

use super::{Array, ArrayError, DType, Data};
use half::bf16;
use npyz::{NpyFile, Order, TypeChar, WriteOptions, WriterBuilder};

/// The longest header read, in bytes: NumPy's own default limit (`max_header_size`), past which it refuses a file
/// as possibly hostile.
pub const MAX_HEADER_BYTES: usize = 10_000;

/// The deepest bracket nesting a header may have: a header is a dictionary holding a shape tuple (2); record
/// types, which nest deeper, are not read anyway. Checked before the header parser sees the text.
pub const MAX_HEADER_NESTING: usize = 4;

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
    let raw = &bytes[bytes.len() - data_len..];
    let big = matches!(ts.endianness(), npyz::Endianness::Big);
    let fortran = matches!(order, Order::Fortran);
    let layout = Layout { shape: &shape, fortran };
    macro_rules! numbers {
        ($t:ty, $n:literal) => {
            layout.decode::<$t, $n>(raw, |b| if big { <$t>::from_be_bytes(b) } else { <$t>::from_le_bytes(b) })?
        };
    }
    let data = match dtype {
        DType::F32 => Data::F32(numbers!(f32, 4)),
        DType::F64 => Data::F64(numbers!(f64, 8)),
        DType::F16 => Data::F16(numbers!(half::f16, 2)),
        DType::BF16 => Data::BF16(numbers!(bf16, 2)),
        DType::I8 => Data::I8(numbers!(i8, 1)),
        DType::I32 => Data::I32(numbers!(i32, 4)),
        DType::I64 => Data::I64(numbers!(i64, 8)),
        DType::I1 => Data::I1(layout.decode::<bool, 1>(raw, |[b]| b != 0)?),
    };
    Array::new(shape, data)
}

/// Where a file's elements go: its shape, and whether the file holds them in Fortran (column-major) order.
struct Layout<'s> {
    shape: &'s [u64],
    fortran: bool,
}

/// The side of the square tiles a Fortran-order file is transposed in: both a tile's reads and its writes stay
/// in cache.
const TILE: usize = 64;

impl Layout<'_> {
    /// The elements of `raw` (each `N` bytes, decoded by `one`) in C order, in one fallibly allocated buffer.
    /// Fortran order is transposed while decoding, tile by tile, with no index vector and no second copy.
    fn decode<T: Copy + Default, const N: usize>(
        &self,
        raw: &[u8],
        one: impl Fn([u8; N]) -> T,
    ) -> Result<Vec<T>, ArrayError> {
        let at = |i: usize| one(raw[i * N..i * N + N].try_into().expect("N bytes"));
        let n = raw.len() / N;
        let oom = |e: super::alloc::AllocError| err(e.to_string());
        if !self.fortran || self.shape.len() < 2 || n == 0 {
            return super::alloc::collect((0..n).map(at)).map_err(oom);
        }
        let mut out = super::alloc::filled(n, T::default()).map_err(oom)?;
        let (shape, rank) = (self.shape, self.shape.len());
        let (f, c) = (strides(shape.iter().copied()), strides(shape.iter().rev().copied()));
        let c: Vec<usize> = c.into_iter().rev().collect();
        let (rows, cols) = (shape[0] as usize, shape[rank - 1] as usize);
        // Every coordinate of the middle axes, in C order; for each, the first and last axes are tiled.
        let mut middle = vec![0u64; rank - 2];
        loop {
            let f_mid: usize = middle.iter().zip(&f[1..]).map(|(&x, s)| x as usize * s).sum();
            let c_mid: usize = middle.iter().zip(&c[1..]).map(|(&x, s)| x as usize * s).sum();
            for r0 in (0..rows).step_by(TILE) {
                for k0 in (0..cols).step_by(TILE) {
                    for k in k0..(k0 + TILE).min(cols) {
                        for r in r0..(r0 + TILE).min(rows) {
                            out[r * c[0] + c_mid + k] = at(r + f_mid + k * f[rank - 1]);
                        }
                    }
                }
            }
            if !step(&mut middle, &shape[1..rank - 1]) {
                return Ok(out);
            }
        }
    }
}

/// The strides of dimensions of these extents, the first fastest.
fn strides(extents: impl Iterator<Item = u64>) -> Vec<usize> {
    let mut next = 1usize;
    extents
        .map(|e| {
            let s = next;
            next *= e as usize;
            s
        })
        .collect()
}

/// Advances `coord` to the next coordinate of `shape` in C order; false after the last.
fn step(coord: &mut [u64], shape: &[u64]) -> bool {
    for k in (0..coord.len()).rev() {
        coord[k] += 1;
        if coord[k] < shape[k] {
            return true;
        }
        coord[k] = 0;
    }
    false
}

/// The number of data bytes after the header (checked against the header's own length field).
fn npy_data_len(bytes: &[u8]) -> Result<usize, ArrayError> {
    let short = || err("the file ends inside its header");
    let major = *bytes.get(6).ok_or_else(short)?;
    let (len_at, len_size) = if major == 1 { (8, 2) } else { (8, 4) };
    let field = bytes.get(len_at..len_at + len_size).ok_or_else(short)?;
    let header = field.iter().rev().fold(0usize, |acc, &b| acc * 256 + b as usize);
    let start = len_at + len_size + header;
    if header > MAX_HEADER_BYTES {
        return Err(err(format!("the header is {header} bytes long, more than the {MAX_HEADER_BYTES} read")));
    }
    let text = bytes.get(len_at + len_size..start).ok_or_else(short)?;
    nesting_fits(text)?;
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
    let extents: Option<Vec<u64>> = dims.split(',').map(str::trim).filter(|d| !d.is_empty()).map(python_int).collect();
    match extents {
        Some(e) if !super::fits(&e, 1) => Err(err(format!("the shape ({dims}) is too large for any array"))),
        _ => Ok(()),
    }
}

/// A non-negative Python integer literal as a header may spell it: decimal, `0x`, `0o` or `0b`, with `_`
/// between digits.
fn python_int(text: &str) -> Option<u64> {
    let digits = text.replace('_', "");
    let lower = digits.to_ascii_lowercase();
    let (radix, body) = match lower.get(..2) {
        Some("0x") => (16, &lower[2..]),
        Some("0o") => (8, &lower[2..]),
        Some("0b") => (2, &lower[2..]),
        _ => (10, &lower[..]),
    };
    u64::from_str_radix(body, radix).ok()
}

/// A version-1 `.npy` file with this header dictionary (padded as NumPy pads it) and these data bytes, written
/// as given: for files [`write`] does not make (Fortran order, hand-made or hostile headers).
pub fn with_header(dict: &str, data: &[u8]) -> Vec<u8> {
    let mut header = dict.to_string();
    while !(10 + header.len() + 1).is_multiple_of(64) {
        header.push(' ');
    }
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend((header.len() as u16).to_le_bytes());
    out.extend(header.bytes());
    out.extend(data);
    out
}

/// Fails when the header's brackets nest deeper than [`MAX_HEADER_NESTING`] (a parser would recurse on them).
fn nesting_fits(text: &[u8]) -> Result<(), ArrayError> {
    let mut depth = 0usize;
    for (i, &b) in text.iter().enumerate() {
        match b {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        if depth > MAX_HEADER_NESTING {
            return Err(err(format!(
                "the header's brackets nest deeper than {MAX_HEADER_NESTING} (at byte {i} of the header)"
            )));
        }
    }
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shape_too_large_is_refused_however_it_is_spelled() {
        for dims in ["0, 4294967296, 4294967296", "0, 0x100000000, 0x1_0000_0000", "0, 0o40000000000, 0b1"] {
            let header = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': ({dims}), }}");
            let message = read(&with_header(&header, &[])).err().map(|e| e.to_string()).unwrap_or_default();
            let large = !dims.ends_with("0b1");
            assert_eq!(message.contains("too large for any array"), large, "{dims}: {message}");
        }
    }

    #[test]
    fn fortran_order_is_transposed_across_tile_edges() {
        // Shapes whose first and last extents are not multiples of the tile, with and without middle axes, and
        // big-endian values; cell (i, ..., k) holds its own C-order index.
        for shape in [vec![70usize, 130], vec![130, 3, 70], vec![65, 2, 2, 129], vec![1, 200], vec![200, 1]] {
            let n: usize = shape.iter().product();
            let mut f_strides = vec![1usize; shape.len()];
            for k in 1..shape.len() {
                f_strides[k] = f_strides[k - 1] * shape[k - 1];
            }
            let mut file = vec![0i32; n];
            for c in 0..n {
                let (mut rest, mut f) = (c, 0);
                for k in (0..shape.len()).rev() {
                    f += rest % shape[k] * f_strides[k];
                    rest /= shape[k];
                }
                file[f] = c as i32;
            }
            let bytes: Vec<u8> = file.iter().flat_map(|v| v.to_be_bytes()).collect();
            let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
            let header = format!("{{'descr': '>i4', 'fortran_order': True, 'shape': ({},), }}", dims.join(", "));
            let a = read(&with_header(&header, &bytes)).unwrap();
            assert_eq!(a.to_f64(), (0..n).map(|c| c as f64).collect::<Vec<_>>(), "shape {shape:?}");
        }
    }

    #[test]
    fn fortran_order_files_are_read_in_c_order() {
        // Shape (2, 3, 4); the file holds cell (i, j, k) at position i + 2j + 6k, with value 100i + 10j + k.
        let mut cells = [0i32; 24];
        for (i, j, k) in (0..2).flat_map(|i| (0..3).flat_map(move |j| (0..4).map(move |k| (i, j, k)))) {
            cells[i + 2 * j + 6 * k] = (100 * i + 10 * j + k) as i32;
        }
        let bytes: Vec<u8> = cells.iter().flat_map(|v| v.to_le_bytes()).collect();
        let a = read(&with_header("{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3, 4), }", &bytes)).unwrap();
        let want: Vec<f64> = (0..24).map(|c| (100 * (c / 12) + 10 * (c / 4 % 3) + c % 4) as f64).collect();
        assert_eq!((a.shape(), a.to_f64()), (&[2u64, 3, 4][..], want));
    }

    #[test]
    fn hostile_headers_are_refused_before_parsing() {
        let nested =
            format!("{{'descr': '<f4', 'fortran_order': False, 'shape': {}(){}, }}", "[".repeat(24), "]".repeat(24));
        let e = read(&with_header(&nested, &[])).unwrap_err();
        assert!(e.0.contains("nest deeper than 4"), "{e:?}");
        let long =
            format!("{{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': '{}', }}", "a".repeat(20_000));
        let mut bytes = b"\x93NUMPY\x02\x00".to_vec();
        bytes.extend((long.len() as u32).to_le_bytes());
        bytes.extend(long.bytes());
        let e = read(&bytes).unwrap_err();
        assert!(e.0.contains("more than the 10000 read"), "{e:?}");
    }
}
