//! One DMA command for many slices: the single-slice transfers of a wave of tiles merged into commands with
//! spreads (`npu.dma ... spread [...]`), so that a box many slices need is read from HBM once and one startup serves
//! a row of slices; then the longest commands split so that every DMA engine gets one.

use crate::dialects::npu::dma::{Dma, Memory, SpreadLoop};
use crate::machine::NpuConfig;
use indexmap::IndexMap;

/// `parts` (single-slice DMAs) as spread commands: parts moving the same bytes to slices a constant step apart
/// become one broadcast; then runs of such commands that differ only in their first slice and HBM base, each a
/// constant step from the last, become one command with a loop more, as long as runs are found. A merged command
/// the machine's rules refuse stays its parts. Then the command of most cycles is halved along a loop that moves
/// its HBM side (halving a broadcast would read the same bytes twice) until there are `engines` commands or none
/// can be (nor should: one whose transfer takes less than a startup stays whole).
pub fn merge(parts: &[Dma], engines: usize, cfg: &NpuConfig) -> Vec<Dma> {
    let hbm_dm = |d: &Dma| {
        matches!(
            (d.src.memory, d.dst.memory),
            (Memory::Hbm { .. }, Memory::Dm { .. }) | (Memory::Dm { .. }, Memory::Hbm { .. })
        )
    };
    if !parts.iter().all(|d| hbm_dm(d) && d.spread.is_empty()) {
        return parts.to_vec();
    }
    let mut commands = broadcasts(parts);
    loop {
        let next = runs(&commands);
        if next.len() == commands.len() {
            break;
        }
        commands = next;
    }
    let mut out = Vec::new();
    for command in commands {
        match command.check(cfg) {
            Ok(()) => out.push(command),
            Err(_) => out.extend(command.parts()),
        }
    }
    // Halving pays while a command's transfer outlasts a startup.
    let long = |d: &Dma| d.cycles(cfg) > 2 * cfg.dma_startup_cycles;
    while out.len() < engines {
        let candidates = (0..out.len()).filter(|&k| long(&out[k]) && halves(&out[k]).is_some());
        let longest = candidates.max_by_key(|&k| out[k].cycles(cfg));
        let Some(k) = longest else { break };
        let (a, b) = halves(&out[k]).expect("a command that halves");
        out.splice(k..=k, [a, b]);
    }
    out
}

/// The parts grouped by what they move (all but the slice), in the order first met; each group's slices cut into
/// progressions, each progression one command (a broadcast when it has more than one slice).
fn broadcasts(parts: &[Dma]) -> Vec<Dma> {
    let mut groups: IndexMap<Dma, Vec<u64>> = IndexMap::new();
    for p in parts {
        let mut key = p.clone();
        set_slice(&mut key, 0);
        groups.entry(key).or_default().push(slice(p));
    }
    let mut out = Vec::new();
    for (key, mut slices) in groups {
        slices.sort_unstable();
        let mut i = 0;
        while i < slices.len() {
            let step = slices.get(i + 1).map_or(1, |&s| s - slices[i]).max(1);
            let count = (i + 1..slices.len()).find(|&j| slices[j] - slices[j - 1] != step).unwrap_or(slices.len()) - i;
            let mut command = key.clone();
            set_slice(&mut command, slices[i]);
            if count > 1 {
                command.spread = vec![SpreadLoop { count: count as u32, step, hbm_stride: 0 }];
            }
            out.push(command);
            i += count;
        }
    }
    out
}

/// `commands` grouped by their shape (all but the first slice and the HBM base, in the order first met), each
/// group's runs whose first slices and HBM bases are a constant step from the last made one command with an outer
/// loop.
fn runs(commands: &[Dma]) -> Vec<Dma> {
    let mut groups: IndexMap<Dma, Vec<&Dma>> = IndexMap::new();
    for c in commands {
        let mut key = c.clone();
        set_slice(&mut key, 0);
        set_base(&mut key, 0);
        groups.entry(key).or_default().push(c);
    }
    let mut out = Vec::new();
    for group in groups.values() {
        let mut i = 0;
        while i < group.len() {
            let first = group[i];
            let delta = |j: usize| {
                let c = group.get(j)?;
                Some((slice(c) as i64 - slice(first) as i64, base(c) - base(first)))
            };
            let (step, stride) = delta(i + 1).filter(|d| d.0 > 0).unwrap_or((0, 0));
            let run = |t: usize| step > 0 && delta(i + t) == Some((t as i64 * step, t as i64 * stride));
            let count = (1..).find(|&t| !run(t)).expect("a run ends");
            let mut command = first.clone();
            if count > 1 {
                command.spread.insert(0, SpreadLoop { count: count as u32, step: step as u64, hbm_stride: stride });
            }
            out.push(command);
            i += count;
        }
    }
    out
}

/// Sets the HBM side's base.
fn set_base(d: &mut Dma, to: u64) {
    for side in [&mut d.src, &mut d.dst] {
        if let Memory::Hbm { .. } = side.memory {
            side.pattern.base = to;
        }
    }
}

/// Sets the DM side's slice of a DMA between HBM and DM.
fn set_slice(d: &mut Dma, to: u64) {
    for side in [&mut d.src, &mut d.dst] {
        if let Memory::Dm { slice, .. } = &mut side.memory {
            *slice = to;
        }
    }
}

/// The DM side's (first) slice of a DMA between HBM and DM (0 otherwise: [`merge`] takes no other DMAs).
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
    use crate::dialects::npu::dma::Side;

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
        // Split for four engines: four commands, the same parts (on a machine whose startup is short enough for
        // halving to pay; on the default one these transfers stay one command).
        assert_eq!(merge(&parts, 4, &cfg).len(), 1);
        let quick = NpuConfig { dma_startup_cycles: 1, ..cfg };
        let split = merge(&parts, 4, &quick);
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
