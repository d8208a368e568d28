//! CK tensor descriptors: a naive (`naive(lengths, strides)`) or packed (`packed(lengths)`) descriptor, then
//! stages of coordinate transforms (`transform(merge([3, 4]) [0, 1] -> [0], ...)`), each mapping upper (user)
//! coordinates to the lower ones of the stage below, as `transform_tensor_descriptor` does. This file holds the
//! descriptor, its checks, its printing, the descriptor of a strided layout, and CK's own address function (the
//! transforms evaluated per coordinate); `ck_to_core.rs` gives it the core meaning.

use crate::layout::address_fn::AddressFn;
use crate::layout::strided::{Dim, Factor, Layout, LayoutError};
use std::fmt;
use std::hash::Hash;

/// A transform argument as written: an integer or a list.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Arg {
    /// `3`.
    Int(i64),
    /// `[3, 4]`.
    List(Vec<i64>),
}

impl fmt::Display for Arg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Arg::Int(v) => write!(f, "{v}"),
            Arg::List(v) => write!(f, "[{}]", v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", ")),
        }
    }
}

/// What a transform does, upper coordinates to lower ones.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `pass_through(n)`: `low = up`.
    PassThrough(u64),
    /// `pad(n, left, right)` (and `left_pad(n, l)`, `right_pad(n, r)`): `low = up − left`, valid for
    /// `left ≤ up < n + left`; the other coordinates read a default and are not stored.
    Pad {
        /// Lower length.
        len: u64,
        /// Coordinates before the data.
        left: u64,
        /// Coordinates after the data.
        right: u64,
    },
    /// `merge(lengths)`: one upper coordinate split row-major (last fastest) into the lower ones.
    Merge(Vec<u64>),
    /// `unmerge(lengths)`: upper coordinates combined row-major into one lower one.
    Unmerge(Vec<u64>),
    /// `embed(lengths, coefficients)`: `low = Σ up_i · c_i`.
    Embed(Vec<u64>, Vec<i64>),
    /// `slice(n, begin, end)`: `low = up + begin`, upper length `end − begin`.
    Slice {
        /// First lower coordinate.
        begin: u64,
        /// One past the last.
        end: u64,
    },
    /// `offset(n, o)`: `low = up + o`.
    Offset(u64, i64),
    /// `freeze(i)`: no upper coordinate; `low = i`.
    Freeze(i64),
    /// `replicate(n)` / `insert(n)`: an upper coordinate of length `n` that reaches nothing below (broadcast).
    Replicate(u64),
    /// `modulo(n, m)`: `low = up mod m` (no strided form).
    Modulo(u64, u64),
    /// `xor(lengths)`: `low1 = up1 XOR (up0 mod len1)` (a swizzle; no strided form).
    Xor(Vec<u64>),
}

/// One transform of a stage, as written, with the lower dimensions it reads and the upper ones it defines.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Transform {
    /// The name as written (`pass_through`, `right_pad`, ...).
    pub name: String,
    /// The arguments as written.
    pub args: Vec<Arg>,
    /// What it does.
    pub kind: Kind,
    /// Lower dimension numbers (of the stage below).
    pub lower: Vec<u64>,
    /// Upper dimension numbers (of this stage).
    pub upper: Vec<u64>,
}

fn nat(v: i64, what: &str) -> Result<u64, String> {
    u64::try_from(v).map_err(|_| format!("{what} must not be negative"))
}

fn nats(v: &[i64], what: &str) -> Result<Vec<u64>, String> {
    v.iter().map(|&x| nat(x, what)).collect()
}

impl Transform {
    /// A transform from its written form, checking the arguments and how many dimensions it reads and defines.
    pub fn new(name: &str, args: Vec<Arg>, lower: Vec<u64>, upper: Vec<u64>) -> Result<Transform, String> {
        use Arg::{Int, List};
        let kind = match (name, args.as_slice()) {
            ("pass_through", [Int(n)]) => Kind::PassThrough(nat(*n, "a length")?),
            ("pad", [Int(n), Int(l), Int(r)]) => {
                Kind::Pad { len: nat(*n, "a length")?, left: nat(*l, "padding")?, right: nat(*r, "padding")? }
            }
            ("left_pad", [Int(n), Int(l)]) => {
                Kind::Pad { len: nat(*n, "a length")?, left: nat(*l, "padding")?, right: 0 }
            }
            ("right_pad", [Int(n), Int(r)]) => {
                Kind::Pad { len: nat(*n, "a length")?, left: 0, right: nat(*r, "padding")? }
            }
            ("merge", [List(l)]) => Kind::Merge(nats(l, "a length")?),
            ("unmerge", [List(l)]) => Kind::Unmerge(nats(l, "a length")?),
            ("embed", [List(l), List(c)]) if l.len() == c.len() => Kind::Embed(nats(l, "a length")?, c.clone()),
            ("slice", [Int(n), Int(b), Int(e)]) if 0 <= *b && b <= e && e <= n => {
                Kind::Slice { begin: *b as u64, end: *e as u64 }
            }
            ("offset", [Int(n), Int(o)]) => Kind::Offset(nat(*n, "a length")?, *o),
            ("freeze", [Int(i)]) => Kind::Freeze(*i),
            ("replicate" | "insert", [Int(n)]) => Kind::Replicate(nat(*n, "a length")?),
            ("modulo", [Int(n), Int(m)]) if *m > 0 => Kind::Modulo(nat(*n, "a length")?, *m as u64),
            ("xor", [List(l)]) => Kind::Xor(nats(l, "a length")?),
            _ => return Err(format!("unknown CK transform or wrong arguments: {name}({})", join(&args))),
        };
        let (lows, ups) = match &kind {
            Kind::Merge(l) => (l.len(), 1),
            Kind::Unmerge(l) | Kind::Embed(l, _) => (1, l.len()),
            Kind::Freeze(_) => (1, 0),
            Kind::Replicate(_) => (0, 1),
            Kind::Xor(l) => (l.len(), l.len()),
            _ => (1, 1),
        };
        if let Kind::Pad { len, left, right } = &kind {
            len.checked_add(*left).and_then(|n| n.checked_add(*right)).ok_or("padding too large")?;
        }
        if let Kind::Merge(l) | Kind::Unmerge(l) = &kind {
            l.iter().try_fold(1u64, |a, &b| a.checked_mul(b)).ok_or("lengths too large")?;
        }
        if lower.len() != lows || upper.len() != ups {
            return Err(format!(
                "{name} reads {lows} lower and defines {ups} upper dimensions, not {} and {}",
                lower.len(),
                upper.len()
            ));
        }
        Ok(Transform { name: name.to_string(), args, kind, lower, upper })
    }

    /// Lengths of the upper dimensions it defines.
    fn upper_lengths(&self) -> Vec<u64> {
        match &self.kind {
            Kind::PassThrough(n) | Kind::Offset(n, _) | Kind::Replicate(n) | Kind::Modulo(n, _) => vec![*n],
            Kind::Pad { len, left, right } => vec![len + left + right],
            Kind::Merge(l) => vec![l.iter().product()],
            Kind::Unmerge(l) | Kind::Embed(l, _) | Kind::Xor(l) => l.clone(),
            Kind::Slice { begin, end } => vec![end - begin],
            Kind::Freeze(_) => vec![],
        }
    }
}

fn join(args: &[Arg]) -> String {
    args.iter().map(|a| a.to_string()).collect::<Vec<_>>().join(", ")
}

impl fmt::Display for Transform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |v: &[u64]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", ");
        write!(f, "{}({}) [{}] -> [{}]", self.name, join(&self.args), list(&self.lower), list(&self.upper))
    }
}

/// `naive(lengths, strides)` or `packed(lengths)`, then transform stages.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CkLayout {
    /// Lengths of the base descriptor.
    pub lengths: Vec<u64>,
    /// Its strides; `None` for a packed (row-major) descriptor.
    pub strides: Option<Vec<i64>>,
    /// The stages, bottom up.
    pub stages: Vec<Vec<Transform>>,
}

impl CkLayout {
    /// A descriptor from its written base and stages.
    pub fn new(base: &str, args: Vec<Arg>, stages: Vec<Vec<Transform>>) -> Result<CkLayout, String> {
        let (lengths, strides) = match (base, args.as_slice()) {
            ("naive", [Arg::List(l), Arg::List(s)]) if l.len() == s.len() => (nats(l, "a length")?, Some(s.clone())),
            ("packed", [Arg::List(l)]) => (nats(l, "a length")?, None),
            _ => return Err(format!("expected naive([lengths], [strides]) or packed([lengths]), found {base}(...)")),
        };
        Ok(CkLayout { lengths, strides, stages })
    }

    /// The strides of the base descriptor (row-major for a packed one).
    pub(super) fn base_strides(&self) -> Vec<i64> {
        if let Some(s) = &self.strides {
            return s.clone();
        }
        let mut out = vec![0i64; self.lengths.len()];
        let mut acc = 1i64;
        for k in (0..self.lengths.len()).rev() {
            out[k] = acc;
            acc = acc.saturating_mul(self.lengths[k] as i64);
        }
        out
    }

    /// Lengths of every stage's dimensions, bottom (base) first; checks that each stage reads every lower
    /// dimension once and defines its upper dimensions `0..n` once.
    pub(super) fn stage_lengths(&self) -> Result<Vec<Vec<u64>>, LayoutError> {
        let mut levels = vec![self.lengths.clone()];
        for (s, stage) in self.stages.iter().enumerate() {
            let below = levels.last().unwrap().len();
            let mut read = vec![0; below];
            let n_upper: usize = stage.iter().map(|t| t.upper.len()).sum();
            let mut lengths = vec![None; n_upper];
            for t in stage {
                for &l in &t.lower {
                    *read.get_mut(l as usize).ok_or_else(|| stage_error(s, format!("no lower dimension {l}")))? += 1;
                }
                for (&u, len) in t.upper.iter().zip(t.upper_lengths()) {
                    let slot = lengths
                        .get_mut(u as usize)
                        .ok_or_else(|| stage_error(s, format!("upper dimension {u} skips a number")))?;
                    if slot.replace(len).is_some() {
                        return Err(stage_error(s, format!("upper dimension {u} is defined twice")));
                    }
                }
            }
            if let Some(l) = read.iter().position(|&r| r != 1) {
                return Err(stage_error(s, format!("lower dimension {l} is read {} times, not once", read[l])));
            }
            levels.push(lengths.into_iter().map(|l| l.unwrap()).collect());
        }
        Ok(levels)
    }
}

/// An error in transform stage `s` (numbered from 1 in the message).
pub(super) fn stage_error(s: usize, msg: impl std::fmt::Display) -> LayoutError {
    LayoutError(format!("transform stage {}: {msg}", s + 1))
}

impl fmt::Display for CkLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |v: &[u64]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", ");
        match &self.strides {
            Some(s) => {
                let s: Vec<String> = s.iter().map(|x| x.to_string()).collect();
                write!(f, "naive([{}], [{}])", list(&self.lengths), s.join(", "))?
            }
            None => write!(f, "packed([{}])", list(&self.lengths))?,
        }
        for stage in &self.stages {
            let items: Vec<String> = stage.iter().map(|t| t.to_string()).collect();
            write!(f, ", transform({})", items.join(", "))?;
        }
        Ok(())
    }
}

impl CkLayout {
    /// The CK descriptor of a core layout, where CK can say it: a naive descriptor over every digit (most major
    /// first), one stage merging each dimension's digits (`pass_through` for one digit, `replicate` for none),
    /// and one stage that slices digits past the extent and pads unstored coordinates. CK has no base offset (but
    /// its left padding's) and no replicas; the result is checked to place every element where `l` does (its
    /// buffer size is CK's own, derived from the strides).
    pub fn from_repr(l: &Layout) -> Result<CkLayout, LayoutError> {
        let fail = |m: &str| Err(LayoutError(format!("CK cannot express this layout: {m}")));
        if l.factors.iter().any(|f| f.dim.is_none() && f.extent > 1) {
            return fail("it stores elements twice");
        }
        let (mut lengths, mut strides, mut merges, mut fixes) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for (k, d) in l.dims.iter().enumerate() {
            let digits: Vec<Factor> = l.digits(Some(k)).into_iter().rev().filter(|f| f.extent > 1).collect();
            let first = lengths.len() as u64;
            for f in &digits {
                lengths.push(f.extent);
                strides.push(f.stride);
            }
            let lower: Vec<u64> = (first..lengths.len() as u64).collect();
            let padded: u64 = digits.iter().map(|f| f.extent).product();
            let (name, args) = match digits.len() {
                0 => ("replicate", vec![Arg::Int(1)]),
                1 => ("pass_through", vec![Arg::Int(padded as i64)]),
                _ => ("merge", vec![Arg::List(digits.iter().map(|f| f.extent as i64).collect())]),
            };
            merges.push(Transform::new(name, args, lower, vec![k as u64]).map_err(LayoutError)?);
            fixes.push(fix_extent(k as u64, padded, d)?);
        }
        // Stages that only pass every dimension through are left out.
        let identity = |stage: &[Transform]| {
            stage.iter().enumerate().all(|(k, t)| matches!(t.kind, Kind::PassThrough(_)) && t.lower == [k as u64])
        };
        let stages = [merges, fixes].into_iter().filter(|st| !identity(st)).collect();
        let layout = CkLayout { lengths, strides: Some(strides), stages };
        let back = layout.to_core()?.into_strided()?;
        if back.base != l.base {
            return fail(&format!("it starts at offset {}, and CK descriptors start at 0", l.base - back.base));
        }
        if !crate::layout::canonical::same_placement(&back, l)? {
            return fail("its padding is not CK's (padding in CK holds no buffer positions)");
        }
        Ok(layout)
    }
}

/// The transform taking a dimension with `padded` digit values to its extent with stored range `[start, stored)`.
fn fix_extent(k: u64, padded: u64, d: &Dim) -> Result<Transform, LayoutError> {
    let n = |v: u64| Arg::Int(v as i64);
    let (name, args) = if d.start > 0 || d.stored < d.extent {
        if padded < d.stored {
            return Err(LayoutError("CK cannot express this layout: digits do not cover the stored range".into()));
        }
        ("pad", vec![n(d.stored - d.start), n(d.start), n(d.extent - d.stored)])
    } else if padded > d.extent {
        ("slice", vec![n(padded), n(0), n(d.extent)])
    } else {
        ("pass_through", vec![n(d.extent.max(1))])
    };
    Transform::new(name, args, vec![k], vec![k]).map_err(LayoutError)
}

/// CK's own function, for what has no strided or staged form: the transform stages evaluated top down, then the
/// base strides.
impl AddressFn for CkLayout {
    fn notation(&self) -> &'static str {
        "ck"
    }

    fn cosize(&self) -> Result<u64, LayoutError> {
        let span: i128 =
            self.lengths.iter().zip(self.base_strides()).map(|(&l, s)| (l as i128 - 1).max(0) * s.max(0) as i128).sum();
        u64::try_from(span + 1).map_err(|_| LayoutError("descriptor too large".into()))
    }

    fn offset(&self, e: &[u64]) -> Option<u64> {
        ck_offset(self, e)
    }

    /// Every stage's lengths, then each transform of each stage.
    fn steps_per_offset(&self) -> u64 {
        self.stages.iter().map(|s| 2 * s.len() as u64 + 1).sum::<u64>().max(1)
    }
}

/// CK: each stage's transforms map upper coordinates to lower ones (top stage first), then the base strides.
fn ck_offset(ck: &CkLayout, top: &[u64]) -> Option<u64> {
    let levels = ck.stage_lengths().ok()?;
    let mut upper: Vec<i64> = top.iter().map(|&c| c as i64).collect();
    for (s, stage) in ck.stages.iter().enumerate().rev() {
        let mut lower = vec![0i64; levels[s].len()];
        for t in stage {
            let up = |i: usize| upper[t.upper[i] as usize];
            let low = |i: usize| t.lower[i] as usize;
            match &t.kind {
                Kind::PassThrough(_) => lower[low(0)] = up(0),
                Kind::Offset(_, o) => lower[low(0)] = up(0) + o,
                Kind::Slice { begin, .. } => lower[low(0)] = up(0) + *begin as i64,
                Kind::Pad { len, left, .. } => {
                    let v = up(0) - *left as i64;
                    if v < 0 || v >= *len as i64 {
                        return None;
                    }
                    lower[low(0)] = v;
                }
                Kind::Merge(lengths) => {
                    let mut v = up(0);
                    for (i, &l) in lengths.iter().enumerate().rev() {
                        let l = l.max(1) as i64;
                        lower[low(i)] = if i == 0 { v } else { v % l };
                        v /= l;
                    }
                }
                Kind::Unmerge(lengths) => {
                    lower[low(0)] = (0..lengths.len()).fold(0, |acc, i| acc * lengths[i] as i64 + up(i));
                }
                Kind::Embed(_, coefs) => lower[low(0)] = coefs.iter().enumerate().map(|(i, c)| up(i) * c).sum(),
                Kind::Freeze(i) => lower[low(0)] = *i,
                Kind::Replicate(_) => {}
                Kind::Modulo(_, m) => lower[low(0)] = up(0).rem_euclid(*m as i64),
                Kind::Xor(lengths) => {
                    lower[low(0)] = up(0);
                    lower[low(1)] = up(1) ^ up(0).rem_euclid(lengths[1].max(1) as i64);
                }
            }
        }
        upper = lower;
    }
    let offset: i64 = upper.iter().zip(ck.base_strides()).map(|(c, s)| c * s).sum();
    u64::try_from(offset).ok()
}
