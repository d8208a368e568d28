//! `teg.conv2d`: 2-D convolution, NCHW with OIHW kernels, strides, dilations and zero padding. A block operator
//! over `(n, o, oh, ow, c)`, `c` summed; its kernel (im2col and a GEMM per image) is in `eval/block.rs`.

use super::rules::{not_i1, unique_names};
use super::syntax::{attr, value_op, with};
use super::{Entry, Monoid, OpFamily, OpKind};
use crate::array::Array;
use crate::dialects::teg::eval::{block as kernels, Args, EvalError};
use crate::dialects::teg::signature::{ipf, Signature};
use crate::dialects::teg::tensor_type::TensorType;
use crate::ir::{Arity, AttrKind};
use crate::zspace::ZRange;

/// `y[n, o, oh, ow] = Σ x[n, c, oh·s − p + kh·d, ow·s − p + kw·d] · k[o, c, kh, kw]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Conv2d {
    /// Per spatial dimension, how far the window moves per output cell.
    pub strides: [i64; 2],
    /// Per spatial dimension, the step between kernel taps.
    pub dilations: [i64; 2],
    /// Per spatial dimension, the zeros added on each side.
    pub padding: [i64; 2],
}

/// The convolution.
pub const OPS: &[Entry] = &[with(
    value_op(
        "teg.conv2d",
        "y[n, o, oh, ow] = Σ x[n, c, oh·s − p + kh·d, ow·s − p + kw·d] · k[o, c, kh, kw]",
        Arity::Exact(2),
        &[attr("strides", AttrKind::Array), attr("dilations", AttrKind::Array), attr("padding", AttrKind::Array)],
        "$operands `strides` $strides `dilations` $dilations `padding` $padding attr-dict `:` type($operands) (`->` type($results)^)?",
    ),
    |a| {
        let (strides, dilations, padding) = (a.pair("strides", 1)?, a.pair("dilations", 1)?, a.pair("padding", 0)?);
        Ok(OpKind::Conv2d(Conv2d { strides, dilations, padding }))
    },
)];

impl OpFamily for Conv2d {
    fn result_type(&self, operands: &[&TensorType], _: &TensorType) -> Result<TensorType, String> {
        let (x, k) = (operands[0], operands[1]);
        let Conv2d { strides: s, dilations: d, padding: p } = *self;
        if x.dims.len() != 4 || k.dims.len() != 4 {
            return Err(format!("needs x [n, c, h, w] and kernels [o, c, kh, kw], not {x} and {k}"));
        }
        if x.dims[1] != k.dims[1] || x.dtype != k.dtype {
            return Err(format!(
                "x has channels {}={} of {}, the kernels {}={} of {}",
                x.dims[1].0, x.dims[1].1, x.dtype, k.dims[1].0, k.dims[1].1, k.dtype
            ));
        }
        not_i1(x.dtype)?;
        if s.iter().chain(&d).any(|&v| v < 1) || p.iter().any(|&v| v < 0) {
            return Err(format!("strides {s:?} and dilations {d:?} must be positive, padding {p:?} not negative"));
        }
        if let Some(empty) = k.dims[2..].iter().find(|d| d.1 == 0) {
            return Err(format!("a kernel window needs at least one cell, but {}={}", empty.0, empty.1));
        }
        let mut dims = vec![x.dims[0].clone(), k.dims[0].clone()];
        for i in 0..2 {
            let (h, kh) = (x.dims[2 + i].1, k.dims[2 + i].1);
            if h as i128 + 2 * p[i] as i128 > i64::MAX as i128 {
                return Err(format!("{} padded by {} on each side would have more than {} cells", h, p[i], i64::MAX));
            }
            let oh = conv_extent(h, kh, s[i], d[i], p[i])
                .ok_or_else(|| format!("a kernel of {kh} dilated by {} does not fit {h} padded by {}", d[i], p[i]))?;
            dims.push((x.dims[2 + i].0.clone(), oh));
        }
        unique_names(&dims)?;
        Ok(TensorType { dims, dtype: x.dtype })
    }

    /// Index `(n, o, oh, ow, c)`, `c` a sum: x is read through windows of the padded input, one channel per point,
    /// the kernels one channel of one output channel per point. With `c` in the index space a convolution shards
    /// over input channels (partial sums) as matmul does over `k`.
    fn signature(&self, operands: &[&TensorType], result: &TensorType) -> Option<Signature> {
        let (x, k) = (operands[0], operands[1]);
        let Conv2d { strides: s, dilations: d, padding: p } = *self;
        let mut index = result.dims.clone();
        index.push(x.dims[1].clone());
        let c = 4;
        let window = |i: usize| ((k.dims[2 + i].1 as i64 - 1) * d[i] + 1) as u64;
        let x_rows = [
            (Some(0), 1, 0, 1),
            (Some(c), 1, 0, 1),
            (Some(2), s[0], -p[0], window(0)),
            (Some(3), s[1], -p[1], window(1)),
        ];
        let k_rows = [(Some(1), 1, 0, 1), (Some(c), 1, 0, 1), (None, 0, 0, k.dims[2].1), (None, 0, 0, k.dims[3].1)];
        let y_rows: Vec<_> = (0..4).map(|i| (Some(i), 1, 0, 1)).collect();
        Some(Signature {
            index,
            inputs: vec![("x".into(), ipf(5, &x_rows)), ("k".into(), ipf(5, &k_rows))],
            outputs: vec![("y".into(), ipf(5, &y_rows))],
            reductions: vec![(c, Monoid::Sum)],
        })
    }

    fn eval(&self, a: &Args) -> Result<Array, EvalError> {
        let (x, w) = (a.dense(0)?, a.dense(1)?);
        if a.shape.contains(&0) {
            return crate::dialects::teg::eval::generate::full(x.dtype(), a.shape, 0.0);
        }
        kernels::conv2d(&x, &w, a.shape, self.strides, self.dilations, self.padding)
    }
}

impl Conv2d {
    /// The range the signature's input IPF must cover: the input padded on both sides of each spatial dimension
    /// (a strided window may leave its last cells unread).
    pub fn padded_input(&self, x: &TensorType) -> Result<ZRange, String> {
        let (shape, p) = (x.shape(), self.padding);
        let start = vec![0, 0, -p[0], -p[1]];
        let end = vec![shape[0] as i64, shape[1] as i64, shape[2] as i64 + p[0], shape[3] as i64 + p[1]];
        ZRange::new(start, end).map_err(|e| e.0)
    }
}

/// The output extent of a convolution along one spatial dimension (`None` when the kernel is empty or does not
/// fit, or the padded input would not have `i64` coordinates).
pub fn conv_extent(input: u64, kernel: u64, stride: i64, dilation: i64, pad: i64) -> Option<u64> {
    let (input, kernel, stride, dilation, pad) =
        (input as i128, kernel as i128, stride as i128, dilation as i128, pad as i128);
    let span = (kernel - 1) * dilation + 1;
    let padded = input + 2 * pad;
    let room = padded - span;
    (kernel >= 1 && room >= 0 && stride >= 1 && padded <= i64::MAX as i128).then(|| (room / stride + 1) as u64)
}
