//! Dense strided views for strided and dilated convolutions (the pattern `teg-conv-dense` applies): the
//! whitepaper's rewrite of a sparse strided convolution into dense convolutions over strided slices of its input,
//! fused back by interleaving their results.
//!
//! Along one spatial dimension, a convolution with stride `s`, dilation `d`, padding `p` and a kernel of `K` taps
//! reads padded rows `o·s + r·d`. With `g = gcd(s, d)` (`d` taken as `s` when `K = 1`, where it does not matter),
//! every row read is a multiple of `g`: the input becomes `slice(pad(x), step g)` and the convolution stride
//! `s/g`, dilation `d/g`. When `d' = d/g` is still above 1, output rows `o ≡ q (mod d')` read only the rows
//! `q·s' + d'·m`: the slice from `q·s'` with step `d'` convolved densely (dilation 1, stride `s'`) gives them, and
//! `teg.interleave` puts the `d'` phases back in order (a short phase padded by one row, the result sliced to its
//! extent). A window shorter than its stride (dilation 1, `s' > K`) reads the rows `o·s' + r`, `r < K`: the `K`
//! slices from `r` with step `s'` interleaved gather exactly those rows, and a convolution with stride `K` reads
//! them densely. No shard of the result then reads a row no window uses. An axis whose padding is more than half
//! its extent, or that would become more than [`MAX_PHASES`] convolutions, is left as it is.

use super::ops::{decode, Conv2d, OpKind};
use super::shard_plan::SHARD_ATTR;
use super::tensor_type::{as_tensor, tensor_type, TensorType};
use super::transfers::DEVICES_ATTR;
use crate::ir::builder::OpState;
use crate::ir::rewrite::{RewritePattern, Rewriter};
use crate::ir::types::FloatKind;
use crate::ir::{Attr, AttrId, OpId, Symbol, ValueId};

/// Most convolutions one axis of a convolution becomes (its phases, or the slices a gather interleaves); an axis
/// that would need more is left as it is (the rewrite is an optimization, and this bounds the ops it adds).
pub const MAX_PHASES: u64 = 64;

/// A `teg.conv2d` with a spatial dimension that reads rows no window uses → dense convolutions over strided views.
pub struct DenseConv;

impl RewritePattern for DenseConv {
    fn name(&self) -> &'static str {
        "DenseConv"
    }

    fn root(&self) -> Option<&'static str> {
        Some("teg.conv2d")
    }

    fn match_and_rewrite(&self, op: OpId, rw: &mut Rewriter<'_>) -> bool {
        let Ok(OpKind::Conv2d(conv)) = decode(rw, op) else { return false };
        let (x, k) = (rw.body.operand(op, 0), rw.body.operand(op, 1));
        let y = rw.body.results(op).next().expect("one result");
        let (Some(xt), Some(kt), Some(yt)) = (tensor(rw, x), tensor(rw, k), tensor(rw, y)) else { return false };
        let fits = |i: usize| parts(&conv, &kt, &yt, i) <= MAX_PHASES && modest_padding(&conv, &xt, i);
        let Some(axis) = (0..2).find(|&i| wasteful(&conv, &kt, i) && fits(i)) else { return false };
        let value = Dense { op, conv, kernel: k, axis, dim: xt.dims[2 + axis].0.clone() }.build(rw, x, &yt);
        rw.replace_op(op, &[value]);
        true
    }
}

/// Whether windows along spatial `axis` skip rows: taps spread apart, or a stride longer than the window.
fn wasteful(conv: &Conv2d, kernel: &TensorType, axis: usize) -> bool {
    let taps = kernel.dims[2 + axis].1 as i64;
    effective_dilation(conv, kernel, axis) > 1 || (conv.dilations[axis] == 1 && conv.strides[axis] > taps)
}

/// Whether the explicit padding along `axis` is at most half the input's extent there: the rewrite pads the input
/// explicitly, and a tensor of mostly zeros would cost more than the rows it saves.
fn modest_padding(conv: &Conv2d, input: &TensorType, axis: usize) -> bool {
    2 * conv.padding[axis] as i128 <= input.dims[2 + axis].1 as i128
}

/// How many convolutions (phases) or gathered slices the rewrite of `axis` makes.
fn parts(conv: &Conv2d, kernel: &TensorType, result: &TensorType, axis: usize) -> u64 {
    let d = effective_dilation(conv, kernel, axis);
    let g = gcd(conv.strides[axis], d);
    let (s1, d1, taps) = (conv.strides[axis] / g, d / g, kernel.dims[2 + axis].1);
    match d1 {
        1 if s1 > taps as i64 => taps,
        1 => 1,
        _ => (d1 as u64).min(result.dims[2 + axis].1),
    }
}

/// The dilation that matters along spatial `axis`: the stride when the kernel has one tap, where any dilation
/// reads the same rows.
fn effective_dilation(conv: &Conv2d, kernel: &TensorType, axis: usize) -> i64 {
    match kernel.dims[2 + axis].1 {
        1 => conv.strides[axis],
        _ => conv.dilations[axis],
    }
}

fn gcd(mut a: i64, mut b: i64) -> i64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

fn tensor(rw: &Rewriter<'_>, v: ValueId) -> Option<TensorType> {
    as_tensor(rw, rw.body.value_type(v)).cloned()
}

/// The rewrite of one convolution along one spatial axis.
struct Dense {
    op: OpId,
    conv: Conv2d,
    kernel: ValueId,
    axis: usize,
    /// The name of the input's (and output's) dimension along `axis`.
    dim: String,
}

impl Dense {
    /// The dense form of the convolution, of type `yt`.
    fn build(&self, rw: &mut Rewriter<'_>, x: ValueId, yt: &TensorType) -> ValueId {
        let i = self.axis;
        let (s, p) = (self.conv.strides[i], self.conv.padding[i]);
        let d = effective_dilation(&self.conv, &tensor(rw, self.kernel).expect("a tensor"), i);
        let g = gcd(s, d);
        let (s1, d1) = (s / g, d / g);
        let out = yt.dims[2 + i].1;
        let mut v = x;
        if p > 0 {
            v = self.pad(rw, v, p as u64, p as u64);
        }
        if g > 1 {
            v = self.slice(rw, v, 0, g, None);
        }
        let taps = tensor(rw, self.kernel).expect("a tensor").dims[2 + i].1;
        if d1 == 1 && s1 > taps as i64 {
            return self.gather(rw, v, s1, taps, out);
        }
        if d1 == 1 {
            let y = self.dense_conv(rw, v, s1);
            return self.fit(rw, y, out);
        }
        let phases = (d1 as u64).min(out);
        let longest = out.div_ceil(d1 as u64);
        let mut parts = Vec::with_capacity(phases as usize);
        for q in 0..phases {
            let xq = self.slice(rw, v, q as i64 * s1, d1, None);
            let yq = self.dense_conv(rw, xq, s1);
            let count = (out - q).div_ceil(d1 as u64);
            let yq = self.fit(rw, yq, count);
            parts.push(if count < longest { self.pad(rw, yq, 0, longest - count) } else { yq });
        }
        let joined = self.interleave(rw, &parts);
        self.fit(rw, joined, out)
    }

    /// A window of `taps` rows moving by `stride > taps` over `v`, `out` windows: the rows the windows read,
    /// gathered by interleaving `taps` slices with step `stride` (window `o`'s rows become `o·taps … o·taps +
    /// taps − 1`), convolved with stride `taps`.
    fn gather(&self, rw: &mut Rewriter<'_>, v: ValueId, stride: i64, taps: u64, out: u64) -> ValueId {
        let rows: Vec<ValueId> = (0..taps).map(|r| self.slice(rw, v, r as i64, stride, Some(out))).collect();
        let joined = self.interleave(rw, &rows);
        let y = self.dense_conv(rw, joined, taps as i64);
        self.fit(rw, y, out)
    }

    /// `v` cut to its first `extent` cells along the axis (itself when it has that many).
    fn fit(&self, rw: &mut Rewriter<'_>, v: ValueId, extent: u64) -> ValueId {
        let have = self.extent(rw, v);
        if have == extent {
            return v;
        }
        self.slice(rw, v, 0, 1, Some(extent))
    }

    fn extent(&self, rw: &Rewriter<'_>, v: ValueId) -> u64 {
        let t = tensor(rw, v).expect("a tensor");
        t.dims.iter().find(|d| d.0 == self.dim).expect("the axis").1
    }

    /// The convolution on `x` with stride `stride`, dilation 1 and no padding along the axis; the other axis, the
    /// kernel and the op's attributes as they were.
    fn dense_conv(&self, rw: &mut Rewriter<'_>, x: ValueId, stride: i64) -> ValueId {
        let mut conv = self.conv.clone();
        (conv.strides[self.axis], conv.dilations[self.axis], conv.padding[self.axis]) = (stride, 1, 0);
        let (xt, kt) = (tensor(rw, x).expect("a tensor"), tensor(rw, self.kernel).expect("a tensor"));
        let yt = crate::dialects::teg::ops::OpFamily::result_type(&conv, &[&xt, &kt], &xt).expect("windows fit");
        let ints = |rw: &mut Rewriter<'_>, v: [i64; 2]| int_array(rw, &v);
        let (strides, dilations, padding) = (ints(rw, conv.strides), ints(rw, conv.dilations), ints(rw, conv.padding));
        let mut state = self.state(rw, "teg.conv2d", &[x, self.kernel], yt);
        let attrs = self.conv_attrs(rw);
        state.attrs.extend(attrs);
        let state = state.prop(rw.interners(), "strides", strides).prop(rw.interners(), "dilations", dilations).prop(
            rw.interners(),
            "padding",
            padding,
        );
        rw.create_value(state)
    }

    /// `v` sliced along the axis from `start` with `step`, `count` cells (all that fit when `None`).
    fn slice(&self, rw: &mut Rewriter<'_>, v: ValueId, start: i64, step: i64, count: Option<u64>) -> ValueId {
        let n = self.extent(rw, v) as i64;
        let count = count.unwrap_or(((n - start) as u64).div_ceil(step as u64));
        let stop = if count == 0 { start } else { start + (count as i64 - 1) * step + 1 };
        let t = self.resized(rw, v, count);
        let props = [("start", start), ("stop", stop), ("step", step)];
        let mut state = self.state(rw, "teg.slice", &[v], t);
        state = self.dim_prop(rw, state);
        for (name, value) in props {
            let i64t = rw.interners().int_type(64);
            let value = rw.interners().int_attr(value as i128, i64t);
            state = state.prop(rw.interners(), name, value);
        }
        rw.create_value(state)
    }

    /// `v` with `low` and `high` zeros added along the axis.
    fn pad(&self, rw: &mut Rewriter<'_>, v: ValueId, low: u64, high: u64) -> ValueId {
        let t = self.resized(rw, v, self.extent(rw, v) + low + high);
        let mut state = self.state(rw, "teg.pad", &[v], t);
        state = self.dim_prop(rw, state);
        let i64t = rw.interners().int_type(64);
        let f64t = rw.interners().float_type(FloatKind::F64);
        let (lo, hi) = (rw.interners().int_attr(low as i128, i64t), rw.interners().int_attr(high as i128, i64t));
        let mode = rw.interners().string_attr("constant");
        let zero = rw.interners().attr(Attr::Float { bits: 0f64.to_bits(), ty: f64t });
        for (name, value) in [("low", lo), ("high", hi), ("mode", mode), ("value", zero)] {
            state = state.prop(rw.interners(), name, value);
        }
        rw.create_value(state)
    }

    /// The `parts` (equal shapes) alternating along the axis.
    fn interleave(&self, rw: &mut Rewriter<'_>, parts: &[ValueId]) -> ValueId {
        let t = self.resized(rw, parts[0], self.extent(rw, parts[0]) * parts.len() as u64);
        let state = self.state(rw, "teg.interleave", parts, t);
        let state = self.dim_prop(rw, state);
        rw.create_value(state)
    }

    /// `v`'s type with `extent` cells along the axis.
    fn resized(&self, rw: &Rewriter<'_>, v: ValueId, extent: u64) -> TensorType {
        let mut t = tensor(rw, v).expect("a tensor");
        t.dims.iter_mut().find(|d| d.0 == self.dim).expect("the axis").1 = extent;
        t
    }

    /// A new op of the rewrite, on the devices of the convolution when it says (a shard of a split graph).
    fn state(&self, rw: &mut Rewriter<'_>, name: &str, operands: &[ValueId], result: TensorType) -> OpState {
        let loc = rw.body.op(self.op).loc;
        let ty = tensor_type(rw.interners(), result);
        let mut state = OpState::new(rw.interners(), name, loc).operands(operands).results(&[ty]);
        if let Some(devices) = rw.op_attr(self.op, DEVICES_ATTR) {
            state.attrs.push((rw.interners().sym(DEVICES_ATTR), devices));
        }
        state
    }

    /// The convolution's attributes for the dense ones: its plan keeps what it says of the other dimensions (the
    /// extents along the rewritten one change, so its split there is dropped).
    fn conv_attrs(&self, rw: &mut Rewriter<'_>) -> Vec<(Symbol, AttrId)> {
        let (shard, devices) = (rw.interners().sym(SHARD_ATTR), rw.interners().sym(DEVICES_ATTR));
        let dim = rw.interners().sym(&self.dim);
        let attrs = rw.body.op(self.op).attrs;
        let mut out: Vec<(Symbol, AttrId)> =
            rw.dict_entries(attrs).iter().filter(|e| e.0 != devices).copied().collect();
        if let Some(entry) = out.iter_mut().find(|e| e.0 == shard) {
            let kept: Vec<(Symbol, AttrId)> = rw.dict_entries(entry.1).iter().filter(|e| e.0 != dim).copied().collect();
            entry.1 = rw.interners().dict_attr(kept);
        }
        out.retain(|e| e.0 != shard || !rw.dict_entries(e.1).is_empty());
        out
    }

    fn dim_prop(&self, rw: &mut Rewriter<'_>, state: OpState) -> OpState {
        let dim = rw.interners().string_attr(&self.dim);
        state.prop(rw.interners(), "dim", dim)
    }
}

fn int_array(rw: &mut Rewriter<'_>, values: &[i64]) -> AttrId {
    let i64t = rw.interners().int_type(64);
    let items: Vec<AttrId> = values.iter().map(|&v| rw.interners().int_attr(v as i128, i64t)).collect();
    rw.interners().attr(Attr::Array(items.into()))
}
