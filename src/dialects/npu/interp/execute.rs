//! What each instruction does to the memories: DMA copies, fills, streams (register-file loads, casts,
//! transposes), matmuls on the crate's GEMM, elementwise vector functions and reductions. A compute instruction runs
//! its slices in parallel, each on its own memories; consecutive DMAs that touch different memories run at once.

use super::forward::Through;
use super::memory::Bytes;
use super::program::Program;
use super::state::{contiguous_start, gather, gather_into, scatter, unwritten, word_bytes, words, Memories};
use super::trf_forward::{b_operand, BView};
use crate::array::gemm::Gemm;
use crate::dialects::npu::access::AccessPattern;
use crate::dialects::npu::dma::Dma;
use crate::dialects::npu::ops::instruction::{Access, Instruction, Site};
use crate::dialects::npu::ops::matmul::Matmul;
use crate::dialects::npu::ops::memset::Memset;
use crate::dialects::npu::ops::onchip::{Operand, Slices, Space};
use crate::dialects::npu::ops::reduce::Reduce;
use crate::dialects::npu::ops::stream::Stream;
use crate::dialects::npu::ops::vector::Vector;
use crate::machine::{ElemType, NpuConfig};
use half::{bf16, f16};
use rayon::prelude::*;
use std::borrow::Cow;
use std::collections::HashSet;

/// Carries out `program`'s instructions in the order they started; the index of the one that fails and why.
/// Consecutive DMAs that touch different memories (none writes what another reads or writes) run at once, on
/// rayon's threads; when `lazy`, those out of HBM into one run become forwards (`forward`), carried out only when
/// needed.
pub fn run_in_order(program: &Program, mem: &mut Memories, lazy: bool) -> Result<(), (usize, String)> {
    let (order, actions, cfg) = (&program.order, &program.actions, &program.machine);
    let mut i = 0;
    while i < order.len() {
        let k = order[i];
        match &actions[k] {
            Some(Instruction::Dma(_)) => {
                let group = dma_group(&order[i..], actions);
                run_dmas(&order[i..i + group.len()], &group, &program.accesses, mem, lazy)?;
                i += group.len();
            }
            Some(_) if lazy && program.trf.skips(k, mem) => i += 1,
            Some(instruction) => {
                let through =
                    matches!(instruction, Instruction::Stream(_) | Instruction::Matmul(_) | Instruction::Vector(_));
                let view = program.trf.view(k).filter(|_| lazy);
                if let Some((_, reads)) = view {
                    mem.settle(reads, true);
                }
                mem.settle(&program.accesses[k], through);
                let view = view.map(|v| &v.0);
                match instruction {
                    Instruction::Matmul(mm) => matmul(mm, mem, cfg, view),
                    _ => execute(instruction, mem, cfg),
                }
                .map_err(|m| (k, m))?;
                i += 1;
            }
            None => i += 1,
        }
    }
    Ok(())
}

/// Carries out `dmas` (steps `order`, whose accesses are in `accesses`), found apart by [`dma_group`]: when `lazy`,
/// those that can become forwards do, and the others copy in parallel.
fn run_dmas(
    order: &[usize],
    dmas: &[&Dma],
    accesses: &[Vec<Access>],
    mem: &mut Memories,
    lazy: bool,
) -> Result<(), (usize, String)> {
    let (mut copies, mut failed) = (Vec::new(), None);
    for (&k, d) in order.iter().zip(dmas) {
        mem.settle(&accesses[k], false);
        match lazy.then(|| mem.forward(d)) {
            Some(Ok(true)) => {}
            Some(Err(at)) => {
                failed = Some((k, unwritten_hbm_or_dm(at)));
                break;
            }
            _ => copies.push((k, *d)),
        }
    }
    // The copies before a forward that failed go first: the error is the earliest DMA's, as when all copy.
    let apart: Vec<&Dma> = copies.iter().map(|c| c.1).collect();
    copy_apart(&apart, mem).map_err(|(j, m)| (copies[j].0, m))?;
    failed.map_or(Ok(()), Err)
}

/// The DMAs from the start of `order` that may run at once: each writes a memory no other of them reads or writes;
/// a DMA within one memory goes alone.
fn dma_group<'a>(order: &[usize], actions: &'a [Option<Instruction>]) -> Vec<&'a Dma> {
    let (mut reads, mut writes) = (HashSet::new(), HashSet::new());
    let mut group = Vec::new();
    for &k in order {
        let Some(Instruction::Dma(d)) = &actions[k] else { break };
        let (s, t) = (Site::of(&d.src.memory), Site::of(&d.dst.memory));
        let alone = s == t;
        if !group.is_empty() && (alone || writes.contains(&t) || reads.contains(&t) || writes.contains(&s)) {
            break;
        }
        group.push(d);
        if alone {
            break;
        }
        reads.insert(s);
        writes.insert(t);
    }
    group
}

/// Carries out DMAs that [`dma_group`] found apart, in parallel; the position of the first that fails and why.
fn copy_apart(dmas: &[&Dma], mem: &mut Memories) -> Result<(), (usize, String)> {
    if dmas.is_empty() {
        return Ok(());
    }
    if let [one] = dmas {
        return copy(one, mem).map_err(|m| (0, m));
    }
    for d in dmas {
        mem.get(Site::of(&d.src.memory));
        mem.get(Site::of(&d.dst.memory));
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
        Instruction::Dma(d) => copy(d, mem),
        Instruction::Memset(m) => fill(m, mem),
        Instruction::Stream(s) => stream(s, mem),
        Instruction::Matmul(m) => matmul(m, mem, cfg, None),
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
    let data: Vec<u8> = element.iter().copied().cycle().take(m.dst.pattern.bytes().unwrap_or(0) as usize).collect();
    mem.per_slice(&m.slices, &[m.dst.space], |one| {
        one.write(&m.dst, &data);
        Ok(())
    })
}

/// A stream on each slice; a plain copy from one run of bytes into another space goes straight across.
fn stream(s: &Stream, mem: &mut Memories) -> Result<(), String> {
    let direct = s.is_copy() && s.src.space != s.dst.space && contiguous_start(&s.src.pattern).is_some();
    mem.per_slice(&s.slices, &[s.src.space, s.dst.space], |one| {
        let (site, through) = (one.site(s.src.space), one.through);
        if direct && through.copy(site, &s.src.pattern, one.get(s.dst.space), &s.dst.pattern) {
            return Ok(());
        }
        if direct {
            let at = contiguous_start(&s.src.pattern).expect("one run");
            let len = s.src.pattern.bytes().unwrap_or(0) as usize;
            let [src, dst] = one.spaces.get_disjoint_mut([s.src.space.index(), s.dst.space.index()]).expect("apart");
            let (src, dst) = (src.as_ref().expect("named"), dst.as_mut().expect("named"));
            scatter(dst, &s.dst.pattern, src.read(at, len).map_err(unwritten(s.src.space, one.slice))?);
            return Ok(());
        }
        let data = s.apply(one.read(&s.src)?);
        one.write(&s.dst, &data);
        Ok(())
    })
}

fn vector(v: &Vector, mem: &mut Memories) -> Result<(), String> {
    let used: Vec<Space> = v.reads().iter().map(|o| o.space).chain([v.dst.space]).collect();
    mem.per_slice(&v.slices, &used, |one| {
        let inputs: Vec<Vec<u32>> =
            v.reads().into_iter().map(|o| one.read(o).map(|b| words(&b))).collect::<Result<_, _>>()?;
        let results = word_bytes(&v.apply(&inputs)?);
        one.write(&v.dst, &results);
        Ok(())
    })
}

fn reduce(r: &Reduce, mem: &mut Memories) -> Result<(), String> {
    let s = r.slices;
    if !r.across {
        return mem.per_slice(&s, &[r.src.space, r.dst.space], |one| {
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

/// The matmul on every slice of its range, in parallel; `B` read through the load that filled the TRF when `view`
/// says where it lies ([`super::trf_forward`]).
fn matmul(mm: &Matmul, mem: &mut Memories, cfg: &NpuConfig, view: Option<&BView>) -> Result<(), String> {
    mem.per_slice(&mm.slices, &[Space::Dm, Space::Acc, Space::Trf], |one| {
        let a = OperandA { site: one.site(Space::Dm), through: one.through, slice: one.slice };
        let [Some(dm), Some(acc), Some(trf), _] = &mut one.spaces else { unreachable!("the spaces a matmul names") };
        match view {
            Some(v) => {
                let (b, b_strides) = b_operand(v, (mm.k as usize, mm.n as usize), a.site, dm, a.through);
                let (rows, strides) = float_a(mm, a, dm)?;
                float_matmul(mm, (&rows, strides), (&b, b_strides), acc, a.slice)
            }
            None => matmul_slice(mm, a, dm, trf, acc, cfg),
        }
    })
}

/// Where one slice's `A` is: its data memory, read through to HBM where a DMA's forward holds the tile.
#[derive(Clone, Copy)]
struct OperandA<'a> {
    site: Site,
    through: Through<'a>,
    slice: u64,
}

/// One slice's `C (+)= A · B`, `B` read out of the TRF. `f32` operands whose bytes lie as `f32` rows are used in
/// place (no copy); others are gathered and widened.
fn matmul_slice(
    mm: &Matmul,
    a: OperandA<'_>,
    dm: &Bytes,
    trf: &Bytes,
    acc: &mut Bytes,
    cfg: &NpuConfig,
) -> Result<(), String> {
    let (m, k, n) = (mm.m as usize, mm.k as usize, mm.n as usize);
    let size = mm.from.bytes() as usize;
    // Bᵀ row-major [n][k]: its rows are B's columns, each contiguous in its lane.
    let column = |j: usize| trf.read(mm.b_offset(0, j as u64, cfg) as usize, k * size);
    if mm.from != ElemType::I8 {
        let mut bt: Vec<f32> = Vec::with_capacity(k * n);
        for j in 0..n {
            let raw = column(j).map_err(unwritten(Space::Trf, a.slice))?;
            match (mm.from, bytemuck::try_cast_slice::<u8, f32>(raw)) {
                (ElemType::F32, Ok(floats)) => bt.extend_from_slice(floats),
                (t, _) => bt.extend(widen(t, raw)),
            }
        }
        let (rows, strides) = float_a(mm, a, dm)?;
        return float_matmul(mm, (&rows, strides), (&bt, (1, k as isize)), acc, a.slice);
    }
    let mut bt = Vec::with_capacity(k * n);
    for j in 0..n {
        bt.extend_from_slice(column(j).map_err(unwritten(Space::Trf, a.slice))?);
    }
    let bytes = match a.through.read(a.site, &mm.a.pattern) {
        Some(bytes) => bytes,
        None => gather(dm, &mm.a.pattern).map_err(unwritten(Space::Dm, a.slice))?,
    };
    let c = accumulator(mm, acc, a.slice)?;
    scatter(acc, &mm.c.pattern, &word_bytes(&integer_matmul(m, k, n, &bytes, &bt, c)));
    Ok(())
}

/// The elements from one row of a matrix to the next, and from one column to the next.
type Strides = (usize, usize);

/// `A` as `f32`s and the strides of its rows and columns: in place where its bytes lie as `f32` rows (in HBM behind
/// a forward, or in one run of data memory), else gathered (in the order of [`a_order`]) and widened.
fn float_a<'a>(mm: &Matmul, a: OperandA<'a>, dm: &'a Bytes) -> Result<(Cow<'a, [f32]>, Strides), String> {
    let (m, k) = (mm.m as usize, mm.k as usize);
    if mm.from == ElemType::F32 {
        if let Some((raw, stride)) = a.through.rows(a.site, &mm.a.pattern, m, k * 4) {
            let floats = bytemuck::try_cast_slice(&raw[..(m - 1) * stride + k * 4]).ok().filter(|_| stride % 4 == 0);
            if let Some(floats) = floats {
                return Ok((Cow::Borrowed(floats), (stride / 4, 1)));
            }
        }
    }
    if let Some(bytes) = a.through.read(a.site, &mm.a.pattern) {
        return Ok((Cow::Owned(widen(mm.from, &bytes)), (k, 1)));
    }
    if let Some(at) = contiguous_start(&mm.a.pattern).filter(|_| mm.from == ElemType::F32) {
        let raw = dm.read(at, m * k * 4).map_err(unwritten(Space::Dm, a.slice))?;
        if let Ok(floats) = bytemuck::try_cast_slice(raw) {
            return Ok((Cow::Borrowed(floats), (k, 1)));
        }
    }
    let (pattern, strides) = a_order(&mm.a.pattern, m, k, mm.from.bytes() as usize);
    let rows = match mm.from {
        ElemType::F32 => {
            let mut floats = vec![0f32; m * k];
            gather_into(dm, &pattern, bytemuck::cast_slice_mut(&mut floats)).map_err(unwritten(Space::Dm, a.slice))?;
            floats
        }
        t => widen(t, &gather(dm, &pattern).map_err(unwritten(Space::Dm, a.slice))?),
    };
    Ok((Cow::Owned(rows), strides))
}

/// The order to gather `A` (`m` rows of `k` elements of `size` bytes, one element per packet of `p`) in, and the
/// strides of its rows and columns there: as `p` reads it, or column by column when that moves longer runs (an image
/// tile read channel by channel, whose pixels lie next to each other).
fn a_order(p: &AccessPattern, m: usize, k: usize, size: usize) -> (AccessPattern, Strides) {
    let as_read = (p.clone(), (k, 1));
    if p.packet as usize != size {
        return as_read;
    }
    // The innermost loops count the columns.
    let (mut split, mut columns) = (p.loops.len(), 1usize);
    while split > 0 && columns < k {
        split -= 1;
        columns = columns.saturating_mul(p.loops[split].count as usize);
    }
    if columns != k {
        return as_read;
    }
    let loops: Vec<_> = p.loops[split..].iter().chain(&p.loops[..split]).copied().collect();
    let by_column = AccessPattern { base: p.base, loops, packet: p.packet };
    if by_column.coalesced().packet > p.coalesced().packet {
        (by_column, (1, m))
    } else {
        as_read
    }
}

/// One slice's float `C (+)= A · B`: `A` and `B` as `f32` with the strides of their rows and columns. `C` in one
/// run of bytes is used in place.
fn float_matmul(
    mm: &Matmul,
    (a, a_strides): (&[f32], Strides),
    (b, b_strides): (&[f32], (isize, isize)),
    acc: &mut Bytes,
    slice: u64,
) -> Result<(), String> {
    let (m, k, n) = (mm.m as usize, mm.k as usize, mm.n as usize);
    if let Some(at) = contiguous_start(&mm.c.pattern) {
        if mm.accumulate {
            acc.read(at, m * n * 4).map_err(unwritten(Space::Acc, slice))?;
        }
        if let Ok(c) = bytemuck::try_cast_slice_mut::<u8, f32>(acc.write_in_place(at, m * n * 4)) {
            f32::gemm_strided(m, k, n, a, a_strides, b, b_strides, c, mm.accumulate);
            return Ok(());
        }
    }
    let mut c: Vec<f32> = accumulator(mm, acc, slice)?.into_iter().map(f32::from_bits).collect();
    f32::gemm_strided(m, k, n, a, a_strides, b, b_strides, &mut c, mm.accumulate);
    scatter(acc, &mm.c.pattern, &word_bytes(&c.into_iter().map(f32::to_bits).collect::<Vec<_>>()));
    Ok(())
}

/// `C`'s elements before the matmul: read when it accumulates, zeros when it overwrites.
fn accumulator(mm: &Matmul, acc: &Bytes, slice: u64) -> Result<Vec<u32>, String> {
    if mm.accumulate {
        Ok(words(&gather(acc, &mm.c.pattern).map_err(unwritten(Space::Acc, slice))?))
    } else {
        Ok(vec![0; (mm.m * mm.n) as usize])
    }
}

/// Float elements of `t` as `f32` (exact).
fn widen(t: ElemType, bytes: &[u8]) -> Vec<f32> {
    let half = |e: &[u8]| u16::from_le_bytes([e[0], e[1]]);
    match t {
        ElemType::Bf16 => bytes.chunks_exact(2).map(|e| bf16::from_bits(half(e)).to_f32()).collect(),
        ElemType::F16 => bytes.chunks_exact(2).map(|e| f16::from_bits(half(e)).to_f32()).collect(),
        _ => bytes.chunks_exact(4).map(|e| f32::from_le_bytes([e[0], e[1], e[2], e[3]])).collect(),
    }
}

/// `c += a · b` on `i8` elements in wrapping `i32`, `k` ascending, `b` given as its transpose `bt[n][k]`.
fn integer_matmul(m: usize, k: usize, n: usize, a: &[u8], bt: &[u8], mut c: Vec<u32>) -> Vec<u32> {
    for i in 0..m {
        for j in 0..n {
            let mut sum = c[i * n + j] as i32;
            for p in 0..k {
                sum = sum.wrapping_add(a[i * k + p] as i8 as i32 * bt[j * k + p] as i8 as i32);
            }
            c[i * n + j] = sum as u32;
        }
    }
    c
}
