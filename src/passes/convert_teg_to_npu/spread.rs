//! One DMA command for many slices: the single-slice transfers of a wave of tiles (in slice order) merged into
//! commands with spreads (`npu.dma ... spread [...]`), so that a box many slices need is read from HBM once and one
//! startup serves a row of slices; then the longest commands split so that every DMA engine gets one.

use crate::dialects::npu::dma::{Dma, Memory, Side, SpreadLoop};
use crate::machine::NpuConfig;

/// `parts` (single-slice DMAs, in slice order) as spread commands: each run of parts that differ only in their
/// slice (consecutive, in one cluster) and their HBM base (a constant step apart, 0 for a broadcast) becomes one
/// command, in up to two loops (blocks of consecutive slices, repeated); then the command of most cycles is halved
/// along a loop that moves its HBM side (halving a broadcast would read the same bytes twice) until there are
/// `engines` commands or none can be.
pub fn merge(parts: &[Dma], engines: usize, cfg: &NpuConfig) -> Vec<Dma> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < parts.len() {
        let (command, used) = run_at(&parts[i..]);
        match command.check(cfg) {
            Ok(()) => out.push(command),
            Err(_) => out.extend(parts[i..i + used].iter().cloned()),
        }
        i += used;
    }
    while out.len() < engines {
        let longest = (0..out.len()).filter(|&k| halves(&out[k]).is_some()).max_by_key(|&k| out[k].cycles(cfg));
        let Some(k) = longest else { break };
        let (a, b) = halves(&out[k]).expect("a command that halves");
        out.splice(k..=k, [a, b]);
    }
    out
}

/// The command of the longest run at the start of `parts`, and how many parts it covers.
fn run_at(parts: &[Dma]) -> (Dma, usize) {
    let first = &parts[0];
    // Part `j`'s slice and HBM base from the first's, if it is alike.
    let at = |j: usize| {
        let p = parts.get(j).filter(|p| alike(first, p))?;
        Some((slice(p) as i64 - slice(first) as i64, base(p) - base(first)))
    };
    // The inner loop: consecutive slices, the HBM base a constant step apart.
    let step = at(1).filter(|&(s, _)| s == 1).map_or(0, |(_, b)| b);
    let inner = (1..).find(|&j| at(j) != Some((j as i64, j as i64 * step))).expect("a run ends");
    // The outer loop: more blocks like the first, each one further by a constant stride.
    let stride = at(inner).map_or(0, |(_, b)| b);
    let block = |b: usize| {
        let expect = |t: usize| Some(((b * inner + t) as i64, b as i64 * stride + t as i64 * step));
        (0..inner).all(|t| at(b * inner + t) == expect(t))
    };
    let outer = (1..).find(|&b| !block(b)).expect("blocks end");
    let mut command = first.clone();
    let loops = [(outer, inner as u64, stride), (inner, 1, step)];
    command.spread = loops
        .iter()
        .filter(|l| l.0 > 1)
        .map(|&(count, step, hbm_stride)| SpreadLoop { count: count as u32, step, hbm_stride })
        .collect();
    (command, outer * inner)
}

/// Whether two single-slice DMAs differ at most in their slice and HBM base: same buffer, cluster, direction and
/// patterns otherwise.
fn alike(a: &Dma, b: &Dma) -> bool {
    let same_side = |x: &Side, y: &Side| match (x.memory, y.memory) {
        (Memory::Hbm { .. }, Memory::Hbm { .. }) => {
            x.memory == y.memory && x.pattern.loops == y.pattern.loops && x.pattern.packet == y.pattern.packet
        }
        (Memory::Dm { chip: c, cluster: k, .. }, Memory::Dm { chip: d, cluster: l, .. }) => {
            (c, k) == (d, l) && x.pattern == y.pattern
        }
        _ => false,
    };
    a.spread.is_empty() && b.spread.is_empty() && same_side(&a.src, &b.src) && same_side(&a.dst, &b.dst)
}

/// The DM side's slice of a single-slice DMA between HBM and DM (0 otherwise: such DMAs are never alike).
fn slice(d: &Dma) -> u64 {
    match (d.src.memory, d.dst.memory) {
        (Memory::Dm { slice, .. }, Memory::Hbm { .. }) | (Memory::Hbm { .. }, Memory::Dm { slice, .. }) => slice,
        _ => 0,
    }
}

/// The HBM side's base.
fn base(d: &Dma) -> i64 {
    let hbm = if matches!(d.src.memory, Memory::Hbm { .. }) { &d.src } else { &d.dst };
    hbm.pattern.base as i64
}

/// A spread command cut in two along its outermost loop that runs more than once and moves the HBM side.
fn halves(d: &Dma) -> Option<(Dma, Dma)> {
    let k = d.spread.iter().position(|l| l.count > 1 && l.hbm_stride != 0)?;
    let cut = d.spread[k];
    let half = cut.count / 2;
    let (mut a, mut b) = (d.clone(), d.clone());
    a.spread[k].count = half;
    b.spread[k].count = cut.count - half;
    for side in [&mut b.src, &mut b.dst] {
        match &mut side.memory {
            Memory::Dm { slice, .. } => *slice += half as u64 * cut.step,
            Memory::Hbm { .. } => side.pattern.base = (side.pattern.base as i64 + half as i64 * cut.hbm_stride) as u64,
        }
    }
    for c in [&mut a, &mut b] {
        c.spread.retain(|l| l.count > 1);
    }
    Some((a, b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialects::npu::access::AccessPattern;

    fn part(slice: u64, hbm_base: u64) -> Dma {
        let hbm = Side {
            memory: Memory::Hbm { chip: 0, region: 0, bytes: 1 << 20 },
            pattern: AccessPattern::new(hbm_base, &[(4, 1024)], 256),
        };
        let dm = Side {
            memory: Memory::Dm { chip: 0, cluster: 0, slice },
            pattern: AccessPattern::new(0, &[(4, 256)], 256),
        };
        Dma::new(hbm, dm)
    }

    /// The parts a list of commands stands for.
    fn expanded(commands: &[Dma]) -> Vec<Dma> {
        commands.iter().flat_map(Dma::parts).collect()
    }

    #[test]
    fn a_grid_of_row_blocks_broadcast_along_columns_is_one_command() {
        let cfg = NpuConfig::default();
        // Slices 4r + c get row block r: blocks of four equal parts, 4096 B apart.
        let parts: Vec<Dma> = (0..16).map(|t| part(t, (t / 4) * 4096)).collect();
        let merged = merge(&parts, 1, &cfg);
        assert_eq!(merged.len(), 1);
        assert_eq!(
            merged[0].spread,
            [SpreadLoop { count: 4, step: 4, hbm_stride: 4096 }, SpreadLoop { count: 4, step: 1, hbm_stride: 0 }]
        );
        assert_eq!(expanded(&merged), parts);
        // Split for four engines: four commands, the same parts.
        let split = merge(&parts, 4, &cfg);
        assert_eq!(split.len(), 4);
        assert_eq!(expanded(&split), parts);
    }

    proptest::proptest! {
        /// Whatever the parts, the commands stand for exactly them (split commands may take them in another
        /// order: they are apart) and each passes the machine's rules.
        #[test]
        fn merged_commands_are_the_parts(
            rows in 1u64..6, cols in 1u64..6, row_stride in 0u64..3, col_stride in 0u64..3,
            engines in 1usize..9, skip in proptest::option::of(0u64..36),
        ) {
            let cfg = NpuConfig::default();
            let parts: Vec<Dma> = (0..rows * cols)
                .filter(|&t| Some(t) != skip)
                .map(|t| part(t, (t / cols) * row_stride * 8192 + (t % cols) * col_stride * 1024))
                .collect();
            let merged = merge(&parts, engines, &cfg);
            let mut got = expanded(&merged);
            got.sort_by_key(slice);
            proptest::prop_assert_eq!(got, parts);
            for c in &merged {
                proptest::prop_assert!(c.check(&cfg).is_ok(), "{:?}", c);
            }
        }
    }

    #[test]
    fn parts_that_do_not_line_up_stay_apart() {
        let cfg = NpuConfig::default();
        let parts = vec![part(0, 0), part(1, 256), part(3, 512), part(4, 4096)];
        let merged = merge(&parts, 1, &cfg);
        assert_eq!(expanded(&merged), parts);
        assert_eq!(merged.len(), 2);
    }
}
