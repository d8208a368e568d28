//! Correctly rounded conversions from `f64` to the narrow float types (`f16`, `bf16`): through an `f32` rounded
//! to odd, so that `half`'s rounding from `f32` to nearest even cannot round twice.

use half::{bf16, f16};

/// `v` as an `f32`, rounded to odd: exact when `v` is representable, else the neighbour toward zero with its last
/// bit set. An `f32` keeps at least two more bits than `f16` or `bf16` (subnormals included), so rounding it to
/// nearest even then gives the nearest-even `f16` or `bf16` of `v` itself.
fn to_odd_f32(v: f64) -> f32 {
    let nearest = v as f32;
    if nearest.is_nan() || nearest as f64 == v {
        return nearest;
    }
    // Step toward zero when the nearest one is beyond `v` (infinity becomes the largest finite value).
    let bits = nearest.to_bits() - u32::from((nearest as f64).abs() > v.abs());
    f32::from_bits(bits | 1)
}

/// `v` as an `f64`, rounded to odd (see [`to_odd_f32`]; rounding to odd twice is rounding to odd once).
fn to_odd_f64(v: i64) -> f64 {
    let nearest = v as f64;
    if nearest as i128 == v as i128 {
        return nearest;
    }
    let bits = nearest.to_bits() - u64::from((nearest as i128).abs() > (v as i128).abs());
    f64::from_bits(bits | 1)
}

/// `v` rounded to the nearest `f16` (ties to even), `±inf` past its range.
pub fn f16_from_i64(v: i64) -> f16 {
    f16_from_f64(to_odd_f64(v))
}

/// `v` rounded to the nearest `bf16` (ties to even).
pub fn bf16_from_i64(v: i64) -> bf16 {
    bf16_from_f64(to_odd_f64(v))
}

/// `v` rounded to the nearest `f16` (ties to even).
pub fn f16_from_f64(v: f64) -> f16 {
    f16::from_f32(to_odd_f32(v))
}

/// `v` rounded to the nearest `bf16` (ties to even).
pub fn bf16_from_f64(v: f64) -> bf16 {
    bf16::from_f32(to_odd_f32(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_once() {
        // Just above the tie 1 + 2^-11 between two f16s: f32 alone rounds it onto the tie, which then goes down.
        let v = 1.0 + 2f64.powi(-11) + 2f64.powi(-40);
        assert_eq!(f16_from_f64(v).to_f64(), 1.0 + 2f64.powi(-10));
        assert_eq!(f16::from_f32(v as f32).to_f64(), 1.0);
        let w = 1.0 + 2f64.powi(-8) + 2f64.powi(-40);
        assert_eq!(bf16_from_f64(w).to_f64(), 1.0 + 2f64.powi(-7));
        // Exact values, ties, infinities, NaN, and values that underflow.
        assert_eq!(f16_from_f64(1.0 + 2f64.powi(-11)).to_f64(), 1.0);
        assert_eq!(f16_from_f64(65520.0), f16::INFINITY);
        assert_eq!(f16_from_f64(-1e300), f16::NEG_INFINITY);
        assert_eq!(bf16_from_f64(1e300), bf16::INFINITY);
        assert!(bf16_from_f64(f64::NAN).is_nan());
        assert_eq!(f16_from_f64(1e-300).to_bits(), 0);
        assert_eq!(f16_from_f64(-1e-300).to_bits(), 0x8000);
        assert_eq!(f16_from_f64(2f64.powi(-24) * 0.75).to_bits(), 1);
        // 2^62 + 2^54 + 1 is just above a bf16 tie, but rounds onto it as an f64.
        let big = (1i64 << 62) + (1 << 54) + 1;
        assert_eq!(bf16_from_i64(big).to_f64(), 2f64.powi(62) + 2f64.powi(55));
        assert_eq!(bf16_from_i64(-big).to_f64(), -(2f64.powi(62) + 2f64.powi(55)));
        assert_eq!(bf16_from_i64(1 << 62).to_f64(), 2f64.powi(62));
        assert_eq!(f16_from_i64(i64::MAX), f16::INFINITY);
        assert_eq!(f16_from_i64(-3), f16::from_f32(-3.0));
    }
}
