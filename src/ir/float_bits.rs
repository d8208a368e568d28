//! Conversions between `f64` and the bit patterns of the narrower float formats (`f16`, `bf16`), used to
//! read and print hexadecimal float literals and to decide whether a printed value reads back exactly.

use super::types::FloatKind;

/// The bit pattern of `v` rounded to `kind` (round to nearest even).
pub fn to_bits(kind: FloatKind, v: f64) -> u64 {
    match kind {
        FloatKind::F64 => v.to_bits(),
        FloatKind::F32 => (v as f32).to_bits() as u64,
        FloatKind::BF16 => f32_to_bf16(v as f32) as u64,
        FloatKind::F16 => f32_to_f16(v as f32) as u64,
    }
}

/// The value of a `kind` bit pattern.
pub fn from_bits(kind: FloatKind, bits: u64) -> f64 {
    match kind {
        FloatKind::F64 => f64::from_bits(bits),
        FloatKind::F32 => f32::from_bits(bits as u32) as f64,
        FloatKind::BF16 => f32::from_bits((bits as u32) << 16) as f64,
        FloatKind::F16 => f16_to_f32(bits as u16) as f64,
    }
}

/// `v` rounded to the precision of `kind`.
pub fn round_to(kind: FloatKind, v: f64) -> f64 {
    from_bits(kind, to_bits(kind, v))
}

fn f32_to_bf16(v: f32) -> u16 {
    if v.is_nan() {
        return 0x7FC0 | ((v.to_bits() >> 16) as u16 & 0x8000);
    }
    let bits = v.to_bits();
    let round = 0x7FFF + ((bits >> 16) & 1);
    ((bits + round) >> 16) as u16
}

fn f16_to_f32(h: u16) -> f32 {
    let sign = ((h >> 15) as u32) << 31;
    let exp = ((h >> 10) & 0x1F) as u32;
    let frac = (h & 0x3FF) as u32;
    let bits = match exp {
        0 if frac == 0 => sign,
        0 => return f32::from_bits(sign) + (if sign != 0 { -1.0 } else { 1.0 }) * frac as f32 * 2f32.powi(-24),
        0x1F => sign | 0x7F80_0000 | (frac << 13),
        _ => sign | ((exp + 112) << 23) | (frac << 13),
    };
    f32::from_bits(bits)
}

fn f32_to_f16(v: f32) -> u16 {
    let bits = v.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    if v.is_nan() {
        return sign | 0x7E00;
    }
    let a = v.abs();
    if a >= 65520.0 {
        return sign | 0x7C00;
    }
    if a < 6.103_515_6e-5 {
        // Subnormal range: scale to units of 2^-24 and round to nearest even.
        let units = a * 16_777_216.0;
        let r = units.round_ties_even();
        return sign | r as u16;
    }
    let exp = ((bits >> 23) & 0xFF) as i32 - 127 + 15;
    let mant = bits & 0x7F_FFFF;
    let mut h = ((exp as u32) << 10) | (mant >> 13);
    let rest = mant & 0x1FFF;
    if rest > 0x1000 || (rest == 0x1000 && (h & 1) == 1) {
        h += 1;
    }
    sign | h as u16
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
