//! Views: functions from layout to layout for the `teg` view selectors (permute, slice, reverse, squeeze,
//! unsqueeze, broadcast, split, merge, tile, minor-dimension alignment). A view reads the same buffer; when the
//! request cannot be a view of it, the error says so (with the layout a copy would produce, where there is one)
//! so that layout resolution can insert a copy.

use super::strided::{Dim, Factor, Layout, PadKind};

/// Why a view could not be made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ViewError {
    /// The arguments do not fit the layout (a dimension out of range, a slice past the end, ...).
    Invalid(String),
    /// A valid request that no view of this buffer expresses: it needs a copy, into `target` if given.
    NeedsCopy {
        /// Why.
        reason: String,
        /// The layout of the copy, when the view defines one (alignment does).
        target: Option<Box<Layout>>,
    },
}

impl std::fmt::Display for ViewError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ViewError::Invalid(m) => f.write_str(m),
            ViewError::NeedsCopy { reason, .. } => write!(f, "needs a copy: {reason}"),
        }
    }
}

type ViewResult = Result<Layout, ViewError>;

fn invalid<T>(msg: impl Into<String>) -> Result<T, ViewError> {
    Err(ViewError::Invalid(msg.into()))
}

fn copy<T>(msg: impl Into<String>) -> Result<T, ViewError> {
    Err(ViewError::NeedsCopy { reason: msg.into(), target: None })
}

fn check_dim(l: &Layout, k: usize) -> Result<(), ViewError> {
    if k >= l.dims.len() {
        return invalid(format!("dimension {k} of a rank-{} layout", l.dims.len()));
    }
    Ok(())
}

/// The digits of dimension `k` of extent > 1, lowest place first, contiguous ones merged.
fn merged_digits(l: &Layout, k: usize) -> Vec<Factor> {
    let mut out: Vec<Factor> = Vec::new();
    for f in l.digits(Some(k)).into_iter().filter(|f| f.extent > 1) {
        match out.last_mut() {
            Some(last) if f.stride == last.extent as i64 * last.stride => last.extent *= f.extent,
            _ => out.push(f),
        }
    }
    out
}

/// `l` with dimension `k`'s digits replaced.
fn with_digits(l: &Layout, k: usize, digits: Vec<Factor>) -> Layout {
    let mut r = l.clone();
    r.factors.retain(|f| f.dim != Some(k));
    r.factors.extend(digits);
    r
}

/// Whether dimension `k` stores every coordinate and has no padding digits.
fn whole(l: &Layout, k: usize) -> bool {
    let d = &l.dims[k];
    d.start == 0 && d.stored == d.extent && l.padded(k) == d.extent
}

/// Reorders the dimensions: dimension `i` of the result is dimension `perm[i]`.
pub fn permute(l: &Layout, perm: &[usize]) -> ViewResult {
    let mut seen = vec![false; l.dims.len()];
    if perm.len() != l.dims.len() || perm.iter().any(|&p| p >= seen.len() || std::mem::replace(&mut seen[p], true)) {
        return invalid(format!("{perm:?} is not a permutation of {} dimensions", l.dims.len()));
    }
    let mut inverse = vec![0; perm.len()];
    for (i, &p) in perm.iter().enumerate() {
        inverse[p] = i;
    }
    let mut r = l.clone();
    r.dims = perm.iter().map(|&p| l.dims[p].clone()).collect();
    for f in &mut r.factors {
        f.dim = f.dim.map(|k| inverse[k]);
    }
    Ok(r)
}

/// Coordinates `start, start + step, ...` (`size` of them) of dimension `k`.
pub fn slice(l: &Layout, k: usize, start: u64, size: u64, step: u64) -> ViewResult {
    check_dim(l, k)?;
    let (first, stored) = (l.dims[k].start, l.dims[k].stored);
    let last = (size.max(1) - 1).checked_mul(step).and_then(|r| r.checked_add(start));
    if size == 0 || step == 0 || start < first || last.is_none_or(|last| last >= stored) {
        return invalid(format!(
            "slice {start}+{step}·i, i < {size}, leaves the stored coordinates [{first}, {stored}) of dimension {k}"
        ));
    }
    let digits = merged_digits(l, k);
    let mut r = l.clone();
    r.dims[k] = Dim { stored: size, extent: size, start: 0, ..l.dims[k].clone() };
    match digits.as_slice() {
        [] => {}
        [d] => {
            r.base += start as i64 * d.stride;
            r = with_digits(&r, k, vec![Factor { place: 1, extent: size, stride: d.stride * step as i64, ..*d }]);
        }
        _ if start == 0 && step == 1 => {
            r.dims[k].pad = PadKind::Top;
            let kept = digits.into_iter().filter(|d| d.place < size).collect();
            r = with_digits(&r, k, kept);
        }
        _ => return copy(format!("a strided or offset slice of dimension {k}, which is split into several digits")),
    }
    validated(r)
}

/// Coordinates `start .. start + size` of dimension `k` (Furiosa's `.tile`).
pub fn tile(l: &Layout, k: usize, size: u64, start: u64) -> ViewResult {
    slice(l, k, start, size, 1)
}

/// Dimension `k` in reverse order (negative strides).
pub fn reverse(l: &Layout, k: usize) -> ViewResult {
    check_dim(l, k)?;
    let n = l.dims[k].stored;
    if n != l.dims[k].extent || l.dims[k].start != 0 {
        return copy(format!("reversing dimension {k}, whose unstored coordinates would move to the other end"));
    }
    let digits = merged_digits(l, k);
    let mut r = l.clone();
    r.dims[k].extent = n;
    r.dims[k].pad = PadKind::Top;
    let flipped: Vec<Factor> = match digits.as_slice() {
        [d] if l.dims[k].pad == PadKind::Top => vec![Factor { extent: n, stride: -d.stride, ..*d }],
        _ if whole(l, k) => digits.iter().map(|d| Factor { stride: -d.stride, ..*d }).collect(),
        _ => return copy(format!("reversing dimension {k}, whose stored coordinates do not fill its digits")),
    };
    r.base += flipped.iter().map(|d| (d.extent as i64 - 1) * -d.stride).sum::<i64>();
    validated(with_digits(&r, k, flipped))
}

/// Removes dimension `k`, which must have extent 1.
pub fn squeeze(l: &Layout, k: usize) -> ViewResult {
    check_dim(l, k)?;
    if l.dims[k].extent != 1 {
        return invalid(format!("dimension {k} has extent {}, not 1", l.dims[k].extent));
    }
    if l.padded(k) != 1 {
        return copy(format!("dimension {k} carries padding"));
    }
    let mut r = l.clone();
    r.dims.remove(k);
    r.factors.retain(|f| f.dim != Some(k));
    for f in &mut r.factors {
        f.dim = f.dim.map(|d| if d > k { d - 1 } else { d });
    }
    Ok(r)
}

/// Inserts a dimension of extent `n` at position `k` whose coordinate does not move the offset (stride 0);
/// `n = 1` is `unsqueeze`.
pub fn broadcast(l: &Layout, k: usize, n: u64) -> ViewResult {
    if k > l.dims.len() {
        return invalid(format!("position {k} of a rank-{} layout", l.dims.len()));
    }
    let mut r = l.clone();
    for f in &mut r.factors {
        f.dim = f.dim.map(|d| if d >= k { d + 1 } else { d });
    }
    r.dims.insert(k, Dim::new(n));
    if n > 1 {
        r.factors.push(Factor { dim: Some(k), place: 1, extent: n, stride: 0 });
    }
    Ok(r)
}

/// Inserts a dimension of extent 1 at position `k`.
pub fn unsqueeze(l: &Layout, k: usize) -> ViewResult {
    broadcast(l, k, 1)
}

/// Splits dimension `k` row-major into dimensions of `sizes` (their product is its extent).
pub fn split(l: &Layout, k: usize, sizes: &[u64]) -> ViewResult {
    check_dim(l, k)?;
    if sizes.is_empty() || sizes.iter().product::<u64>() != l.dims[k].extent {
        return invalid(format!("sizes {sizes:?} do not multiply to the extent {} of dimension {k}", l.dims[k].extent));
    }
    if !whole(l, k) {
        return copy(format!("splitting dimension {k}, which has padding or unstored coordinates"));
    }
    let mut rest = merged_digits(l, k);
    rest.reverse(); // highest place last, so `pop` takes the lowest
    let mut parts: Vec<Vec<Factor>> = Vec::new();
    for (j, &n) in sizes.iter().enumerate().rev() {
        let (part, left) = carve(rest, n).ok_or_else(|| ViewError::NeedsCopy {
            reason: format!("part {j} of size {n} splits a digit of dimension {k} unevenly"),
            target: None,
        })?;
        parts.push(part);
        rest = left;
    }
    parts.reverse();
    let mut r = l.clone();
    r.factors.retain(|f| f.dim != Some(k));
    for f in &mut r.factors {
        f.dim = f.dim.map(|d| if d > k { d + sizes.len() - 1 } else { d });
    }
    let new_dims: Vec<Dim> = sizes.iter().map(|&n| Dim::new(n)).collect();
    r.dims.splice(k..=k, new_dims);
    for (j, part) in parts.into_iter().enumerate() {
        r.factors.extend(part.into_iter().map(|f| Factor { dim: Some(k + j), ..f }));
    }
    validated(r)
}

/// Takes the lowest `n` coordinate values off `rest` (digits highest place first): the digits of `c mod n`
/// (places from 1) and what remains (places divided by `n`); `None` if `n` cuts a digit unevenly.
fn carve(mut rest: Vec<Factor>, n: u64) -> Option<(Vec<Factor>, Vec<Factor>)> {
    let mut part = Vec::new();
    let mut need = n;
    let mut place = 1;
    while need > 1 {
        let d = rest.pop()?;
        if d.extent <= need && need.is_multiple_of(d.extent) {
            part.push(Factor { place, ..d });
            place *= d.extent;
            need /= d.extent;
        } else if d.extent % need == 0 {
            part.push(Factor { place, extent: need, ..d });
            rest.push(Factor { extent: d.extent / need, stride: d.stride * need as i64, ..d });
            need = 1;
        } else {
            return None;
        }
    }
    let mut p = 1;
    for f in rest.iter_mut().rev() {
        f.place = p;
        p *= f.extent;
    }
    Some((part, rest))
}

/// Merges dimensions `k` and `k + 1` row-major into one (coordinate `e_k · n_{k+1} + e_{k+1}`).
pub fn merge(l: &Layout, k: usize) -> ViewResult {
    check_dim(l, k + 1)?;
    if !whole(l, k + 1) {
        return copy(format!("merging into dimension {}, which has padding or unstored coordinates", k + 1));
    }
    let n = l.dims[k + 1].extent;
    let mut r = l.clone();
    for f in &mut r.factors {
        match f.dim {
            Some(d) if d == k => f.place *= n,
            Some(d) if d == k + 1 => f.dim = Some(k),
            Some(d) if d > k + 1 => f.dim = Some(d - 1),
            _ => {}
        }
    }
    let (major, minor) = (&l.dims[k], &l.dims[k + 1]);
    if major.start != 0 {
        return copy(format!("merging dimension {k}, which is stored from coordinate {}", major.start));
    }
    let (Some(extent), Some(stored)) = (major.extent.checked_mul(minor.extent), major.stored.checked_mul(minor.extent))
    else {
        return invalid("the merged dimension is too large");
    };
    let merged = Dim { name: None, extent, stored, start: 0, pad: major.pad };
    r.dims.splice(k..=k + 1, [merged]);
    validated(r)
}

/// Pads the rows of the minor (last) dimension to a multiple of `bytes` for elements of `elem_bits` bits. A view
/// when every other stride already steps whole aligned rows and the row's padding fits; otherwise a copy into a
/// fresh row-major layout with aligned rows (the `target`).
pub fn align_minor(l: &Layout, bytes: u64, elem_bits: u64) -> ViewResult {
    let Some(k) = l.dims.len().checked_sub(1) else { return invalid("a rank-0 layout has no minor dimension") };
    let bits =
        bytes.checked_mul(8).filter(|&b| b > 0 && elem_bits > 0 && b % elem_bits == 0 && b / elem_bits < 1 << 32);
    let Some(bits) = bits else {
        return invalid(format!("{bytes} bytes are not a whole number of {elem_bits}-bit elements"));
    };
    let per = (bits / elem_bits) as i64;
    let n = l.dims[k].extent;
    let pitch = (n.div_ceil(per as u64) * per as u64) as i64;
    let digits = merged_digits(l, k);
    let unit_rows = matches!(digits.as_slice(), [d] if d.stride == 1) && l.dims[k].stored == n;
    let others_aligned = l.factors.iter().filter(|f| f.dim != Some(k) && f.extent > 1).all(|f| f.stride % pitch == 0);
    if unit_rows && others_aligned {
        let mut r = with_digits(l, k, vec![Factor { dim: Some(k), place: 1, extent: pitch as u64, stride: 1 }]);
        r.dims[k].pad = PadKind::Top;
        if let Ok(v) = validated(r) {
            return Ok(v);
        }
    }
    let mut extents: Vec<u64> = l.dims.iter().map(|d| d.extent).collect();
    extents[k] = pitch as u64;
    let mut target = Layout::row_major(&extents);
    target.dims = l.dims.iter().map(|d| Dim { stored: d.extent, start: 0, ..d.clone() }).collect();
    Err(ViewError::NeedsCopy {
        reason: format!("rows of {n} elements are not laid out at a pitch of {pitch}"),
        target: Some(Box::new(target)),
    })
}

fn validated(l: Layout) -> ViewResult {
    l.validate().map_err(|e| ViewError::NeedsCopy { reason: e.0, target: None })?;
    Ok(l)
}
