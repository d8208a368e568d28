//! Access patterns agree with brute force: the packets in order, the byte range, injectivity (exact whenever it
//! is not `Unknown`) and the contiguous run, on random small patterns with negative, zero and interleaving strides.

use proptest::prelude::*;
use std::collections::HashSet;
use tapestry::dialects::npu::access::{AccessPattern, Injectivity};

fn pattern() -> impl Strategy<Value = AccessPattern> {
    let loops = proptest::collection::vec((0u32..5, -40i64..40), 0..4);
    (0u64..64, loops, 0u32..10).prop_map(|(base, loops, packet)| AccessPattern::new(base, &loops, packet))
}

/// Every packet's offset, by decoding its number in mixed radix (outer loops most significant).
fn decoded(ap: &AccessPattern) -> Vec<i128> {
    let n = ap.packets().unwrap();
    (0..n)
        .map(|mut i| {
            let mut offset = 0i128;
            for l in ap.loops.iter().rev() {
                offset += (i % l.count as u64) as i128 * l.stride as i128;
                i /= l.count as u64;
            }
            offset
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn patterns_agree_with_brute_force(ap in pattern()) {
        let offsets: Vec<i128> = ap.offsets().collect();
        prop_assert_eq!(&offsets, &decoded(&ap));
        let bytes: Vec<i128> = offsets
            .iter()
            .flat_map(|&o| (0..ap.packet as i128).map(move |b| ap.base as i128 + o + b))
            .collect();
        let range = bytes.iter().min().map(|&lo| (lo, bytes.iter().max().unwrap() + 1));
        prop_assert_eq!(ap.range(), range);
        let distinct: HashSet<i128> = bytes.iter().copied().collect();
        match ap.injectivity() {
            Injectivity::Injective => prop_assert_eq!(distinct.len(), bytes.len()),
            Injectivity::Overlap(a, b) => {
                prop_assert!(distinct.len() < bytes.len());
                prop_assert!(offsets.contains(&a) && offsets.contains(&b) && (b - a) < ap.packet as i128);
            }
            Injectivity::Unknown => prop_assert!(false, "small patterns are always decided"),
        }
        let run = ap.contiguous_run();
        if ap.packet > 0 && run > 0 && !offsets.is_empty() {
            let first = (run / ap.packet as u64) as usize;
            prop_assert!(first <= offsets.len());
            for (i, &o) in offsets.iter().take(first).enumerate() {
                prop_assert_eq!(o, i as i128 * ap.packet as i128);
            }
        }
    }
}
