//! Offset swizzles: CuTe's `Swizzle<B, M, S>`, the bijection on aligned blocks of buffer positions that the core
//! form applies after its strided layout (a CuTe swizzled layout is one; other notations have none).

use super::strided::{fail, LayoutError};
use std::fmt;

/// CuTe's `Swizzle<B, M, S>`: XORs the `B` bits at `M + max(0, S)` into the bits `S` places lower (higher for a
/// negative `S`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Swizzle {
    /// Number of bits in the mask.
    pub bits: u32,
    /// Number of least-significant bits kept constant.
    pub base: u32,
    /// Distance to shift the mask (signed).
    pub shift: i32,
}

impl Swizzle {
    /// A swizzle, checked: `|shift| ≥ bits` so that the source and target bits do not overlap.
    pub fn new(bits: u32, base: u32, shift: i32) -> Result<Swizzle, LayoutError> {
        if shift.unsigned_abs() < bits {
            return fail(format!("Swizzle<{bits},{base},{shift}> needs |shift| >= bits"));
        }
        if bits + base + shift.unsigned_abs() > 62 {
            return fail(format!("Swizzle<{bits},{base},{shift}> reaches past bit 62"));
        }
        Ok(Swizzle { bits, base, shift })
    }

    /// Applies the swizzle to an offset.
    pub fn apply(&self, x: i64) -> i64 {
        let mask = ((1i64 << self.bits) - 1) << (self.base as i32 + self.shift.max(0));
        let moved = if self.shift >= 0 { (x & mask) >> self.shift } else { (x & mask) << -self.shift };
        x ^ moved
    }

    /// One past the highest bit the swizzle changes: it permutes aligned blocks of `2^top_bit` positions.
    pub fn top_bit(&self) -> u32 {
        self.base + self.bits + (-self.shift).max(0) as u32
    }
}

/// CuTe's spelling, `Sw<B,M,S>`.
impl fmt::Display for Swizzle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Sw<{},{},{}>", self.bits, self.base, self.shift)
    }
}
