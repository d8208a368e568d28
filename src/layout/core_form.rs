//! The general core form every notation lowers to: coordinate stages, then a strided [`Layout`], then an offset
//! swizzle. Most layouts have no stages and no swizzle (they are their strided layout); the stages and the swizzle
//! say what a sum of digits cannot (Furiosa skew and sampled axes, XLA's `*` combination split inside a digit, CK
//! modulo and xor, CuTe swizzles).
//!
//! Meaning. A logical element's coordinate passes through the stages in order (a stage may say "not stored");
//! the strided layout gives the offsets of the resulting coordinate (or "not stored"); the swizzle, a bijection on
//! aligned blocks of `2^(m+b+max(0,−s))` positions, moves each offset. Position `p` has the class the strided
//! layout gives position `swizzle(p)`; the buffer is the strided one rounded up to whole swizzle blocks, the
//! positions added are Top padding.

use super::address_fn::{AddressFn, Computed};
use super::canonical::{canonical, same_placement, Canonical};
use super::stage::Stage;
use super::strided::{Dim, Factor, Layout, LayoutError, PadKind};
use super::swizzle::Swizzle;
use super::table::{offsets, positions, Order, Slot};

/// A layout in the general core form. See the module docs for the meaning.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct GeneralLayout {
    /// The logical dimensions (names and extents) the first stage reads; only `name` and `extent` matter.
    pub logical: Vec<Dim>,
    /// Coordinate stages, applied first to last.
    pub stages: Vec<Stage>,
    /// Where the staged coordinates sit, before the swizzle.
    pub inner: Layout,
    /// Applied to every offset of `inner`.
    pub swizzle: Option<Swizzle>,
}

impl From<Layout> for GeneralLayout {
    fn from(inner: Layout) -> GeneralLayout {
        let logical = inner.dims.iter().map(|d| Dim { name: d.name.clone(), ..Dim::new(d.extent) }).collect();
        GeneralLayout { logical, stages: Vec::new(), inner, swizzle: None }
    }
}

impl GeneralLayout {
    /// A strided layout behind coordinate stages, on logical dimensions of the given names and extents.
    pub fn staged(logical: Vec<Dim>, stages: Vec<Stage>, inner: Layout) -> Result<GeneralLayout, LayoutError> {
        let g = GeneralLayout { logical, stages, inner, swizzle: None };
        g.validate()?;
        Ok(g)
    }

    /// The layout that a notation's address function `f` gives on logical dimensions `logical`: one computed
    /// stage onto a 1-D buffer, after checking that every element lands inside it.
    pub fn computed(logical: Vec<Dim>, f: impl AddressFn) -> Result<GeneralLayout, LayoutError> {
        let c = Computed::new(f);
        c.check(&logical.iter().map(|d| d.extent).collect::<Vec<_>>())?;
        let inner = Layout::row_major(&[c.cosize()?]);
        GeneralLayout::staged(logical, vec![Stage::Computed(c)], inner)
    }

    /// The extents of the logical dimensions.
    pub fn extents(&self) -> Vec<u64> {
        self.logical.iter().map(|d| d.extent).collect()
    }

    /// Number of logical elements.
    pub fn size(&self) -> u64 {
        self.logical.iter().map(|d| d.extent).product()
    }

    /// The extents each stage reads, then those the strided layout reads (checked against it).
    fn stage_extents(&self) -> Result<Vec<Vec<u64>>, LayoutError> {
        let mut out = vec![self.extents()];
        for s in &self.stages {
            let next = s.extents_after(out.last().unwrap())?;
            out.push(next);
        }
        Ok(out)
    }

    /// Checks the stages against the dimensions they read, the strided layout, and that the staged extents are
    /// those of the strided layout.
    pub fn validate(&self) -> Result<(), LayoutError> {
        self.inner.validate()?;
        let levels = self.stage_extents()?;
        let last = levels.last().unwrap();
        let inner: Vec<u64> = self.inner.dims.iter().map(|d| d.extent).collect();
        if *last != inner {
            return Err(LayoutError(format!("the stages produce extents {last:?} but the layout has {inner:?}")));
        }
        if self.cosize() >= 1 << 62 {
            return Err(LayoutError("the swizzled layout reaches offsets past 2^62".into()));
        }
        Ok(())
    }

    /// The strided layout, if there are no stages and no swizzle.
    pub fn as_strided(&self) -> Option<&Layout> {
        (self.stages.is_empty() && self.swizzle.is_none()).then_some(&self.inner)
    }

    /// The strided layout, or an error naming what has no strided form (for the algebra, views and loops, which
    /// work on sums of digits).
    pub fn into_strided(self) -> Result<Layout, LayoutError> {
        if let Some(s) = self.stages.first() {
            return Err(LayoutError(format!("its {} stage {s} has no strided form", s.kind())));
        }
        match self.swizzle {
            Some(sw) => Err(LayoutError(format!("its swizzle {sw} has no strided form"))),
            None => Ok(self.inner),
        }
    }

    /// Buffer size: the strided layout's, rounded up to whole swizzle blocks.
    pub fn cosize(&self) -> u64 {
        match self.swizzle {
            None => self.inner.cosize,
            Some(sw) => self.inner.cosize.next_multiple_of(1u64 << sw.top_bit()),
        }
    }

    /// The same meaning with stages that change nothing removed and an empty swizzle dropped.
    pub fn normalized(&self) -> GeneralLayout {
        let mut n = self.extents();
        let mut stages = Vec::new();
        for s in &self.stages {
            if !s.is_identity(&n) {
                stages.push(s.clone());
            }
            n = s.extents_after(&n).unwrap_or(n);
        }
        let swizzle = self.swizzle.filter(|sw| sw.bits > 0);
        let mut inner = self.inner.clone();
        // A regroup alone whose digits split at the combined coordinates' boundaries is a strided layout.
        if let [Stage::Regroup(groups)] = stages.as_slice() {
            if let Some(plain) = ungroup(&inner, groups, &self.logical) {
                (inner, stages) = (plain, Vec::new());
            }
        }
        if stages.is_empty() {
            // The strided layout reads the logical coordinates themselves: it takes their names.
            inner.dims.iter_mut().zip(&self.logical).for_each(|(d, l)| d.name.clone_from(&l.name));
        }
        GeneralLayout { stages, swizzle, inner, logical: self.logical.clone() }
    }

    /// The strided coordinate of each logical element, as a row-major index into the strided layout's elements,
    /// numbered in `order`; `None` where a stage says it is not stored.
    fn inner_index(&self, order: Order) -> Result<Vec<Option<u64>>, LayoutError> {
        let levels = self.stage_extents()?;
        let (extents, inner) = (&levels[0], levels.last().unwrap());
        let mut out = Vec::with_capacity(self.size() as usize);
        for i in 0..self.size() {
            let mut e = decode(i, extents, order);
            let stored = self.stages.iter().zip(&levels).all(|(s, n)| s.apply(&mut e, n));
            out.push(stored.then(|| e.iter().zip(inner).fold(0, |acc, (c, n)| acc * n + c)));
        }
        Ok(out)
    }

    /// The offset of every logical element numbered in `order` (`None`: not stored).
    pub fn offsets(&self, order: Order) -> Result<Vec<Option<i64>>, LayoutError> {
        if let Some(l) = self.as_strided() {
            return Ok(offsets(l, order));
        }
        let inner = offsets(&self.inner, Order::RowMajor);
        let swizzle = |o: i64| self.swizzle.map_or(o, |sw| sw.apply(o));
        Ok(self.inner_index(order)?.into_iter().map(|j| j.and_then(|j| inner[j as usize]).map(swizzle)).collect())
    }

    /// What every buffer position `[0, cosize)` holds, elements numbered in `order`.
    pub fn positions(&self, order: Order) -> Result<Vec<Slot>, LayoutError> {
        if let Some(l) = self.as_strided() {
            return Ok(positions(l, order));
        }
        let mut preimage: Vec<Vec<u64>> = vec![Vec::new(); self.inner.size() as usize];
        for (i, j) in self.inner_index(order)?.into_iter().enumerate() {
            if let Some(j) = j {
                preimage[j as usize].push(i as u64);
            }
        }
        let mut out = vec![Slot::Padding(PadKind::Top); self.cosize() as usize];
        for (p, slot) in positions(&self.inner, Order::RowMajor).into_iter().enumerate() {
            let slot = match slot {
                Slot::Live(inner) => {
                    let mut elems: Vec<u64> =
                        inner.iter().flat_map(|&j| preimage[j as usize].iter().copied()).collect();
                    elems.sort_unstable();
                    if elems.is_empty() {
                        Slot::Padding(PadKind::Top)
                    } else {
                        Slot::Live(elems)
                    }
                }
                padding => padding,
            };
            let q = self.swizzle.map_or(p as i64, |sw| sw.apply(p as i64));
            out[q as usize] = slot;
        }
        Ok(out)
    }
}

/// The strided layout of the logical coordinates that `inner` places after `groups` combined them, if every
/// digit of a combined coordinate splits at the boundaries of the coordinates it combines (no padding).
fn ungroup(inner: &Layout, groups: &[Vec<usize>], logical: &[Dim]) -> Option<Layout> {
    let mut factors: Vec<Factor> = inner.factors.iter().copied().filter(|f| f.dim.is_none()).collect();
    for (g, group) in groups.iter().enumerate() {
        let d = &inner.dims[g];
        if d.start != 0 || d.stored != d.extent || inner.padded(g) != d.extent {
            return None;
        }
        // Member `u` of the group holds places [lo, lo · n_u) of the combined coordinate.
        let mut lo = 1u64;
        for &u in group.iter().rev() {
            let hi = lo * logical[u].extent;
            for f in inner.digits(Some(g)).into_iter().filter(|f| f.extent > 1) {
                let (from, to) = (f.place.max(lo), (f.place * f.extent).min(hi));
                if from >= to {
                    continue;
                }
                // The cuts must be divisors of the digit's extent: then the pieces are its mixed-radix digits.
                let cut = |b: u64| b.is_multiple_of(f.place) && f.extent.is_multiple_of(b / f.place);
                if !cut(from) || !cut(to) {
                    return None;
                }
                let stride = f.stride * (from / f.place) as i64;
                factors.push(Factor { dim: Some(u), place: from / lo, extent: to / from, stride });
            }
            lo = hi;
        }
    }
    let dims = logical.iter().map(|l| Dim { name: l.name.clone(), ..Dim::new(l.extent) }).collect();
    let out = Layout { dims, factors, base: inner.base, cosize: inner.cosize };
    out.validate().ok().map(|_| out)
}

/// The coordinate of element number `i` of a space with extents `n`, numbered in `order`.
fn decode(mut i: u64, n: &[u64], order: Order) -> Vec<u64> {
    let mut e = vec![0; n.len()];
    let dims: Box<dyn Iterator<Item = usize>> = match order {
        Order::RowMajor => Box::new((0..n.len()).rev()),
        Order::Colex => Box::new(0..n.len()),
    };
    for k in dims {
        e[k] = i % n[k].max(1);
        i /= n[k].max(1);
    }
    e
}

/// The canonical form of a general layout: its normalized stages and swizzle around the canonical strided layout.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CanonicalGeneral {
    /// Names and extents of the logical dimensions (empty when there are no stages: the strided form has them).
    pub logical: Vec<Dim>,
    /// Stages that change something.
    pub stages: Vec<Stage>,
    /// The canonical strided layout.
    pub inner: Canonical,
    /// A swizzle that changes something.
    pub swizzle: Option<Swizzle>,
}

/// The canonical form of a valid general layout.
pub fn canonical_general(g: &GeneralLayout) -> Result<CanonicalGeneral, LayoutError> {
    g.validate()?;
    let n = g.normalized();
    let logical = if n.stages.is_empty() { Vec::new() } else { n.logical };
    Ok(CanonicalGeneral { logical, stages: n.stages, inner: canonical(&n.inner)?, swizzle: n.swizzle })
}

/// Layouts with stages or a swizzle whose stages differ are compared by table up to this many elements and
/// positions.
pub const TABLE_LIMIT: u64 = 1 << 16;

/// Decides whether two general layouts mean the same. Exact on the structure when their normalized stages and
/// swizzles agree (every stage reaches its whole output space and a swizzle is a bijection, so the meanings agree
/// exactly when the strided layouts do); otherwise by comparing tables up to [`TABLE_LIMIT`], past which it is an
/// error that says the question is open rather than a guess.
pub fn equivalent_general(a: &GeneralLayout, b: &GeneralLayout) -> Result<bool, LayoutError> {
    let (ca, cb) = (canonical_general(a)?, canonical_general(b)?);
    if ca.stages == cb.stages && ca.swizzle == cb.swizzle {
        return Ok(ca == cb);
    }
    let names = |g: &GeneralLayout| g.logical.iter().map(|d| (d.name.clone(), d.extent)).collect::<Vec<_>>();
    if names(a) != names(b) || a.cosize() != b.cosize() {
        return Ok(false);
    }
    if a.size().max(a.cosize()) > TABLE_LIMIT {
        return Err(LayoutError(format!(
            "cannot decide: the layouts have different coordinate stages or swizzles and more than {TABLE_LIMIT} \
             elements or positions"
        )));
    }
    Ok(a.offsets(Order::RowMajor)? == b.offsets(Order::RowMajor)?
        && a.positions(Order::RowMajor)? == b.positions(Order::RowMajor)?)
}

/// Decides whether two general layouts place every element at the same offset (whatever their buffer sizes,
/// padding and names): exact on the structure when their normalized stages and swizzles agree, else by table up
/// to [`TABLE_LIMIT`] elements.
pub fn same_placement_general(a: &GeneralLayout, b: &GeneralLayout) -> Result<bool, LayoutError> {
    let (na, nb) = (a.normalized(), b.normalized());
    if na.stages == nb.stages && na.swizzle == nb.swizzle {
        return same_placement(&na.inner, &nb.inner);
    }
    if a.extents() != b.extents() {
        return Ok(false);
    }
    if a.size() > TABLE_LIMIT {
        return Err(LayoutError(format!(
            "cannot decide: the layouts have different coordinate stages or swizzles and more than {TABLE_LIMIT} \
             elements"
        )));
    }
    Ok(a.offsets(Order::RowMajor)? == b.offsets(Order::RowMajor)?)
}

impl GeneralLayout {
    /// The layout of the tensor whose dimension `i` is dimension `perm[i]` of this one, across coordinate stages:
    /// a regroup stage that permutes the coordinates back goes first. (Without stages, permute the strided
    /// layout instead: that keeps the strided form.)
    pub fn permuted_across_stages(&self, perm: &[usize]) -> Result<GeneralLayout, LayoutError> {
        let rank = self.logical.len();
        let mut inverse = vec![usize::MAX; rank];
        for (i, &p) in perm.iter().enumerate() {
            match inverse.get_mut(p) {
                Some(slot) if *slot == usize::MAX => *slot = i,
                _ => return Err(LayoutError(format!("{perm:?} is not a permutation of {rank} dimensions"))),
            }
        }
        if perm.len() != rank {
            return Err(LayoutError(format!("{perm:?} is not a permutation of {rank} dimensions")));
        }
        let logical = perm.iter().map(|&p| self.logical[p].clone()).collect();
        let mut stages = vec![Stage::Regroup(inverse.iter().map(|&i| vec![i]).collect())];
        stages.extend(self.stages.iter().cloned());
        let g = GeneralLayout { logical, stages, inner: self.inner.clone(), swizzle: self.swizzle };
        g.validate()?;
        Ok(g)
    }

    /// Applies a view to the strided layout: exact when there are no stages (a swizzle moves offsets after the
    /// view, so it stays); a view across coordinate stages is not expressible yet and needs a copy.
    pub fn view<E>(
        &self,
        view: impl FnOnce(&Layout) -> Result<Layout, E>,
        needs_copy: impl FnOnce(String) -> E,
    ) -> Result<GeneralLayout, E> {
        if let Some(s) = self.normalized().stages.first() {
            return Err(needs_copy(format!("a view across the {} stage {s} is not expressible yet", s.kind())));
        }
        let inner = view(&self.inner)?;
        let logical = inner.dims.iter().map(|d| Dim { name: d.name.clone(), ..Dim::new(d.extent) }).collect();
        Ok(GeneralLayout { logical, stages: Vec::new(), inner, swizzle: self.swizzle })
    }
}
