//! The core meaning of a CK descriptor: each top coordinate pushed down the transform stages as digits with
//! coefficients. Where a transform needs a whole coordinate but meets a row-major combination of several (a
//! reshape: `unmerge` above `merge`), those top coordinates are first regrouped into one and the lowering starts
//! again; `modulo` and `xor` of whole coordinates become coordinate stages; what is left (a transform of an
//! uneven mix of coordinates) is CK's own function, evaluated per coordinate (its `AddressFn` in `ck.rs`).

use super::ck::{stage_error, CkLayout, Kind, Transform};
use crate::layout::core_form::GeneralLayout;
use crate::layout::stage::Stage;
use crate::layout::strided::{Dim, Factor, Layout, LayoutError};

impl CkLayout {
    /// Checks the structure and that the descriptor has a core form.
    pub fn validate(&self) -> Result<(), LayoutError> {
        self.to_core().map(|_| ())
    }

    /// The core form: dimensions = the top stage's upper dimensions (row-major numbering).
    pub fn to_core(&self) -> Result<GeneralLayout, LayoutError> {
        to_core(self)
    }
}

/// Lowers a CK descriptor to the core form (dimensions = the top stage's upper dimensions).
fn to_core(ck: &CkLayout) -> Result<GeneralLayout, LayoutError> {
    let levels = ck.stage_lengths()?;
    let top = levels.last().unwrap();
    let mut groups: Vec<Vec<usize>> = (0..top.len()).map(|u| vec![u]).collect();
    loop {
        match lower(ck, &levels, &groups) {
            Ok(g) => return Ok(g),
            Err(Failure::Combined { lin, extents, message }) => match regrouped(&groups, &lin, &extents) {
                Some(next) => groups = next,
                // Else CK's own function, evaluated coordinate by coordinate.
                None => {
                    let logical = top.iter().map(|&n| Dim::new(n)).collect();
                    return GeneralLayout::computed(logical, ck.clone())
                        .map_err(|e| LayoutError(format!("{} ({message})", e.0)));
                }
            },
            Err(Failure::Error(e)) => return Err(e),
        }
    }
}

/// Why one lowering attempt stopped.
enum Failure {
    /// A transform needs a whole coordinate and met `lin` (the attempt's grouped extents are `extents`).
    Combined { lin: Lin, extents: Vec<u64>, message: String },
    /// Anything else: final.
    Error(LayoutError),
}

impl From<LayoutError> for Failure {
    fn from(e: LayoutError) -> Failure {
        Failure::Error(e)
    }
}

/// One attempt with the top coordinates combined into `groups` (each row-major, the last fastest).
fn lower(ck: &CkLayout, levels: &[Vec<u64>], groups: &[Vec<usize>]) -> Result<GeneralLayout, Failure> {
    let top = levels.last().unwrap();
    let extents: Vec<u64> = groups.iter().map(|g| g.iter().map(|&u| top[u]).product()).collect();
    let mut state = State { stored: extents.iter().map(|&n| (0, n)).collect(), stages: Vec::new(), extents };
    let mut exprs = vec![Lin::default(); top.len()];
    for (g, group) in groups.iter().enumerate() {
        let mut place = 1u64;
        for &u in group.iter().rev() {
            exprs[u] = Lin { konst: 0, terms: vec![(g, place, top[u].max(1), 1)] };
            place *= top[u].max(1);
        }
    }
    for (s, stage) in ck.stages.iter().enumerate().rev() {
        let mut lower = vec![Lin::default(); levels[s].len()];
        for t in stage {
            state.apply(t, &exprs, &mut lower).map_err(|e| match e {
                Failure::Combined { lin, extents, message } => {
                    Failure::Combined { lin, extents, message: stage_error(s, message).0 }
                }
                Failure::Error(e) => Failure::Error(stage_error(s, e)),
            })?;
        }
        exprs = lower;
    }
    Ok(state.finish(ck, top, groups, &exprs)?)
}

/// The groups with the coordinates `lin` combines merged into one, if `lin` is a row-major combination of whole
/// grouped coordinates.
fn regrouped(groups: &[Vec<usize>], lin: &Lin, extents: &[u64]) -> Option<Vec<Vec<usize>>> {
    let mut terms = lin.normalized().terms;
    if lin.konst != 0 || terms.len() < 2 || terms.iter().any(|&(d, p, e, _)| p != 1 || e != extents[d]) {
        return None;
    }
    terms.sort_by_key(|t| t.3);
    let mut coef = 1i64;
    for &(_, _, e, c) in &terms {
        if c != coef {
            return None;
        }
        coef = coef.checked_mul(e as i64)?;
    }
    let members: Vec<usize> = terms.iter().rev().map(|t| t.0).collect();
    let merged: Vec<usize> = members.iter().flat_map(|&g| groups[g].iter().copied()).collect();
    let first = *members.iter().min()?;
    let mut out = Vec::new();
    for (g, group) in groups.iter().enumerate() {
        if g == first {
            out.push(merged.clone());
        } else if !members.contains(&g) {
            out.push(group.clone());
        }
    }
    Some(out)
}

/// A lower coordinate as `konst + Σ ((grouped_dim / place) mod extent) · coef`.
#[derive(Clone, Debug, Default)]
struct Lin {
    konst: i64,
    terms: Vec<(usize, u64, u64, i64)>,
}

impl Lin {
    fn coordinate(dim: usize, extent: u64) -> Lin {
        Lin { konst: 0, terms: vec![(dim, 1, extent.max(1), 1)] }
    }

    /// The same value with digits that continue each other (same dimension, next place, scaled coefficient)
    /// merged and extent-1 digits dropped.
    fn normalized(&self) -> Lin {
        let mut terms: Vec<(usize, u64, u64, i64)> = self.terms.iter().copied().filter(|t| t.2 > 1).collect();
        terms.sort_by_key(|t| (t.0, t.1));
        let mut out: Vec<(usize, u64, u64, i64)> = Vec::new();
        for t in terms {
            match out.last_mut() {
                Some(last)
                    if last.0 == t.0
                        && Some(t.1) == last.1.checked_mul(last.2)
                        && Some(t.3) == last.3.checked_mul(last.2 as i64) =>
                {
                    last.2 *= t.2
                }
                _ => out.push(t),
            }
        }
        Lin { konst: self.konst, terms: out }
    }

    /// The grouped dimension this is exactly the whole coordinate of, if it is one.
    fn whole(&self, extents: &[u64]) -> Option<usize> {
        let single = |terms: &[(usize, u64, u64, i64)]| match terms {
            [(dim, 1, extent, 1)] if self.konst == 0 && *extent == extents[*dim].max(1) => Some(*dim),
            _ => None,
        };
        single(&self.terms).or_else(|| single(&self.normalized().terms))
    }

    fn scaled(&self, c: i64) -> Result<Lin, LayoutError> {
        let big = || LayoutError("descriptor too large".into());
        let terms = self.terms.iter().map(|&(d, p, e, k)| Ok((d, p, e, k.checked_mul(c).ok_or_else(big)?)));
        Ok(Lin { konst: self.konst.checked_mul(c).ok_or_else(big)?, terms: terms.collect::<Result<_, _>>()? })
    }

    fn add(&mut self, other: Lin) {
        self.konst += other.konst;
        self.terms.extend(other.terms);
    }
}

/// What the stages have said so far about the grouped top coordinates.
struct State {
    /// Per grouped dimension, the stored range `[start, end)`.
    stored: Vec<(u64, u64)>,
    /// Coordinate stages met (top first).
    stages: Vec<Stage>,
    /// Extents of the grouped dimensions after those stages.
    extents: Vec<u64>,
}

fn err(msg: &str) -> Failure {
    Failure::Error(LayoutError(msg.to_string()))
}

impl State {
    /// The grouped dimension `lin` is the whole coordinate of, or a failure the caller may cure by regrouping.
    fn whole(&self, lin: &Lin, what: &str) -> Result<usize, Failure> {
        lin.whole(&self.extents).ok_or_else(|| Failure::Combined {
            lin: lin.clone(),
            extents: self.extents.clone(),
            message: format!("{what} of a combined coordinate has no core form yet"),
        })
    }

    /// Pushes the upper values of transform `t` down to its lower dimensions.
    fn apply(&mut self, t: &Transform, upper: &[Lin], lower: &mut [Lin]) -> Result<(), Failure> {
        let up = |i: usize| upper[t.upper[i] as usize].clone();
        let low = t.lower.first().map(|&l| l as usize);
        match &t.kind {
            Kind::PassThrough(_) => lower[low.unwrap()] = up(0),
            Kind::Offset(_, o) => {
                let konst = up(0).konst.checked_add(*o).ok_or_else(|| err("offset too large"))?;
                lower[low.unwrap()] = Lin { konst, ..up(0) }
            }
            Kind::Slice { begin, .. } => {
                let konst = i64::try_from(*begin).ok().and_then(|b| up(0).konst.checked_add(b));
                lower[low.unwrap()] = Lin { konst: konst.ok_or_else(|| err("slice too large"))?, ..up(0) }
            }
            Kind::Pad { len, left, .. } => {
                // The coordinates outside [left, left + len) read a default: not stored, and not in the buffer.
                let dim = self.whole(&up(0), "padding")?;
                let (start, end) = (*left, left.checked_add(*len).ok_or_else(|| err("padding too large"))?);
                self.stored[dim] = (start.max(self.stored[dim].0), end.min(self.stored[dim].1));
                let konst = -i64::try_from(*left).map_err(|_| err("padding too large"))?;
                lower[low.unwrap()] = Lin { konst, ..Lin::coordinate(dim, self.stored[dim].1) };
            }
            Kind::Merge(lengths) => {
                let dim = self.whole(&up(0), "merging")?;
                let mut place = 1u64;
                for (i, &l) in lengths.iter().enumerate().rev() {
                    let e = if i == 0 { self.extents[dim].div_ceil(place) } else { l };
                    lower[t.lower[i] as usize] = Lin { konst: 0, terms: vec![(dim, place, e.max(1), 1)] };
                    place = place.checked_mul(l).ok_or_else(|| err("merge lengths too large"))?;
                }
            }
            Kind::Unmerge(lengths) => {
                let mut lin = Lin::default();
                let mut weight = 1i64;
                for (i, &l) in lengths.iter().enumerate().rev() {
                    lin.add(up(i).scaled(weight)?);
                    weight =
                        i64::try_from(l).ok().and_then(|l| weight.checked_mul(l)).ok_or_else(|| err("too large"))?;
                }
                lower[low.unwrap()] = lin;
            }
            Kind::Embed(_, coefs) => {
                let mut lin = Lin::default();
                for (i, &c) in coefs.iter().enumerate() {
                    lin.add(up(i).scaled(c)?);
                }
                lower[low.unwrap()] = lin;
            }
            Kind::Freeze(i) => lower[low.unwrap()] = Lin { konst: *i, terms: Vec::new() },
            Kind::Replicate(_) => {}
            Kind::Modulo(_, m) => {
                let dim = self.whole(&up(0), "modulo")?;
                self.stages.push(Stage::Modulo { dim, modulus: *m });
                (self.extents[dim], self.stored[dim]) = (*m, (0, self.stored[dim].1.min(*m)));
                lower[low.unwrap()] = Lin::coordinate(dim, *m);
            }
            Kind::Xor(lengths) => {
                let [_, _] = lengths.as_slice() else { return Err(err("xor needs two dimensions")) };
                let (by, dim) = (self.whole(&up(0), "xor")?, self.whole(&up(1), "xor")?);
                self.stages.push(Stage::Xor { dim, by });
                lower[t.lower[0] as usize] = Lin::coordinate(by, self.extents[by]);
                lower[t.lower[1] as usize] = Lin::coordinate(dim, self.extents[dim]);
            }
        }
        Ok(())
    }

    /// The general layout once every stage is pushed down to the base descriptor's coordinates `exprs`.
    fn finish(
        self,
        ck: &CkLayout,
        top: &[u64],
        groups: &[Vec<usize>],
        exprs: &[Lin],
    ) -> Result<GeneralLayout, LayoutError> {
        let strides = ck.base_strides();
        let mut base = 0i64;
        let mut factors = Vec::new();
        let too_large = || LayoutError("descriptor too large".into());
        for (lin, &stride) in exprs.iter().zip(&strides) {
            base = lin.konst.checked_mul(stride).and_then(|b| base.checked_add(b)).ok_or_else(too_large)?;
            for &(dim, place, extent, coef) in &lin.terms {
                let stride = coef.checked_mul(stride).ok_or_else(too_large)?;
                factors.push(Factor { dim: Some(dim), place, extent, stride });
            }
        }
        // A coordinate that reaches nothing below (replicate) does not move the offset: a stride-0 digit.
        for (dim, &(_, n)) in self.stored.iter().enumerate() {
            let covered: u64 = factors.iter().filter(|f| f.dim == Some(dim)).map(|f| f.extent).product();
            if covered < n {
                factors.push(Factor { dim: Some(dim), place: covered, extent: n.div_ceil(covered), stride: 0 });
            }
        }
        let span: i128 =
            ck.lengths.iter().zip(&strides).map(|(&l, &s)| (l as i128 - 1).max(0) * s.max(0) as i128).sum();
        let cosize = u64::try_from(span + 1).map_err(|_| too_large())?;
        let dims = self.extents.iter().zip(&self.stored);
        let dims = dims.map(|(&n, &(start, end))| Dim { stored: end.min(n), start, ..Dim::new(n) }).collect();
        let logical = top.iter().map(|&n| Dim::new(n)).collect();
        let mut stages = self.stages;
        if groups.iter().any(|g| g.len() > 1) {
            stages.insert(0, Stage::Regroup(groups.to_vec()));
        }
        GeneralLayout::staged(logical, stages, Layout { dims, factors, base, cosize })
    }
}
