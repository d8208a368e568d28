//! What each instruction does to the memories: DMA copies, fills, streams (register-file loads, casts,
//! transposes), matmuls (`matmul`), elementwise vector functions and reductions. A compute instruction runs
//! its slices in parallel, each on its own memories; consecutive DMAs that touch different memories run at once.

use super::matmul::matmul;
use super::memory::Bytes;
use super::moves::moves;
use super::parallel::PARALLEL_WORK;
use super::program::Program;
use super::shared_a;
use super::stacked;
use super::state::{contiguous_start, gather, scatter, unwritten, word_bytes, words, Memories};
use crate::dialects::npu::access::AccessPattern;
use crate::dialects::npu::dma::Dma;
use crate::dialects::npu::ops::instruction::{Access, Instruction, Site};
use crate::dialects::npu::ops::memset::Memset;
use crate::dialects::npu::ops::onchip::{Operand, Slices, Space};
use crate::dialects::npu::ops::reduce::Reduce;
use crate::dialects::npu::ops::stream::Stream;
use crate::dialects::npu::ops::vector::Vector;
use crate::machine::NpuConfig;
use foldhash::{HashSet, HashSetExt};
use rayon::prelude::*;

/// Carries out `program`'s instructions in the order they started; the index of the one that fails and why.
/// Consecutive DMAs that touch different memories (none writes what another reads or writes) run at once, on
/// rayon's threads; when `lazy`, those out of HBM into one run become forwards (`forward`), carried out only when
/// needed.
pub fn run_in_order(program: &Program, mem: &mut Memories, lazy: bool) -> Result<(), (usize, String)> {
    let (order, actions) = (&program.order, &program.actions);
    let mut i = 0;
    while i < order.len() {
        let k = order[i];
        match &actions[k] {
            Some(Instruction::Dma(_)) => {
                let steps = &order[i..i + program.dma_groups[i]];
                run_dmas(steps, &program.parts, &program.accesses, mem, lazy)?;
                i += steps.len();
            }
            Some(_) if lazy && program.trf.skips(k, mem) => i += 1,
            Some(instruction) => {
                compute(program, k, instruction, mem, lazy).map_err(|m| (k, m))?;
                i += 1;
            }
            None => i += 1,
        }
    }
    Ok(())
}

/// Carries out step `k`, `instruction` (not a DMA), once the forwards, fills and deferred products it meets are
/// settled; when `lazy`,
/// a matmul reads `B` through its TRF load where the plan found a view ([`super::trf_forward`]) and `A` in the fills
/// it lies in ([`super::shared_a`]), and a memset of one run of data memory becomes fills ([`super::lazy_fill`]).
fn compute(
    program: &Program,
    k: usize,
    instruction: &Instruction,
    mem: &mut Memories,
    lazy: bool,
) -> Result<(), String> {
    let through = matches!(instruction, Instruction::Stream(_) | Instruction::Matmul(_) | Instruction::Vector(_));
    let view = program.trf.view(k).filter(|_| lazy);
    if let Some((_, reads)) = view {
        mem.settle_held(reads);
    }
    // After `settle_held`, which may carry out a fill the view reads: the groups' fills stay until the matmul.
    let (stacks, groups) = match (instruction, view) {
        (Instruction::Matmul(mm), Some((v, _))) => (stacked::stacks(mm, mem, v), shared_a::groups(mm, mem, v)),
        _ => (vec![], vec![]),
    };
    // A matmul adding into deferred products as a whole leaves them deferred; anything else touching their
    // accumulators carries them out.
    let units = || stacked::units(&stacks).into_iter().chain(shared_a::units(&groups)).collect::<Vec<_>>();
    if !matches!(instruction, Instruction::Matmul(mm) if mem.joins_all(mm, &units())) {
        mem.settle_deferred(&program.accesses[k]);
    }
    match instruction {
        Instruction::Matmul(mm) => mem.settle_keeping(&program.accesses[k], through, &shared_a::kept(mm, &groups)),
        _ => mem.settle(&program.accesses[k], through),
    }
    match instruction {
        Instruction::Matmul(mm) => matmul(mm, mem, &program.machine, view.map(|v| &v.0), (stacks, &groups)),
        Instruction::Memset(m) if lazy && mem.fill_lazily(m) => Ok(()),
        _ => execute(instruction, mem, &program.machine),
    }
}

/// Carries out the DMAs of steps `order` (each step's single-slice commands in `parts`, its accesses in
/// `accesses`), found apart by [`dma_group`]: when `lazy`, those that can become overlays of fills
/// ([`super::lazy_fill`]) or forwards do, and the others copy in parallel.
fn run_dmas(
    order: &[usize],
    parts: &[Vec<Dma>],
    accesses: &[Vec<Access>],
    mem: &mut Memories,
    lazy: bool,
) -> Result<(), (usize, String)> {
    let (mut copies, mut failed) = (Vec::new(), None);
    'steps: for &k in order {
        mem.settle_deferred(&accesses[k]);
        let overlays = if lazy { mem.overlay_targets(&parts[k]) } else { vec![None; parts[k].len()] };
        mem.settle_keeping(&accesses[k], false, &overlays.iter().flatten().copied().collect());
        for (d, overlay) in parts[k].iter().zip(overlays) {
            if let Some(Err(at)) = overlay.map(|key| mem.overlay(d, key)) {
                failed = Some((k, unwritten_hbm_or_dm(at)));
                break 'steps;
            }
            if overlay.is_some() {
                continue;
            }
            match lazy.then(|| mem.forward(d)) {
                Some(Ok(true)) => {}
                Some(Err(at)) => {
                    failed = Some((k, unwritten_hbm_or_dm(at)));
                    break 'steps;
                }
                _ => copies.push((k, d)),
            }
        }
    }
    // The copies before a forward that failed go first: the error is the earliest DMA's, as when all copy.
    let apart: Vec<&Dma> = copies.iter().map(|c| c.1).collect();
    copy_apart(&apart, mem).map_err(|(j, m)| (copies[j].0, m))?;
    failed.map_or(Ok(()), Err)
}

/// Per position in `order` (steps in the order they run), how many DMA steps from there [`run_in_order`] runs at
/// once, found once when the program is loaded (0 where no group starts).
pub fn dma_groups(order: &[usize], parts: &[Vec<Dma>]) -> Vec<usize> {
    let mut groups = vec![0; order.len()];
    let mut i = 0;
    while i < order.len() {
        groups[i] = dma_group(&order[i..], parts);
        i += groups[i].max(1);
    }
    groups
}

/// How many DMA steps from the start of `order` may run at once: each of their single-slice commands writes a
/// memory no other reads or writes. A step whose commands share a memory (a copy within one, a gather into one
/// buffer) goes alone, its commands one after another.
fn dma_group(order: &[usize], parts: &[Vec<Dma>]) -> usize {
    let (mut reads, mut writes) = (HashSet::new(), HashSet::new());
    let mut steps = 0;
    for &k in order {
        if parts[k].is_empty() {
            break;
        }
        let sites = || parts[k].iter().map(|d| (Site::of(&d.src.memory), Site::of(&d.dst.memory)));
        let (s, t): (HashSet<Site>, HashSet<Site>) = sites().unzip();
        let alone = t.len() < parts[k].len() || s.iter().any(|x| t.contains(x));
        let meets = t.iter().any(|x| writes.contains(x) || reads.contains(x)) || s.iter().any(|x| writes.contains(x));
        if steps > 0 && (alone || meets) {
            break;
        }
        steps += 1;
        if alone {
            break;
        }
        reads.extend(s);
        writes.extend(t);
    }
    steps
}

/// Carries out DMAs that [`dma_group`] found apart (or the commands of one step that goes alone, one after
/// another), in parallel when they move [`PARALLEL_WORK`] bytes or more; the position of the first that fails and
/// why.
fn copy_apart(dmas: &[&Dma], mem: &mut Memories) -> Result<(), (usize, String)> {
    let targets: HashSet<Site> = dmas.iter().map(|d| Site::of(&d.dst.memory)).collect();
    let sources = || dmas.iter().map(|d| Site::of(&d.src.memory));
    let work: u64 = dmas.iter().map(|d| d.src.pattern.bytes().unwrap_or(0)).sum();
    let apart = targets.len() == dmas.len() && !sources().any(|s| targets.contains(&s));
    if dmas.len() < 2 || !apart || work < PARALLEL_WORK {
        return dmas.iter().enumerate().try_for_each(|(i, d)| copy(d, mem).map_err(|m| (i, m)));
    }
    for d in dmas {
        mem.get(Site::of(&d.src.memory));
    }
    let mut taken: Vec<Bytes> = dmas.iter().map(|d| mem.take(Site::of(&d.dst.memory))).collect();
    let shared = &*mem;
    let results: Vec<Result<(), String>> = dmas
        .par_iter()
        .zip(taken.par_iter_mut())
        .map(|(d, to)| copy_packets(d, shared.peek(Site::of(&d.src.memory)), to))
        .collect();
    for (d, bytes) in dmas.iter().zip(taken) {
        mem.put(Site::of(&d.dst.memory), bytes);
    }
    results.into_iter().enumerate().find_map(|(i, r)| r.err().map(|m| (i, m))).map_or(Ok(()), Err)
}

/// Carries out `instruction` (verified, so every pattern is inside its memory).
pub fn execute(instruction: &Instruction, mem: &mut Memories, cfg: &NpuConfig) -> Result<(), String> {
    match instruction {
        Instruction::Dma(d) => d.parts().iter().try_for_each(|p| copy(p, mem)),
        Instruction::Memset(m) => fill(m, mem),
        Instruction::Stream(s) => stream(s, mem),
        Instruction::Matmul(m) => matmul(m, mem, cfg, None, (vec![], &[])),
        Instruction::Vector(v) => vector(v, mem),
        Instruction::Reduce(r) => reduce(r, mem),
    }
}

/// Operand `o`'s bytes on slice `slice` of `slices`.
fn read(mem: &mut Memories, o: &Operand, slices: &Slices, slice: u64) -> Result<Vec<u8>, String> {
    gather(mem.get(slices.site(o.space, slice)), &o.pattern).map_err(unwritten(o.space, slice))
}

/// Each packet of the source to its place in the destination.
fn copy(dma: &Dma, mem: &mut Memories) -> Result<(), String> {
    let (src, dst) = (Site::of(&dma.src.memory), Site::of(&dma.dst.memory));
    let (sp, dp) = (&dma.src.pattern, &dma.dst.pattern);
    if src == dst {
        let data = gather(mem.get(src), sp).map_err(unwritten_hbm_or_dm)?;
        scatter(mem.get(dst), dp, &data);
        return Ok(());
    }
    let (from, to) = mem.pair(src, dst);
    copy_packets(dma, from, to)
}

/// The error of a DMA reading byte `at` of its source, which nothing wrote.
fn unwritten_hbm_or_dm(at: usize) -> String {
    format!("reads byte {at}, which nothing wrote")
}

/// Each packet of `dma`'s source in `from` to its place in `to`.
fn copy_packets(dma: &Dma, from: &Bytes, to: &mut Bytes) -> Result<(), String> {
    copy_pattern(from, &dma.src.pattern, to, &dma.dst.pattern).map_err(unwritten_hbm_or_dm)
}

/// Each packet `sp` reads from `from` to the place of the matching packet of `dp` in `to` (packets of one size, as
/// many in both), or the first byte read that nothing wrote.
pub fn copy_pattern(from: &Bytes, sp: &AccessPattern, to: &mut Bytes, dp: &AccessPattern) -> Result<(), usize> {
    let packet = sp.packet as usize;
    for (s, d) in sp.offsets().zip(dp.offsets()) {
        to.write((dp.base as i128 + d) as usize, from.read((sp.base as i128 + s) as usize, packet)?);
    }
    Ok(())
}

/// The value in every packet of every slice of the range.
fn fill(m: &Memset, mem: &mut Memories) -> Result<(), String> {
    let element = m.element();
    let len = m.dst.pattern.bytes().unwrap_or(0) as usize;
    let mut data = element.repeat(len / element.len().max(1));
    data.extend_from_slice(&element[..len - data.len()]);
    mem.per_slice(&m.slices, (&[m.dst.space], len as u64), |one| {
        one.write(&m.dst, &data);
        Ok(())
    })
}

/// A stream on each slice; a plain copy from one run of bytes into another space goes straight across, and a
/// transpose moves its elements as planned once ([`moves`]).
fn stream(s: &Stream, mem: &mut Memories) -> Result<(), String> {
    let direct = s.is_copy() && s.src.space != s.dst.space && contiguous_start(&s.src.pattern).is_some();
    let planned = moves(s);
    let work = s.dst.pattern.bytes().unwrap_or(0);
    mem.per_slice(&s.slices, (&[s.src.space, s.dst.space], work), |one| {
        let (site, through) = (one.site(s.src.space), one.through);
        if direct && through.copy(site, &s.src.pattern, one.get(s.dst.space), &s.dst.pattern) {
            return Ok(());
        }
        if direct {
            let at = contiguous_start(&s.src.pattern).expect("one run");
            let len = s.src.pattern.bytes().unwrap_or(0) as usize;
            let slice = one.slice;
            let (src, dst) = one.two(s.src.space, s.dst.space);
            scatter(dst, &s.dst.pattern, src.read(at, len).map_err(unwritten(s.src.space, slice))?);
            return Ok(());
        }
        if let Some(planned) = planned.as_ref().filter(|_| !one.held(&s.src)) {
            let done = match s.src.space == s.dst.space {
                true => planned.apply_within(one.get(s.src.space)),
                false => {
                    let (src, dst) = one.two(s.src.space, s.dst.space);
                    planned.apply(src, dst)
                }
            };
            if done {
                return Ok(());
            }
        }
        let data = s.apply(one.read(&s.src)?);
        one.write(&s.dst, &data);
        Ok(())
    })
}

/// A vector instruction on each slice: its operands read as words, the results written at `dst`.
fn vector(v: &Vector, mem: &mut Memories) -> Result<(), String> {
    let used: Vec<Space> = v.reads().iter().map(|o| o.space).chain([v.dst.space]).collect();
    let n = v.elements() as usize;
    mem.per_slice(&v.slices, (&used, 4 * n as u64), |one| {
        let inputs: Vec<Vec<u32>> = v.reads().into_iter().map(|o| one.read_words(o)).collect::<Result<_, _>>()?;
        let inputs: Vec<&[u32]> = inputs.iter().map(Vec::as_slice).collect();
        let mut results = vec![0u32; n];
        v.apply_into(&inputs, &mut results)?;
        results.iter_mut().for_each(|w| *w = w.to_le());
        one.write(&v.dst, bytemuck::cast_slice(&results));
        Ok(())
    })
}

fn reduce(r: &Reduce, mem: &mut Memories) -> Result<(), String> {
    let s = r.slices;
    if !r.across {
        let work = r.src.pattern.bytes().unwrap_or(0);
        return mem.per_slice(&s, (&[r.src.space, r.dst.space], work), |one| {
            let results = r.rows(&words(&one.read(&r.src)?));
            one.write(&r.dst, &word_bytes(&results));
            Ok(())
        });
    }
    let mut acc = words(&read(mem, &r.src, &s, s.first)?);
    for slice in s.first + 1..s.end {
        r.fold(&mut acc, &words(&read(mem, &r.src, &s, slice)?));
    }
    let results = word_bytes(&acc);
    for slice in s.first..s.end {
        scatter(mem.get(s.site(r.dst.space, slice)), &r.dst.pattern, &results);
    }
    Ok(())
}
