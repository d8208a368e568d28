//! Conversions between `f64` and the bit patterns of the narrower float formats (`f16`, `bf16`), used to
//! read and print hexadecimal float literals and to decide whether a printed value reads back exactly.

use super::types::FloatKind;
use crate::array::round::{bf16_from_f64, f16_from_f64};
use half::{bf16, f16};

/// The bit pattern of `v` rounded to `kind` (round to nearest even, once).
pub fn to_bits(kind: FloatKind, v: f64) -> u64 {
    match kind {
        FloatKind::F64 => v.to_bits(),
        FloatKind::F32 => (v as f32).to_bits() as u64,
        FloatKind::BF16 => bf16_from_f64(v).to_bits() as u64,
        FloatKind::F16 => f16_from_f64(v).to_bits() as u64,
    }
}

/// The value of a `kind` bit pattern.
pub fn from_bits(kind: FloatKind, bits: u64) -> f64 {
    match kind {
        FloatKind::F64 => f64::from_bits(bits),
        FloatKind::F32 => f32::from_bits(bits as u32) as f64,
        FloatKind::BF16 => bf16::from_bits(bits as u16).to_f64(),
        FloatKind::F16 => f16::from_bits(bits as u16).to_f64(),
    }
}

/// `v` rounded to the precision of `kind`.
pub fn round_to(kind: FloatKind, v: f64) -> f64 {
    from_bits(kind, to_bits(kind, v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_round_trips() {
        for v in [0.0, 1.0, -2.5, 65504.0, 2f64.powi(-24), 0.333_251_953_125] {
            assert_eq!(round_to(FloatKind::F16, v), v, "{v}");
        }
        assert_eq!(to_bits(FloatKind::F16, 1.0), 0x3C00);
        assert_eq!(to_bits(FloatKind::BF16, 1.0), 0x3F80);
        assert_eq!(to_bits(FloatKind::F16, f64::INFINITY), 0x7C00);
    }
}
