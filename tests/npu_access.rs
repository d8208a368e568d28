//! Access patterns agree with brute force: the packets in order, the byte range, injectivity (exact whenever it
//! is not `Unknown`) and the contiguous run, on random small patterns with negative, zero and interleaving strides;
//! a coalesced pattern touches the same bytes in the same order, and the interpreter's gather reads them so.

use proptest::prelude::*;
use std::collections::HashSet;
use tapestry::dialects::npu::access::{AccessPattern, Injectivity};
use tapestry::dialects::npu::interp::memory::Bytes;
use tapestry::dialects::npu::interp::state::gather;

fn pattern() -> impl Strategy<Value = AccessPattern> {
    let loops = proptest::collection::vec((0u32..5, -40i64..40), 0..4);
    (0u64..64, loops, 0u32..10).prop_map(|(base, loops, packet)| AccessPattern::new(base, &loops, packet))
}

/// Every byte address the pattern touches, in order.
fn bytes_of(ap: &AccessPattern) -> Vec<i128> {
    ap.offsets().flat_map(|o| (0..ap.packet as i128).map(move |b| ap.base as i128 + o + b)).collect()
}

/// Patterns inside a 4 KiB memory, with strides and packets of whole elements as often as not (so that the gather's
/// word copies run) and element-sized or adjacent packets that coalesce.
fn in_bounds_pattern() -> impl Strategy<Value = AccessPattern> {
    let loops = proptest::collection::vec((1u32..6, -6i64..7, prop::bool::ANY), 0..4);
    (0u64..8, loops, prop::sample::select(vec![1u32, 2, 3, 4, 8, 12]), prop::bool::ANY).prop_map(
        |(base, loops, packet, words)| {
            let unit = if words { packet as i64 } else { 1 };
            let loops: Vec<(u32, i64)> =
                loops.iter().map(|&(c, s, by_packet)| (c, if by_packet { s * unit } else { s })).collect();
            let lowest: i64 = loops.iter().map(|&(c, s)| (c as i64 - 1) * s.min(0)).sum();
            let base = (base * if words { packet as u64 } else { 1 }) as i64 - lowest + 64 * packet as i64;
            AccessPattern::new(base as u64, &loops, packet)
        },
    )
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

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn coalescing_keeps_the_bytes_and_their_order(ap in pattern()) {
        let merged = ap.coalesced();
        prop_assert!(merged.loops.len() <= ap.loops.len());
        prop_assert_eq!(bytes_of(&merged), bytes_of(&ap));
    }

    #[test]
    fn gather_reads_the_bytes_in_pattern_order(ap in in_bounds_pattern()) {
        let memory: Vec<u8> = (0..4096u32).map(|i| (i * 7 + i / 256) as u8).collect();
        let want: Vec<u8> = bytes_of(&ap).iter().map(|&b| memory[b as usize]).collect();
        prop_assert_eq!(gather(&Bytes::full(memory), &ap).unwrap(), want);
    }
}
