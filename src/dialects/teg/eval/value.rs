//! The evaluator's values: an array, or a strided view of one. Views (`permute`, `slice`, `reverse`, `select`,
//! `squeeze`, `unsqueeze`, broadcasts) copy nothing: they share their operand's cells and say where each of their
//! cells sits (an offset and a signed stride per dimension). Cell ops read views in place; any other op reads a
//! dense copy, made when it needs one.

use super::broadcast::{for_each_offset, Read};
use super::{fail, EvalError};
use crate::array::alloc::room;
use crate::array::{strides, Array};
use crate::map_data;
use std::borrow::Cow;
use std::rc::Rc;

/// Where a value's cells live: an input borrowed from the caller, or an array the evaluator made.
#[derive(Clone)]
pub enum Base<'a> {
    /// An input.
    Borrowed(&'a Array),
    /// A computed array, shared by the views of it.
    Owned(Rc<Array>),
}

/// A value: the cells of `base`, read through `layout` when it is a view.
#[derive(Clone)]
pub struct Value<'a> {
    base: Base<'a>,
    layout: Option<Strided>,
}

/// A strided view: the value's extents, and for its cell at coordinate `c` the base cell `offset + Σ c·strides`.
#[derive(Clone, Debug, PartialEq)]
pub struct Strided {
    /// The view's extents.
    pub shape: Vec<u64>,
    /// The base cell of coordinate 0.
    pub offset: usize,
    /// Per dimension, how far one step moves in the base (0: broadcast, negative: reversed).
    pub strides: Vec<isize>,
}

impl Strided {
    /// The plain row-major layout of `shape`.
    pub fn dense(shape: &[u64]) -> Strided {
        let strides = strides(shape).into_iter().map(|s| s as isize).collect();
        Strided { shape: shape.to_vec(), offset: 0, strides }
    }

    /// `x` (dimension `names`) broadcast by dimension name to a result of dimension `out` and extents `shape`.
    pub fn broadcast_to(out: &[String], names: &[String], x: &Strided, shape: &[u64]) -> Strided {
        let read = Read::of(out, names, x);
        Strided { shape: shape.to_vec(), offset: read.offset, strides: read.strides }
    }
}

impl<'a> Value<'a> {
    /// An input, borrowed.
    pub fn borrowed(a: &'a Array) -> Value<'a> {
        Value { base: Base::Borrowed(a), layout: None }
    }

    /// A computed array.
    pub fn owned(a: Array) -> Value<'a> {
        Value { base: Base::Owned(Rc::new(a)), layout: None }
    }

    /// The array holding the cells (for a view, more cells than the view's).
    pub fn base(&self) -> &Array {
        match &self.base {
            Base::Borrowed(a) => a,
            Base::Owned(a) => a,
        }
    }

    /// How the value's cells sit in [`Value::base`].
    pub fn layout(&self) -> Cow<'_, Strided> {
        match &self.layout {
            Some(l) => Cow::Borrowed(l),
            None => Cow::Owned(Strided::dense(self.base().shape())),
        }
    }

    /// A view of the same cells through `layout`.
    pub fn view(&self, layout: Strided) -> Value<'a> {
        Value { base: self.base.clone(), layout: Some(layout) }
    }

    /// The value as a dense array: the base itself when the value is not a view, else a copy of its cells (in a
    /// fallibly allocated buffer: running out of memory is an error).
    pub fn dense(&self) -> Result<Cow<'_, Array>, EvalError> {
        let Some(l) = &self.layout else { return Ok(Cow::Borrowed(self.base())) };
        let n = l.shape.iter().product::<u64>() as usize;
        let read = Read::of_layout(l);
        let data = map_data!(self.base().data(), v => {
            let mut out = room(n).or_else(|e| fail(format!("{e} for a copy of a view")))?;
            for_each_offset(&l.shape, [&read], |[at]| out.push(v[at]));
            out
        });
        Ok(Cow::Owned(Array::new(l.shape.clone(), data).expect("the view's count")))
    }

    /// The value as an array of its own, moved out when nothing else shares it.
    pub fn into_array(self) -> Result<Array, EvalError> {
        match (self.base, self.layout) {
            (Base::Owned(a), None) => Ok(Rc::try_unwrap(a).unwrap_or_else(|a| (*a).clone())),
            (base, layout) => Ok(Value { base, layout }.dense()?.into_owned()),
        }
    }

    /// The array, when this value is the only holder of a dense computed array (so that an op may overwrite it).
    pub fn into_unique(self) -> Result<Array, Value<'a>> {
        match (self.base, self.layout) {
            (Base::Owned(a), None) => Rc::try_unwrap(a).map_err(Value::shared),
            (base, layout) => Err(Value { base, layout }),
        }
    }

    fn shared(a: Rc<Array>) -> Value<'a> {
        Value { base: Base::Owned(a), layout: None }
    }
}
