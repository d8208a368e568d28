//! The machinery of the views that are not one strided access (concat, interleave, repeat, pad; their plans are in
//! `ops/views.rs`): the result assembled from strided copies of the operands' cells into one fallibly allocated
//! buffer, and the cell a reflect or wrap pad copies.

use super::broadcast::{for_each_offset, Read};
use super::value::Strided;
use super::{fail, EvalError};
use crate::array::alloc::Zeroable;
use crate::array::{Array, Data};
use crate::dialects::teg::ops::PadMode;

/// One strided copy: the result's cells in a region (a layout into the result), the operand, and the operand's cells
/// copied there (a layout into that operand).
pub type Placement = (Strided, usize, Strided);

/// The cells `at, at + step, ...` (`n` of them) of dimension `k` of a layout.
pub fn region(l: &Strided, k: usize, at: u64, n: u64, step: u64) -> Strided {
    let mut r = l.clone();
    r.offset = (l.offset as isize + at as isize * l.strides[k]) as usize;
    r.shape[k] = n;
    r.strides[k] = l.strides[k] * step as isize;
    r
}

/// The input index a reflect or wrap pad copies to position `at` (relative to the input's first cell) of a
/// dimension of extent `n` (verified non-empty): reflect bounces with a period of 2(n − 1), the edge cell not
/// repeated (one cell: itself), as `np.pad`; wrap cycles.
pub fn pad_source(mode: PadMode, at: i64, n: i64) -> u64 {
    (match mode {
        _ if (0..n).contains(&at) => at,
        PadMode::Reflect if n == 1 => 0,
        PadMode::Reflect => {
            let (period, m) = (2 * (n - 1), at.rem_euclid(2 * (n - 1)));
            if m < n {
                m
            } else {
                period - m
            }
        }
        _ => at.rem_euclid(n),
    }) as u64
}

/// The result: each `(region, operand, layout)` copies the operand's cells (laid out as `layout`) to the
/// result's cells in `region`; `fill` sets the regions it lists to one value.
pub fn assemble(
    arrays: &[&Array],
    shape: &[u64],
    copies: &[Placement],
    fill: Option<(f64, Vec<Strided>)>,
) -> Result<Array, EvalError> {
    let total = shape.iter().product::<u64>() as usize;
    let dtype = arrays[0].dtype();
    let value = Data::from_f64(dtype, std::iter::once(fill.as_ref().map_or(0.0, |f| f.0)));
    let regions = fill.map_or(Vec::new(), |f| f.1);
    macro_rules! typed {
        ($($variant:ident),*) => {
            match (arrays[0].data(), &value) {
                $((Data::$variant(_), Data::$variant(v)) => {
                    let cells: Vec<&[_]> = arrays
                        .iter()
                        .map(|a| match a.data() {
                            Data::$variant(c) => Ok(c.as_slice()),
                            _ => fail("operands of different element types"),
                        })
                        .collect::<Result<_, _>>()?;
                    Data::$variant(place(total, copies, &cells, &regions, v[0])?)
                })*
                _ => return fail("operands of different element types"),
            }
        };
    }
    let data = typed!(F32, F64, BF16, F16, I8, I32, I64, I1);
    Ok(Array::new(shape.to_vec(), data).expect("shape and count agree"))
}

/// A zeroed buffer of `total` cells with each copy and fill applied.
fn place<T: Zeroable>(
    total: usize,
    copies: &[Placement],
    cells: &[&[T]],
    fills: &[Strided],
    value: T,
) -> Result<Vec<T>, EvalError> {
    let mut out = super::cells::<T>(total)?;
    for (to, i, from) in copies {
        let (dst, src) = (Read::of_layout(to), Read::of_layout(from));
        for_each_offset(&to.shape, [&dst, &src], |[d, s]| out[d] = cells[*i][s]);
    }
    for to in fills {
        for_each_offset(&to.shape, [&Read::of_layout(to)], |[d]| out[d] = value);
    }
    Ok(out)
}
