//! Coordinate stages: maps of logical coordinates that no sum of digits can say (regrouping, skew, xor, modulo,
//! sampling, a notation's own address function), applied before a strided layout in the general core form
//! ([`super::core_form::GeneralLayout`]).

use super::address_fn::Computed;
use super::strided::{fail, LayoutError};
use std::fmt;

/// One coordinate stage: it reads a coordinate vector and writes the one the next stage (or the strided layout)
/// reads. Every stage reaches every coordinate of its output space, so that two general layouts with the same
/// stages mean the same exactly when their strided layouts do.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Stage {
    /// Output coordinate `j` combines the input coordinates `groups[j]` row-major (the last fastest); every input
    /// coordinate is in exactly one group. XLA's `*` tile dimensions, which combine dimensions before tiling.
    Regroup(Vec<Vec<usize>>),
    /// `e[dim] = (e[dim] + sign · e[by]) mod n[dim]`, `sign` = ±1: Furiosa's skewed axis `B' = B − A` is sign −1.
    Skew {
        /// The coordinate that is shifted.
        dim: usize,
        /// The coordinate it is shifted by.
        by: usize,
        /// +1 or −1.
        sign: i8,
    },
    /// `e[dim] = e[dim] XOR (e[by] mod n[dim])`, `n[dim]` a power of two: CK's `xor` transform.
    Xor {
        /// The coordinate that is permuted.
        dim: usize,
        /// The coordinate whose low bits permute it.
        by: usize,
    },
    /// `e[dim] = e[dim] mod modulus`, `modulus ≤ n[dim]`: CK's `modulo` (several coordinates share one element
    /// position).
    Modulo {
        /// The coordinate reduced.
        dim: usize,
        /// The new extent.
        modulus: u64,
    },
    /// The whole coordinate becomes the buffer offset the notation's own function gives (one output coordinate
    /// of extent `cosize`); for layouts no other stage can say.
    Computed(Computed),
    /// Only the coordinates `e[dim]` whose digit `d = (e[dim] / place) mod step` is below `keep` are stored, the
    /// digit shrunk to `keep` values (`e mod place + d · place + (e / (place · step)) · place · keep`): a Furiosa
    /// axis the mapping reads only through `A / step` (place 1, keep 1), with a gap between its digits
    /// (`[A / 64, A % 2]`: place 2, step 32, keep 1), or with digits that do not nest (`[A / 4, A % 3]`: place 1,
    /// step 4, keep 3).
    Sample {
        /// The sampled coordinate.
        dim: usize,
        /// Weight of the digit.
        place: u64,
        /// Number of values of the digit.
        step: u64,
        /// How many of its values (from 0) are stored.
        keep: u64,
    },
}

impl Stage {
    /// The extents after the stage, given those before it; checks the stage against them.
    pub fn extents_after(&self, n: &[u64]) -> Result<Vec<u64>, LayoutError> {
        let check = |d: usize| match d < n.len() {
            true => Ok(()),
            false => fail(format!("{self}: no dimension {d} in a rank-{} layout", n.len())),
        };
        let mut out = n.to_vec();
        match self {
            Stage::Regroup(groups) => return self.regrouped(groups, n),
            Stage::Computed(c) => return Ok(vec![c.cosize()?]),
            Stage::Skew { dim, by, sign } => {
                check(*dim)?;
                check(*by)?;
                if dim == by || sign.abs() != 1 {
                    return fail(format!("{self}: a skew needs two different dimensions and a sign of ±1"));
                }
            }
            Stage::Xor { dim, by } => {
                check(*dim)?;
                check(*by)?;
                if dim == by || !n[*dim].is_power_of_two() {
                    return fail(format!(
                        "{self}: xor needs two different dimensions, the first of a power-of-two extent (has {})",
                        n[*dim]
                    ));
                }
            }
            Stage::Modulo { dim, modulus } => {
                check(*dim)?;
                if *modulus == 0 || *modulus > n[*dim] {
                    return fail(format!("{self}: the modulus must be in [1, {}]", n[*dim]));
                }
                out[*dim] = *modulus;
            }
            Stage::Sample { dim, place, step, keep } => {
                check(*dim)?;
                out[*dim] = Stage::sampled_extent(n[*dim], *place, *step, *keep)
                    .map_err(|e| LayoutError(format!("{self}: {e}")))?;
            }
        }
        Ok(out)
    }

    /// The extent of a coordinate of extent `n` after keeping `keep` of the `step` values of its digit at
    /// `place`. Every coordinate below it is reached (a partial last block keeps its low coordinates in place).
    pub fn sampled_extent(n: u64, place: u64, step: u64, keep: u64) -> Result<u64, LayoutError> {
        let block = place.checked_mul(step).filter(|_| place > 0 && step > 0 && keep > 0 && keep <= step);
        let block = block.ok_or_else(|| LayoutError("a place, step or kept count of 0, or too large".into()))?;
        let kept = place * keep;
        Ok(n / block * kept + (n % block).min(kept))
    }

    fn regrouped(&self, groups: &[Vec<usize>], n: &[u64]) -> Result<Vec<u64>, LayoutError> {
        let mut seen = vec![false; n.len()];
        for &d in groups.iter().flatten() {
            if d >= n.len() || std::mem::replace(&mut seen[d], true) {
                return fail(format!("{self}: dimension {d} is out of range or in two groups"));
            }
        }
        if let Some(d) = seen.iter().position(|s| !s) {
            return fail(format!("{self}: dimension {d} is in no group"));
        }
        let product = |g: &Vec<usize>| g.iter().try_fold(1u64, |acc, &d| acc.checked_mul(n[d]));
        groups.iter().map(|g| product(g).ok_or_else(|| LayoutError(format!("{self}: too large")))).collect()
    }

    /// Maps coordinate `e` (of a space with extents `n`, checked by [`Stage::extents_after`]) in place; `false`
    /// when the element is not stored.
    pub fn apply(&self, e: &mut Vec<u64>, n: &[u64]) -> bool {
        match *self {
            Stage::Regroup(ref groups) => {
                *e = groups.iter().map(|g| g.iter().fold(0, |acc, &d| acc * n[d] + e[d])).collect();
            }
            Stage::Skew { dim, by, sign } => {
                let (m, shift) = (n[dim], e[by] % n[dim]);
                e[dim] = if sign < 0 { (e[dim] + m - shift) % m } else { (e[dim] + shift) % m };
            }
            Stage::Xor { dim, by } => e[dim] ^= e[by] % n[dim],
            Stage::Computed(ref c) => match c.offset(e) {
                Some(o) => *e = vec![o],
                None => return false,
            },
            Stage::Modulo { dim, modulus } => e[dim] %= modulus,
            Stage::Sample { dim, place, step, keep } => {
                let d = (e[dim] / place) % step;
                if d >= keep {
                    return false;
                }
                e[dim] = e[dim] % place + d * place + e[dim] / (place * step) * place * keep;
            }
        }
        true
    }

    /// Whether the stage changes nothing on a space of extents `n`.
    pub fn is_identity(&self, n: &[u64]) -> bool {
        match *self {
            Stage::Regroup(ref groups) => {
                groups.len() == n.len() && groups.iter().enumerate().all(|(j, g)| g.as_slice() == [j])
            }
            Stage::Skew { dim, by, .. } | Stage::Xor { dim, by } => n[dim] == 1 || n[by] == 1,
            Stage::Modulo { dim, modulus } => modulus >= n[dim],
            Stage::Computed(_) => false,
            Stage::Sample { dim, place, step, keep } => keep >= step || n[dim] <= place,
        }
    }

    /// The stage's name, for diagnostics that say what needs a general form.
    pub fn kind(&self) -> &'static str {
        match self {
            Stage::Regroup(_) => "regroup",
            Stage::Skew { .. } => "skew",
            Stage::Xor { .. } => "xor",
            Stage::Modulo { .. } => "modulo",
            Stage::Computed(_) => "computed",
            Stage::Sample { .. } => "sample",
        }
    }
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Stage::Regroup(groups) => write!(f, "regroup({groups:?})"),
            Stage::Skew { dim, by, sign } => write!(f, "skew(d{dim} {} d{by})", if *sign < 0 { '-' } else { '+' }),
            Stage::Xor { dim, by } => write!(f, "xor(d{dim} ^ d{by})"),
            Stage::Modulo { dim, modulus } => write!(f, "modulo(d{dim}, {modulus})"),
            Stage::Computed(c) => write!(f, "{c}"),
            Stage::Sample { dim, place: 1, step, keep: 1 } => write!(f, "sample(d{dim}, {step})"),
            Stage::Sample { dim, place, step, keep: 1 } => write!(f, "sample(d{dim}, {step} at {place})"),
            Stage::Sample { dim, place, step, keep } => write!(f, "sample(d{dim}, {keep} of {step} at {place})"),
        }
    }
}
