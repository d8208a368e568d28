//! Which of many literal strings occur in a text: one rolling-hash pass (Rabin-Karp) per distinct length, so
//! thousands of `CHECK-NOT` lines guarding one gap cost a pass per length instead of a search per line.

use std::collections::{BTreeMap, HashMap};

/// The multiplier of the rolling hash (odd, so that it is invertible modulo 2^64).
const BASE: u64 = 0x100_0000_01b3;

/// The fewest literals of one length worth a rolling-hash pass: a pass costs a few nanoseconds per byte, a plain
/// search (memchr) a fraction of one, so fewer literals are left to their own searches.
pub(crate) const MIN_PER_PASS: usize = 16;

/// For each of `literals` (non-empty), whether it may occur in `hay` (with `icase`, ignoring ASCII case): false
/// only when it certainly does not. Literals of a length shared by fewer than [`MIN_PER_PASS`] are not looked
/// for (true).
pub(crate) fn occurring(hay: &[u8], literals: &[&[u8]], icase: bool) -> Vec<bool> {
    let fold = |b: u8| if icase { b.to_ascii_lowercase() } else { b };
    let hash = |bytes: &[u8]| bytes.iter().fold(0u64, |h, &b| h.wrapping_mul(BASE).wrapping_add(fold(b) as u64));
    // Length -> hash -> the literals of that length and hash.
    let mut tables: BTreeMap<usize, HashMap<u64, Vec<usize>>> = BTreeMap::new();
    for (i, lit) in literals.iter().enumerate() {
        tables.entry(lit.len()).or_default().entry(hash(lit)).or_default().push(i);
    }
    let mut found = vec![false; literals.len()];
    for table in tables.values().filter(|t| t.values().map(Vec::len).sum::<usize>() < MIN_PER_PASS) {
        table.values().flatten().for_each(|&i| found[i] = true);
    }
    let passes = tables
        .iter()
        .filter(|(&len, t)| (1..=hay.len()).contains(&len) && t.values().map(Vec::len).sum::<usize>() >= MIN_PER_PASS);
    for (&len, table) in passes {
        // BASE^(len - 1): what the byte leaving the window contributes.
        let top = (1..len).fold(1u64, |p, _| p.wrapping_mul(BASE));
        let mut h = hash(&hay[..len]);
        for start in 0..=hay.len() - len {
            if start > 0 {
                let (out, inn) = (fold(hay[start - 1]) as u64, fold(hay[start + len - 1]) as u64);
                h = h.wrapping_sub(out.wrapping_mul(top)).wrapping_mul(BASE).wrapping_add(inn);
            }
            let Some(candidates) = table.get(&h) else { continue };
            let window = &hay[start..start + len];
            for &i in candidates {
                if !found[i] && window.iter().zip(literals[i]).all(|(&a, &b)| fold(a) == fold(b)) {
                    found[i] = true;
                }
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::occurring;

    #[test]
    fn finds_exactly_the_literals_that_occur() {
        let hay = b"the Quick brown fox\njumps over";
        // Sixteen literals of length 5, so that they get a pass; two of another length, which do not.
        let mut lits: Vec<&[u8]> = vec![b"quick", b"Quick", b"fox\nj", b"overs"];
        lits.extend([&b"zzzzz"[..]; 12]);
        lits.extend([&b"x"[..], b"y"]);
        let sensitive = occurring(hay, &lits, false);
        assert_eq!(sensitive[..4], [false, true, true, false]);
        assert!(sensitive[4..16].iter().all(|&f| !f) && sensitive[16] && sensitive[17]);
        assert_eq!(occurring(hay, &lits, true)[..4], [true, true, true, false]);
        assert_eq!(occurring(b"ab", &[&b"abc"[..]; 16], false), [false; 16]);
    }

    proptest::proptest! {
        #[test]
        fn agrees_with_a_plain_search(
            hay in proptest::collection::vec(proptest::sample::select(b"abAB".to_vec()), 0..60),
            lits in proptest::collection::vec(
                proptest::collection::vec(proptest::sample::select(b"abAB".to_vec()), 1..4), 1..40),
            icase in proptest::bool::ANY,
        ) {
            let refs: Vec<&[u8]> = lits.iter().map(|l| &l[..]).collect();
            let matches = |w: &[u8], l: &[u8]| if icase { w.eq_ignore_ascii_case(l) } else { w == l };
            for (l, may) in refs.iter().zip(occurring(&hay, &refs, icase)) {
                let present = hay.windows(l.len()).any(|w| matches(w, l));
                let passed = refs.iter().filter(|m| m.len() == l.len()).count() >= super::MIN_PER_PASS;
                proptest::prop_assert_eq!(may, present || !passed);
            }
        }
    }
}
