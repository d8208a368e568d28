//! The race detector agrees with brute force: on random programs (steps on three queues, semaphore waits and
//! signals, barriers, overlapping reads and writes of two memories), the schedule reports a race exactly when some
//! pair of steps on different queues touches overlapping bytes, one writing, with neither ordered before the other
//! by queue order, signal → wait or a barrier (the transitive closure, computed directly). Footprints are strided
//! runs (as the memory-effects interface reports them), compared byte by byte here.

use proptest::prelude::*;
use tapestry::dialects::npu::interp::schedule::{schedule, Footprint, ScheduleError, Step};
use tapestry::interfaces::memory_effects::Extent;

fn program() -> impl Strategy<Value = Vec<Step>> {
    let footprint = (0u64..2, 0i128..12, 1i128..4, 1u64..4, -6i128..7).prop_map(|(memory, low, len, count, stride)| {
        Footprint { memory, extent: Extent::strided(0, low, len, count, stride) }
    });
    let step = (
        0usize..3,
        1u64..20,
        proptest::option::of((0usize..2, 1u64..6)),
        proptest::option::of(0usize..2),
        proptest::collection::vec(footprint.clone(), 0..2),
        proptest::collection::vec(footprint, 0..2),
        0u8..12,
    );
    proptest::collection::vec(step, 1..12).prop_map(|raw| {
        raw.into_iter()
            .enumerate()
            .map(|(k, (queue, cycles, wait, signal, reads, writes, barrier))| {
                let barrier = barrier == 0; // A barrier neither waits nor signals.
                Step {
                    queue,
                    cycles,
                    waits: wait.filter(|_| !barrier).into_iter().collect(),
                    signals: signal.filter(|_| !barrier).map(|s| (s, k as u64 + 1)).into_iter().collect(),
                    barrier,
                    reads,
                    writes,
                }
            })
            .collect()
    })
}

/// Whether some unordered pair of steps conflicts, given when each ran.
fn brute_force_race(steps: &[Step], end: &[u64]) -> bool {
    let n = steps.len();
    let mut hb = vec![vec![false; n]; n];
    for b in 0..n {
        for a in 0..b {
            let same_queue = !steps[a].barrier && !steps[b].barrier && steps[a].queue == steps[b].queue;
            if same_queue || steps[a].barrier || steps[b].barrier {
                hb[a][b] = true;
            }
        }
        for &(sem, v) in &steps[b].waits {
            // The signal that first raised `sem` to `v` or above.
            let signaler = (0..n)
                .filter(|&a| steps[a].signals.iter().any(|&(s, w)| s == sem && w >= v) && a != b)
                .min_by_key(|&a| (end[a], a));
            if let Some(a) = signaler {
                hb[a][b] = true;
            }
        }
    }
    for k in 0..n {
        for a in 0..n {
            for b in 0..n {
                if hb[a][k] && hb[k][b] {
                    hb[a][b] = true;
                }
            }
        }
    }
    let conflict = |a: &Step, b: &Step| {
        let bytes = |f: &Footprint| -> Vec<i128> {
            let e = f.extent;
            (0..e.count as i128).flat_map(|i| (0..e.len).map(move |b| e.low + i * e.stride + b)).collect()
        };
        let touches = |x: &[Footprint], y: &[Footprint]| {
            x.iter().any(|f| y.iter().any(|g| f.memory == g.memory && bytes(f).iter().any(|b| bytes(g).contains(b))))
        };
        touches(&a.writes, &b.writes) || touches(&a.writes, &b.reads) || touches(&a.reads, &b.writes)
    };
    (0..n).any(|a| {
        (0..n).any(|b| {
            a != b
                && !steps[a].barrier
                && !steps[b].barrier
                && steps[a].queue != steps[b].queue
                && !hb[a][b]
                && !hb[b][a]
                && conflict(&steps[a], &steps[b])
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn races_are_found_exactly(steps in program()) {
        let clean: Vec<Step> = steps.iter().map(|s| Step { reads: vec![], writes: vec![], ..s.clone() }).collect();
        let timing = match schedule(&clean, 3, 2) {
            Ok(s) => s,
            Err(ScheduleError::Deadlock(_) | ScheduleError::NotIncreasing(..)) => return Ok(()),
            Err(e) => return Err(TestCaseError::fail(format!("{e:?}"))),
        };
        let want = brute_force_race(&steps, &timing.end);
        match schedule(&steps, 3, 2) {
            Ok(s) => {
                prop_assert!(!want, "a race was missed");
                prop_assert_eq!(s, timing);
            }
            Err(ScheduleError::Race(a, b, _)) => prop_assert!(want, "steps {} and {} reported but ordered", a, b),
            Err(e) => return Err(TestCaseError::fail(format!("{e:?}"))),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 5000, ..ProptestConfig::default() })]

    /// Strided extents overlap exactly when some byte is in both, and one covers another only when it does.
    #[test]
    fn extents_overlap_exactly(
        a in (-20i128..20, 1i128..6, 1u64..6, -9i128..10),
        b in (-20i128..20, 1i128..6, 1u64..6, -9i128..10),
    ) {
        let (x, y) = (Extent::strided(0, a.0, a.1, a.2, a.3), Extent::strided(0, b.0, b.1, b.2, b.3));
        let bytes = |e: &Extent| -> std::collections::BTreeSet<i128> {
            (0..e.count as i128).flat_map(|i| (0..e.len).map(move |k| e.low + i * e.stride + k)).collect()
        };
        let (bx, by) = (bytes(&x), bytes(&y));
        let raw: std::collections::BTreeSet<i128> =
            (0..a.2 as i128).flat_map(|i| (0..a.1).map(move |k| a.0 + i * a.3 + k)).collect();
        prop_assert_eq!(&raw, &bx, "strided() keeps the bytes");
        prop_assert_eq!(x.overlaps(&y), !bx.is_disjoint(&by));
        if x.covers(&y) {
            prop_assert!(by.is_subset(&bx));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    /// Extents strided alike (tiles of one matrix) overlap exactly when some byte is in both: the case decided
    /// without walking runs.
    #[test]
    fn extents_strided_alike_overlap_exactly(
        a in (-40i128..40, 1i128..6, 1u64..8),
        b in (-40i128..40, 1i128..6, 1u64..8),
        stride in -12i128..13,
    ) {
        let (x, y) = (Extent::strided(0, a.0, a.1, a.2, stride), Extent::strided(0, b.0, b.1, b.2, stride));
        let bytes = |e: &Extent| -> std::collections::BTreeSet<i128> {
            (0..e.count as i128).flat_map(|i| (0..e.len).map(move |k| e.low + i * e.stride + k)).collect()
        };
        prop_assert_eq!(x.overlaps(&y), !bytes(&x).is_disjoint(&bytes(&y)));
    }
}
