//! What `npu.matmul` does on each slice: `C (+)= A · B` on the crate's GEMM, the operands used in place wherever
//! their bytes lie as `f32` at fixed strides (`A` in data memory or in HBM behind a DMA's forward, `B` through the
//! load that filled the TRF), gathered and widened otherwise; `i8` in wrapping `i32`.

use super::forward::Through;
use super::memory::Bytes;
use super::shared_a::{run_groups, Group};
use super::stacked::{run_stacked, Stack};
use super::state::{contiguous_start, gather, gather_into, scatter, unwritten, word_bytes, words, Memories};
use super::trf_forward::{b_operand, copied_from_hbm, copy_out, BView, Copied};
use crate::array::gemm::Gemm;
use crate::dialects::npu::access::AccessPattern;
use crate::dialects::npu::ops::instruction::Site;
use crate::dialects::npu::ops::matmul::Matmul;
use crate::dialects::npu::ops::onchip::Space;
use crate::machine::{ElemType, NpuConfig};
use foldhash::HashSet;
use half::{bf16, f16};
use std::borrow::Cow;

/// The matmul on every slice of its range, in parallel; `B` read through the load that filled the TRF when `view`
/// says where it lies ([`super::trf_forward`]), and then the `stacks` of slices run as one product
/// ([`super::stacked`]), as do the `groups` that read `A` in fills of one content ([`super::shared_a`]).
pub fn matmul(
    mm: &Matmul,
    mem: &mut Memories,
    cfg: &NpuConfig,
    view: Option<&BView>,
    (stacks, groups): (Vec<Stack>, &[Group]),
) -> Result<(), String> {
    let mut alone = match view {
        Some(_) => run_stacked(mm, mem, stacks),
        None => (mm.slices.first..mm.slices.end).collect(),
    };
    let grouped: HashSet<u64> = groups.iter().flat_map(|g| g.slices.iter().copied()).collect();
    alone.retain(|s| !grouped.contains(s));
    let through = Through { hbm: &mem.hbm, forwards: &mem.forwards };
    let n = mm.n as usize;
    let mut copies = match view {
        Some(v) => copied_from_hbm(v, n, alone.iter().map(|&s| mm.slices.site(Space::Dm, s)), through),
        None => Copied::default(),
    };
    // The groups found where their slices' `B`s lie already.
    copy_out(&mut copies, groups.iter().flat_map(|g| g.bs.iter().map(|(b, v)| (*b, v))), n, &mem.hbm);
    if !groups.is_empty() {
        run_groups(mm, mem, groups, &copies);
    }
    let work = mm.m * mm.k * mm.n;
    mem.per_slice_of(&mm.slices, &alone, (&[Space::Dm, Space::Acc, Space::Trf], work), |one| {
        let a = OperandA { site: one.site(Space::Dm), through: one.through, slice: one.slice };
        let [Some(dm), Some(acc), Some(trf), _] = &mut one.spaces else { unreachable!("the spaces a matmul names") };
        match view {
            Some(v) => {
                let (b, b_strides) = b_operand(v, mm.n as usize, a.site, dm, a.through, &copies);
                float_product(mm, a, dm, (&b, b_strides), acc)
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
        return float_product(mm, a, dm, (&bt, (1, k as isize)), acc);
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

/// One slice's float `C (+)= A · B`, `B` given as `f32` with the strides of its rows and columns, `A` as [`float_a`]
/// finds it.
fn float_product(
    mm: &Matmul,
    a: OperandA<'_>,
    dm: &Bytes,
    b: (&[f32], (isize, isize)),
    acc: &mut Bytes,
) -> Result<(), String> {
    let (rows, strides) = float_a(mm, a, dm)?;
    float_matmul(mm, (&rows, strides), b, acc, a.slice)
}

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
pub(super) fn a_order(p: &AccessPattern, m: usize, k: usize, size: usize) -> (AccessPattern, Strides) {
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
