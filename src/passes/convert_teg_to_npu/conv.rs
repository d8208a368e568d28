//! `teg.conv2d` on the tensor unit, as an implicit GEMM. Per image, the result is a matrix of pixels by output
//! channels: `y[(oh, ow), o] = Σ_(kh, kw) Σ_c x[c, oh·s − p + kh·d, ow·s − p + kw·d] · k[o, c, kh, kw]`.
//!
//! A tile is a block of pixels (output rows × a run of a padded row's columns) × output channels (a multiple of
//! the TRF lanes). Per chunk of input channels, two boxes come into data memory by DMA: the kernels' and the
//! input's window (every row and column the tile's windows touch, zero where they fall into the padding: the box
//! is zeroed first when the input does not cover it). Then per tap, the tap's kernels go into the TRF (output
//! channel `j`'s input channels in lane `j mod lanes`) and a matmul adds the window's pixels (read with the
//! strides and dilations) times them into the accumulator: the kernels stay while every pixel of the block passes.
//! After the last chunk the tile is moved into data memory, transposed into output channels by pixels (in 2 × 4
//! tiles, one flit each), which is the result's box, and written there by DMA. In bf16 the tensor unit multiplies
//! bf16 into f32 and the transposed tile is cast to bf16 before its DMA; in i8 it multiplies into i32 and the
//! result is each i32's low byte (TEG's wrapping i8), taken by a move reading one byte of every four.
//!
//! The window's columns start on an aligned element, so its rows are whole aligned packets; they end at the
//! input's row rounded up to that alignment. When padding makes windows read past the row's end and the rounding
//! reads some of its padding, that padding is zeroed first in HBM (a source's is zero already). Output channels
//! past the last are computed from zeroed kernels and never written out.

use super::buffers::{Role, Tensor};
use super::contraction::accumulated;
use super::elementwise::narrow;
use super::tiles::runs;
use super::transfer::{column_step, dm_box, round_up, row_unit, rows_dma, DmBox};
use super::views::pad_rows;
use super::{chip_slices, lower_op, Lowering};
use crate::array::DType;
use crate::dialects::npu::access::AccessPattern;
use crate::dialects::npu::dma::Dma;
use crate::dialects::npu::ops::instruction::Instruction;
use crate::dialects::npu::ops::matmul::Matmul;
use crate::dialects::npu::ops::memset::Memset;
use crate::dialects::npu::ops::onchip::{Operand, Slices, Space};
use crate::dialects::npu::ops::stream::{Kind, Requant, Stream};
use crate::dialects::teg::ops::{decode, Conv2d, OpKind};
use crate::dialects::teg::tensor_type::as_tensor;
use crate::ir::conversion::{ConversionPattern, ConversionRewriter, OpAdaptor};
use crate::ir::rewrite::Rewriter;
use crate::ir::{Context, OpId};
use crate::machine::{ElemType, NpuConfig};
use std::cell::RefCell;

/// Pixels of a padded row a tile starts from.
const MAX_TILE_COLUMNS: u64 = 128;

/// Why the convolution `op` cannot be lowered, if it cannot.
pub fn check(ctx: &Context, op: OpId) -> Result<(), String> {
    let dtypes: Vec<Option<DType>> = ctx
        .body
        .operands(op)
        .chain(ctx.body.results(op))
        .map(|v| as_tensor(ctx, ctx.body.value_type(v)).map(|t| t.dtype))
        .collect();
    match dtypes[..] {
        [Some(DType::F32 | DType::BF16 | DType::I8), ..] if dtypes.iter().all(|t| *t == dtypes[0]) => Ok(()),
        _ => Err("'teg.conv2d' is lowered on f32, bf16 and i8".into()),
    }
}

/// The pattern lowering convolutions.
pub struct Convolutions<'s>(pub &'s RefCell<Lowering>);

impl ConversionPattern for Convolutions<'_> {
    fn name(&self) -> &'static str {
        "Convolutions"
    }

    fn root(&self) -> Option<&'static str> {
        Some("teg.conv2d")
    }

    fn match_and_rewrite(&self, op: OpId, _: &OpAdaptor, rw: &mut ConversionRewriter<'_, '_>) -> bool {
        let Ok(OpKind::Conv2d(conv)) = decode(rw.ir(), op) else { return false };
        lower_op(self.0, op, rw, |l, rw, operands, y| lower(l, rw, &conv, &operands[0], &operands[1], y))
    }
}

/// The convolution's sizes.
#[derive(Clone, Debug)]
struct Geometry {
    images: u64,
    channels: u64,
    height: u64,
    width: u64,
    out_channels: u64,
    taps: [u64; 2],
    out_rows: u64,
    /// The result's padded row: the pixels a row of tiles computes.
    out_row: u64,
    strides: [u64; 2],
    dilations: [u64; 2],
    padding: [i64; 2],
    /// The TRF's lanes.
    lanes: u64,
    /// Elements a DM row of the input rounds up to.
    unit: u64,
    /// Elements a DM row of the kernels rounds up to (their HBM row, when it is short).
    kernel_unit: u64,
    /// The input's and kernels' element type, and its bytes.
    elem: ElemType,
    /// What the accumulator holds: i32 for i8, f32 for floats.
    acc: ElemType,
    size: u64,
}

impl Geometry {
    fn of(conv: &Conv2d, x: &Tensor, k: &Tensor, y: &Tensor, cfg: &NpuConfig) -> Geometry {
        let e = |t: &Tensor, i: usize| t.dims[i].1;
        Geometry {
            images: e(x, 0),
            channels: e(x, 1),
            height: e(x, 2),
            width: e(x, 3),
            out_channels: e(k, 0),
            taps: [e(k, 2), e(k, 3)],
            out_rows: e(y, 2),
            out_row: y.row,
            strides: conv.strides.map(|s| s as u64),
            dilations: conv.dilations.map(|d| d as u64),
            padding: conv.padding,
            lanes: cfg.trf_lanes.max(1),
            unit: row_unit(x.elem, cfg),
            kernel_unit: cfg.dm_write_align,
            elem: x.elem,
            acc: accumulated(x.elem),
            size: x.elem.bytes(),
        }
    }

    /// Input rows a block of `rows` output rows reads.
    fn window_rows(&self, rows: u64) -> u64 {
        (rows - 1) * self.strides[0] + (self.taps[0] - 1) * self.dilations[0] + 1
    }

    /// Input columns (a DM row, aligned) a run of `cols` output columns reads, with room to align its start.
    fn window_cols(&self, cols: u64) -> u64 {
        round_up(self.unit - 1 + (cols - 1) * self.strides[1] + (self.taps[1] - 1) * self.dilations[1] + 1, self.unit)
    }

    /// Bytes of a row of taps in DM: as in HBM, so that whole kernels come in as long packets.
    fn kernel_row(&self) -> u64 {
        round_up(self.taps[1], self.kernel_unit) * self.size
    }

    /// Bytes of the kernels' box for `b` in DM.
    fn kernel_bytes(&self, b: &Block) -> u64 {
        b.out * b.chans * self.taps[0] * self.kernel_row()
    }

    /// Bytes of the input window for `b` in DM.
    fn window_bytes(&self, b: &Block) -> u64 {
        b.chans * self.window_rows(b.rows) * self.window_cols(b.cols) * self.size
    }

    /// Whether block `b`'s kernels for every tap fit a TRF lane at once: then one TRF load and one matmul over
    /// `k` = input channels × taps compute a chunk (the matmul reads the window at every tap's offset), instead of
    /// one of each per tap.
    fn fused(&self, b: &Block, cfg: &NpuConfig) -> bool {
        let taps = self.taps[0] * self.taps[1];
        b.out.div_ceil(self.lanes) * b.chans * taps * self.size <= cfg.trf_lane_bytes
    }

    /// How many tiles of `b` there are.
    fn tiles(&self, b: &Block) -> u64 {
        let along = |e: u64, t: u64| e.div_ceil(t);
        self.images * along(self.out_channels, b.out) * along(self.out_rows, b.rows) * along(self.out_row, b.cols)
    }
}

/// A tile's sizes: output channels (a multiple of the TRF lanes), output rows and columns, and the chunk of
/// input channels.
#[derive(Copy, Clone, Debug)]
struct Block {
    out: u64,
    rows: u64,
    cols: u64,
    chans: u64,
}

/// The transpose's tile: 2 pixels × 4 output channels of 4-byte elements (one 32-byte flit).
const TRANSPOSE_TILE: (u64, u64) = (2, 4);

/// Whether block `b` fits the accumulator, a TRF lane and a third of data memory for its inputs and one for
/// its output (moved there in f32, then transposed, then cast to the input's type when that is not f32).
fn fits(g: &Geometry, b: &Block, cfg: &NpuConfig) -> bool {
    let tile = b.out * b.rows * b.cols * 4;
    let cast = if g.elem == g.acc { 0 } else { tile / 4 * g.size };
    let third = cfg.dm_slice_bytes / 3 / 8 * 8;
    let inputs = round_up(g.kernel_bytes(b), 8) + g.window_bytes(b);
    tile <= cfg.acc_slice_bytes
        && 2 * tile + cast <= third
        && b.out.div_ceil(cfg.trf_lanes.max(1)) * b.chans * g.size <= cfg.trf_lane_bytes
        && inputs <= third
}

/// The block of least estimated time among those that fit: output channels, rows, input channels and columns
/// each halved from their whole extents (columns from [`MAX_TILE_COLUMNS`]; output channels in multiples of the TRF
/// lanes, columns in multiples of the lanes and of the DM write alignment).
fn block(g: &Geometry, cfg: &NpuConfig) -> Result<Block, String> {
    let lanes = cfg.trf_lanes.max(1);
    if !g.out_row.is_multiple_of(lanes) || cfg.flit_bytes < 32 {
        return Err(format!(
            "convolutions are lowered where padded rows are a multiple of the TRF lanes ({lanes}, here {}) and a \
             flit holds 32 B (here {})",
            g.out_row, cfg.flit_bytes
        ));
    }
    let halvings = |whole: u64, unit: u64| {
        let mut v = vec![whole];
        while v[v.len() - 1] > unit {
            v.push(round_up(v[v.len() - 1].div_ceil(2), unit).min(v[v.len() - 1] - 1).max(unit));
        }
        v
    };
    let step = column_step(cfg);
    let cols = (g.out_row.min(MAX_TILE_COLUMNS) / step * step).max(step);
    let mut best: Option<(u64, Block)> = None;
    for &out in &halvings(round_up(g.out_channels, lanes), lanes) {
        for &rows in &halvings(g.out_rows, 1) {
            for &chans in &halvings(g.channels, 1) {
                for &cols in &halvings(cols, step) {
                    let b = Block { out, rows, cols, chans };
                    if fits(g, &b, cfg) && best.as_ref().is_none_or(|(t, _)| estimate(g, &b, cfg) < *t) {
                        best = Some((estimate(g, &b, cfg), b));
                    }
                }
            }
        }
    }
    best.map(|(_, b)| b).ok_or_else(|| {
        format!(
            "no convolution tile fits: {} B of accumulator, {} B per TRF lane, {} B of data memory per slice",
            cfg.acc_slice_bytes, cfg.trf_lane_bytes, cfg.dm_slice_bytes
        )
    })
}

/// Estimated cycles of the convolution in blocks `b`. Per wave of tiles (on all the chip's slices, each cluster's
/// instructions on one of its two compute queues) and chunk of input channels, the spread DMAs bringing the boxes
/// in (each kernel box and window read once, the units shared by the engines) and the compute (per tap, a TRF load
/// and a matmul); a step's DMAs overlap the previous step's compute, so the steps take the first's DMAs, the
/// longer of the two for each next one, and the last's compute; each wave then writes its tiles out.
fn estimate(g: &Geometry, b: &Block, cfg: &NpuConfig) -> u64 {
    let tiles = g.tiles(b);
    let (waves, per_wave) = (tiles.div_ceil(chip_slices(cfg)), tiles.min(chip_slices(cfg)));
    let clusters = per_wave.div_ceil(cfg.slices_per_cluster.max(1));
    let per_queue = clusters.div_ceil(2);
    let (engines, unit) = (cfg.dma_engines.max(1), cfg.dma_unit_bytes.max(1));
    let out_blocks = g.out_channels.div_ceil(b.out).min(per_wave);
    let pixel_blocks = per_wave.div_ceil(out_blocks);
    let kernels = clusters * out_blocks * (g.kernel_bytes(b).div_ceil(unit) + b.out * b.chans);
    let windows = pixel_blocks * (g.window_bytes(b).div_ceil(unit) + b.chans * g.window_rows(b.rows));
    let dma = 2 * cfg.dma_startup_cycles + (kernels + windows).div_ceil(engines);
    let pixels = b.rows * b.cols;
    let taps = g.taps[0] * g.taps[1];
    let (passes, k) = if g.fused(b, cfg) { (1, b.chans * taps) } else { (taps, b.chans) };
    let pass = cfg.flit_cycles(b.out * k * g.size) + cfg.matmul_cycles(pixels, k, b.out, g.elem);
    let compute = per_queue * passes * pass;
    let tile = b.out * pixels * 4;
    let written = (tile * per_wave).div_ceil(unit).div_ceil(engines);
    let out = per_queue * 2 * cfg.flit_cycles(tile) + cfg.dma_startup_cycles + written;
    let steps = waves * g.channels.div_ceil(b.chans);
    dma + (steps - 1) * dma.max(compute) + compute + waves * out
}

/// One tile: its image, and its first index and extent of output channels, rows and columns.
#[derive(Clone, Debug)]
struct Tile {
    image: u64,
    out: (u64, u64),
    rows: (u64, u64),
    cols: (u64, u64),
}

fn tiles(g: &Geometry, b: &Block) -> Vec<Tile> {
    let chunks = |total: u64, step: u64| (0..total).step_by(step as usize).map(move |a| (a, step.min(total - a)));
    let mut out = Vec::new();
    for image in 0..g.images {
        for o in chunks(g.out_channels, b.out) {
            for r in chunks(g.out_rows, b.rows) {
                for c in chunks(g.out_row, b.cols) {
                    out.push(Tile { image, out: o, rows: r, cols: c });
                }
            }
        }
    }
    out
}

/// One tile's chunk of input channels in data memory: the matmul's sizes, and where the kernels' and the
/// window's boxes are.
#[derive(Clone, Debug, PartialEq)]
struct Step {
    /// Pixels, input channels, output channels (rounded up to the TRF lanes).
    m: u64,
    k: u64,
    n: u64,
    /// Output rows of the pixel block (its columns are `m / rows`).
    rows: u64,
    /// The kernels' box: its base and its byte strides of output channels, input channels and rows.
    kernels: (u64, [i64; 3]),
    /// The window: its base, its byte strides of channels and rows, and the elements before the first pixel's
    /// first column.
    window: (u64, [i64; 2], u64),
}

/// Writes `y = conv(x, k)`.
fn lower(
    l: &mut Lowering,
    rw: &mut Rewriter<'_>,
    conv: &Conv2d,
    x: &Tensor,
    k: &Tensor,
    y: &Tensor,
) -> Result<(), String> {
    let cfg = l.cfg.clone();
    let g = Geometry::of(conv, x, k, y, &cfg);
    let b = block(&g, &cfg)?;
    let tiles = tiles(&g, &b);
    let chunks: Vec<(u64, u64)> =
        (0..g.channels).step_by(b.chans as usize).map(|c0| (c0, b.chans.min(g.channels - c0))).collect();
    let taps = g.taps[0] * g.taps[1];
    let per_tile = (chunks.len() as u64).saturating_mul(4 + 2 * taps).saturating_add(3);
    l.kernel.reserve((tiles.len() as u64).saturating_mul(per_tile).saturating_add(1))?;
    let reads_row_padding = g.padding[1] > 0 && round_up(g.width, g.unit) > g.width;
    let root = l.buffers.args[x.region as usize].tensor.clone();
    if reads_row_padding {
        match &l.buffers.args[x.region as usize].role {
            Role::Source(_) if root.strided().is_own(&root.extents(), &cfg) => {}
            Role::Source(name) => {
                return Err(format!(
                    "the convolution reads its input's row padding as zeros, which source '{name}' in its given \
                     layout does not promise: run resolve-layouts, which copies it into rows"
                ))
            }
            _ => pad_rows(l, rw, &root)?,
        }
    }
    let third = cfg.dm_slice_bytes / 3 / 8 * 8;
    for wave in tiles.chunks(chip_slices(&cfg) as usize) {
        for (i, &chunk) in chunks.iter().enumerate() {
            let base = (l.waves % 2) * third;
            l.waves += 1;
            let (steps, mut fills): (Vec<Step>, Vec<_>) = wave.iter().map(|t| step(&g, t, chunk, base)).unzip();
            // A half of data memory zeroed for this wave's tiles two chunks ago (of as many channels) still is:
            // the DMAs write the same bytes of it.
            if i >= 2 && chunks[i - 2].1 == chunk.1 {
                fills.iter_mut().for_each(Vec::clear);
            }
            for (first, end) in runs(&fills) {
                for slices in l.slices_in(first, end) {
                    for &(at, bytes) in &fills[first as usize] {
                        let dst = Operand { space: Space::Dm, pattern: AccessPattern::new(at, &[], bytes as u32) };
                        l.prepare(rw, &Instruction::Memset(Memset { slices, dst, dtype: x.elem, value: 0.0 }))?;
                    }
                }
            }
            let (mut kernels, mut windows) = (Vec::new(), Vec::new());
            for (slice, (tile, s)) in wave.iter().zip(&steps).enumerate() {
                let (kernel, window) = bring_in(l, &g, x, k, tile, chunk, s, slice as u64);
                kernels.push(kernel);
                windows.extend(window);
            }
            l.dmas(rw, &kernels, k.elem)?;
            l.dmas(rw, &windows, x.elem)?;
            let passes: Vec<Option<[u64; 2]>> = match g.fused(&b, &cfg) {
                true => vec![None],
                false => (0..taps).map(|t| Some([t / g.taps[1], t % g.taps[1]])).collect(),
            };
            for (first, end) in runs(&steps) {
                for slices in l.slices_in(first, end) {
                    for &tap in &passes {
                        let s = &steps[first as usize];
                        l.compute(rw, &load_trf(&g, slices, s, tap, &cfg))?;
                        l.compute(rw, &matmul(&g, slices, s, tap, i > 0 || tap.is_some_and(|t| t != [0, 0])))?;
                    }
                }
            }
        }
        finish(l, rw, wave, &g, y, 2 * third, &cfg)?;
    }
    Ok(())
}

/// Where `tile`'s chunk `(c0, cc)` of input channels goes in DM from `base` on, and the bytes to zero before
/// the boxes come in: the kernels of output channels past the last, and the window where the input does not
/// cover it.
fn step(g: &Geometry, t: &Tile, (_, cc): (u64, u64), base: u64) -> (Step, Vec<(u64, u64)>) {
    let size = g.size as i64;
    let kw = g.kernel_row() as i64;
    let out = round_up(t.out.1, g.lanes);
    let o_stride = cc as i64 * g.taps[0] as i64 * kw;
    let kernels = (base, [o_stride, g.taps[0] as i64 * kw, kw]);
    let at = base + round_up(out * o_stride as u64, 8);
    let mut fills = Vec::new();
    if out > t.out.1 {
        fills.push((base + t.out.1 * o_stride as u64, (out - t.out.1) * o_stride as u64));
    }
    let (rows, cols) = (g.window_rows(t.rows.1), g.window_cols(t.cols.1));
    let (row0, col0) = window_origin(g, t);
    let aligned = col0.div_euclid(g.unit as i64) * g.unit as i64;
    let row_bytes = cols as i64 * size;
    let covered = row0 >= 0
        && row0 + rows as i64 <= g.height as i64
        && aligned >= 0
        && aligned + cols as i64 <= round_up(g.width, g.unit) as i64;
    if !covered {
        fills.push((at, cc * rows * cols * g.size));
    }
    let step = Step {
        m: t.rows.1 * t.cols.1,
        k: cc,
        n: out,
        rows: t.rows.1,
        kernels,
        window: (at, [rows as i64 * row_bytes, row_bytes], (col0 - aligned) as u64),
    };
    (step, fills)
}

/// The padded input's row and column the tile's first window starts at (negative in the padding).
fn window_origin(g: &Geometry, t: &Tile) -> (i64, i64) {
    let origin = |i: usize, first: u64| first as i64 * g.strides[i] as i64 - g.padding[i];
    (origin(0, t.rows.0), origin(1, t.cols.0))
}

/// The DMAs bringing the kernels' box and the part of the window the input covers (if any) into slice `slice`.
#[allow(clippy::too_many_arguments)]
fn bring_in(
    l: &Lowering,
    g: &Geometry,
    x: &Tensor,
    k: &Tensor,
    t: &Tile,
    (c0, cc): (u64, u64),
    s: &Step,
    slice: u64,
) -> (Dma, Option<Dma>) {
    let cfg = &l.cfg;
    let memory = l.dm(slice);
    let size = g.size as i64;
    let (base, [o, c, r]) = s.kernels;
    let kernels = DmBox { base, strides: vec![o, c, r, size], bytes: 0 };
    let ext = [t.out.1, cc, g.taps[0], g.taps[1]];
    let kernels = rows_dma(k, &[t.out.0, c0, 0, 0], &ext, &kernels, memory, true, g.kernel_unit, cfg);
    let (at, [cs, rs], _) = s.window;
    let (row0, col0) = window_origin(g, t);
    let col0 = col0.div_euclid(g.unit as i64) * g.unit as i64;
    let (rows, cols) = (g.window_rows(t.rows.1) as i64, g.window_cols(t.cols.1) as i64);
    let (r0, r1) = (row0.max(0), (row0 + rows).min(g.height as i64));
    let (q0, q1) = (col0.max(0), (col0 + cols).min(round_up(g.width, g.unit) as i64));
    if r0 >= r1 || q0 >= q1 {
        return (kernels, None);
    }
    let offset = (r0 - row0) * rs + (q0 - col0) * size;
    let window = DmBox { base: at + offset as u64, strides: vec![0, cs, rs, size], bytes: 0 };
    let start = [t.image, c0, r0 as u64, q0 as u64];
    let ext = [1, cc, (r1 - r0) as u64, (q1 - q0) as u64];
    (kernels, Some(rows_dma(x, &start, &ext, &window, memory, true, g.unit, cfg)))
}

/// Tap `tap`'s kernels into the TRF: output channel `j` (`lanes · group + lane`) in lane `lane` from byte
/// `group · k · size`, its `k` input channels in order; every tap's (`tap` none: each input channel's taps row by
/// row after it, `k` times the taps).
fn load_trf(g: &Geometry, slices: Slices, s: &Step, tap: Option<[u64; 2]>, cfg: &NpuConfig) -> Instruction {
    let (lanes, size) = (cfg.trf_lanes, g.size as i64);
    let (base, [o, c, r]) = s.kernels;
    let [ty, tx] = tap.unwrap_or([0, 0]);
    let first = base as i64 + ty as i64 * r + tx as i64 * size;
    let mut loops = vec![(s.n / lanes, o * lanes as i64), (lanes, o), (s.k, c)];
    if tap.is_none() {
        loops.extend([(g.taps[0], r), (g.taps[1], size)]);
    }
    let k = if tap.is_none() { s.k * g.taps[0] * g.taps[1] } else { s.k };
    let src = AccessPattern::new(first as u64, &counted(&loops), g.size as u32);
    let dst = AccessPattern::new(
        0,
        &counted(&[(s.n / lanes, (k * g.size) as i64), (lanes, cfg.trf_lane_bytes as i64)]),
        (k * g.size) as u32,
    );
    let src = Operand { space: Space::Dm, pattern: src };
    Instruction::Stream(Stream { from: g.elem, to: g.elem, ..stream(Kind::LoadTrf, slices, src, Space::Trf, dst) })
}

/// A streaming instruction of f32 elements from `src` into `dst` of space `to` (other types by struct update).
fn stream(kind: Kind, slices: Slices, src: Operand, to: Space, dst: AccessPattern) -> Stream {
    Stream {
        kind,
        slices,
        src,
        dst: Operand { space: to, pattern: dst },
        from: ElemType::F32,
        to: ElemType::F32,
        relu: false,
        requant: Requant { scale: 1, shift: 0 },
        tile: if kind == Kind::Transpose { TRANSPOSE_TILE } else { (1, 1) },
    }
}

/// The loops of more than one iteration, as an access pattern takes them.
fn counted(loops: &[(u64, i64)]) -> Vec<(u32, i64)> {
    loops.iter().filter(|l| l.0 > 1).map(|&(c, s)| (c as u32, s)).collect()
}

/// The window's pixels at tap `tap` (pixels × input channels) times the kernels in the TRF, into the
/// accumulator; at every tap (`tap` none: pixels × input channels × taps, the taps row by row).
fn matmul(g: &Geometry, slices: Slices, s: &Step, tap: Option<[u64; 2]>, accumulate: bool) -> Instruction {
    let size = g.size as i64;
    let (at, [cs, rs], skip) = s.window;
    let [ty, tx] = tap.unwrap_or([0, 0]);
    let first = at as i64 + (ty * g.dilations[0]) as i64 * rs + (skip + tx * g.dilations[1]) as i64 * size;
    let (sr, sc) = (g.strides[0] as i64 * rs, g.strides[1] as i64 * size);
    let mut loops = vec![(s.rows, sr), (s.m / s.rows, sc), (s.k, cs)];
    if tap.is_none() {
        loops.extend([(g.taps[0], g.dilations[0] as i64 * rs), (g.taps[1], g.dilations[1] as i64 * size)]);
    }
    let k = if tap.is_none() { s.k * g.taps[0] * g.taps[1] } else { s.k };
    let a = AccessPattern::new(first as u64, &counted(&loops), g.size as u32);
    Instruction::Matmul(Matmul {
        slices,
        m: s.m,
        k,
        n: s.n,
        a: Operand { space: Space::Dm, pattern: a },
        b_base: 0,
        c: Operand { space: Space::Acc, pattern: AccessPattern::new(0, &[], (s.m * s.n * 4) as u32) },
        accumulate,
        from: g.elem,
        to: g.acc,
    })
}

/// After a wave's last chunk: each tile moved from the accumulator to data memory at `out` (pixels × output
/// channels), transposed after it (output channels × pixels, the result's box row-major) and written into the
/// result.
#[allow(clippy::too_many_arguments)]
fn finish(
    l: &mut Lowering,
    rw: &mut Rewriter<'_>,
    wave: &[Tile],
    g: &Geometry,
    y: &Tensor,
    out: u64,
    cfg: &NpuConfig,
) -> Result<(), String> {
    let shapes: Vec<(u64, u64)> = wave.iter().map(|t| (t.rows.1 * t.cols.1, round_up(t.out.1, g.lanes))).collect();
    for (first, end) in runs(&shapes) {
        for slices in l.slices_in(first, end) {
            out_of_acc(l, rw, slices, shapes[first as usize], g, y, out)?;
        }
    }
    let mut results = Vec::new();
    for (slice, (t, &(p, n))) in wave.iter().zip(&shapes).enumerate() {
        let ext = [1, t.out.1, t.rows.1, t.cols.1];
        let at = if y.elem == g.acc { out + p * n * 4 } else { out + 2 * p * n * 4 };
        let dm = dm_box(y, &ext, at, cfg);
        let start = [t.image, t.out.0, t.rows.0, t.cols.0];
        results.push(super::transfer::box_dma(y, &start, &ext, &dm, l.dm(slice as u64), false, cfg));
    }
    l.dmas(rw, &results, y.elem)
}

/// A tile of `p` pixels × `n` output channels on `slices` moved from the accumulator to data memory at `out`,
/// transposed after it (and narrowed to the result's type after that, if it is not the accumulator's).
fn out_of_acc(
    l: &mut Lowering,
    rw: &mut Rewriter<'_>,
    slices: Slices,
    (p, n): (u64, u64),
    g: &Geometry,
    y: &Tensor,
    out: u64,
) -> Result<(), String> {
    let bytes = p * n * 4;
    let acc = Operand { space: Space::Acc, pattern: AccessPattern::new(0, &[], bytes as u32) };
    let moved = stream(Kind::Cast, slices, acc, Space::Dm, AccessPattern::new(out, &[], bytes as u32));
    l.compute(rw, &Instruction::Stream(Stream { from: g.acc, to: g.acc, ..moved }))?;
    let (tr, tc) = TRANSPOSE_TILE;
    let (p_, n_) = (p as i64, n as i64);
    let src = AccessPattern::new(
        out,
        &counted(&[(p / tr, tr as i64 * n_ * 4), (n / tc, tc as i64 * 4), (tr, n_ * 4)]),
        (tc * 4) as u32,
    );
    let dst = AccessPattern::new(
        out + bytes,
        &counted(&[(p / tr, tr as i64 * 4), (n / tc, tc as i64 * p_ * 4), (tc, p_ * 4)]),
        (tr * 4) as u32,
    );
    let src = Operand { space: Space::Dm, pattern: src };
    let transpose = stream(Kind::Transpose, slices, src, Space::Dm, dst);
    l.compute(rw, &Instruction::Stream(Stream { from: g.acc, to: g.acc, ..transpose }))?;
    if y.elem != g.acc {
        l.compute(rw, &narrow(slices, out + bytes, p * n, g.acc, out + 2 * bytes, y.elem))?;
    }
    Ok(())
}
