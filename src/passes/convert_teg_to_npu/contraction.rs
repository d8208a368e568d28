//! Contractions on the tensor unit, in f32, bf16 (into f32) or i8 (into i32, the result its low bytes), and
//! `teg.prod`, which sums nothing, as cells multiplied on the vector unit:
//! `teg.contract`, `teg.matmul` and `teg.linear` whose result's last dimension
//! `n` is `w`'s last; the result's other dimensions are batch dimensions (in `x`, `w` and the result: one matmul
//! per index) or rows `m` (in `x` only, flattened); the summed dimensions are in both operands. The last summed
//! one in `x`'s order is `k`, which the matmul sums; the others are walked index by index, each accumulating into
//! the same tile.
//!
//! The index space is `[summed..., batch..., m..., n, k]` (`n` padded like the result's rows, so that whole rows
//! are computed). Tiles of `batch × m × n` go to slices in waves; per tile, `k` comes in chunks that alternate between
//! two halves of data memory: `x`'s box and `w`'s box come in by DMA, `w`'s rows go into the TRF (column `j` in
//! lane `j mod 8`), and a matmul computes (first chunk) or accumulates (the others) the tile in the accumulator,
//! reading `x` in `(m, k)` order whatever its layout. A linear's bias is added there by the vector unit (broadcast
//! along `m` by stride 0); a cast moves the tile to data memory and a DMA writes it into the result. Tile sizes
//! keep the accumulator (`m · n` floats), a TRF lane (`ceil(n / 8) · k` elements) and the data memory within the
//! machine's sizes.

use super::buffers::Tensor;
use super::elementwise::{self, cast, out_of_acc};
use super::operand::{operand_box, read_pattern, Input};
use super::tiles::{runs, Tile, Tiling};
use super::transfer::{box_dma, column_step, dm_box, round_up, DmBox};
use super::{chip_slices, lower_op, Lowering};
use crate::array::DType;
use crate::dialects::npu::access::AccessPattern;
use crate::dialects::npu::dma::Dma;
use crate::dialects::npu::ops::instruction::Instruction;
use crate::dialects::npu::ops::matmul::Matmul;
use crate::dialects::npu::ops::onchip::{Operand, Slices, Space};
use crate::dialects::npu::ops::stream::{Kind, Requant, Stream};
use crate::dialects::npu::ops::vector::{Rhs, Vector};
use crate::dialects::teg::ops::{decode, Contraction, OpKind};
use crate::dialects::teg::tensor_type::{as_tensor, TensorType};
use crate::ir::conversion::{ConversionPattern, ConversionRewriter, OpAdaptor};
use crate::ir::rewrite::Rewriter;
use crate::ir::{Context, OpId};
use crate::machine::{ElemType, NpuConfig};
use std::cell::RefCell;

/// Rows are not split into tiles of fewer than this to occupy more slices (DMA startups would dominate).
const MIN_TILE_ROWS: u64 = 16;

/// The roles of a contraction's dimensions, by name.
struct Roles {
    /// Summed dimensions other than `k`.
    summed: Vec<String>,
    batch: Vec<String>,
    rows: Vec<String>,
    n: String,
    k: String,
}

/// The roles of `x · w -> r`'s dimensions, or why the lowering does not handle it.
fn roles(x: &TensorType, w: &TensorType, r: &TensorType) -> Result<Roles, String> {
    let has = |t: &TensorType, d: &str| t.position(d).is_some();
    let n = r.dims.last().map(|d| d.0.clone()).ok_or("a contraction to a scalar is not lowered yet")?;
    if w.dims.last().map(|d| &d.0) != Some(&n) || has(x, &n) {
        return Err(format!("the result's last dimension '{n}' must be w's last and not x's"));
    }
    let mut summed: Vec<String> = x.dims.iter().map(|d| d.0.clone()).filter(|d| has(w, d) && !has(r, d)).collect();
    let k = summed.pop().ok_or("a contraction that sums nothing is not lowered (it is a product)")?;
    for t in [x, w] {
        if let Some(d) = t.dims.iter().find(|d| !has(r, &d.0) && d.0 != k && !summed.contains(&d.0)) {
            return Err(format!("dimension '{}' of one operand is neither summed nor kept", d.0));
        }
    }
    let (mut batch, mut rows) = (Vec::new(), Vec::new());
    for (name, _) in &r.dims[..r.dims.len() - 1] {
        match (has(x, name), has(w, name)) {
            (true, true) => batch.push(name.clone()),
            (true, false) => rows.push(name.clone()),
            _ => return Err(format!("the result's dimension '{name}' must come from x")),
        }
    }
    Ok(Roles { summed, batch, rows, n, k })
}

/// Why the contraction `op` cannot be lowered, if it cannot.
pub fn check(ctx: &Context, op: OpId, c: &Contraction) -> Result<(), String> {
    let types: Vec<&TensorType> = ctx
        .body
        .operands(op)
        .chain(ctx.body.results(op))
        .filter_map(|v| as_tensor(ctx, ctx.body.value_type(v)))
        .collect();
    let [x, w, .., r] = types[..] else { return Err("a contraction has two operands and a result".into()) };
    if *c == Contraction::Prod {
        // A product before its sum multiplies cells broadcast by name, on the vector unit.
        return match x.dtype {
            DType::F32 | DType::BF16 | DType::I32 | DType::I8 => Ok(()),
            t => Err(format!("'teg.prod' on {t} is not lowered (f32, bf16, i32 and i8 are)")),
        };
    }
    if !matches!(x.dtype, DType::F32 | DType::BF16 | DType::I8) {
        return Err(format!(
            "'{}' on {} is not lowered yet (f32, bf16 and i8, which the tensor unit accumulates in f32 and i32)",
            ctx.op_name(op),
            x.dtype
        ));
    }
    roles(x, w, r).map(|_| ())
}

/// The pattern lowering contractions.
pub struct Contractions<'s>(pub &'s RefCell<Lowering>);

impl ConversionPattern for Contractions<'_> {
    fn name(&self) -> &'static str {
        "Contractions"
    }

    fn root(&self) -> Option<&'static str> {
        None
    }

    fn match_and_rewrite(&self, op: OpId, _: &OpAdaptor, rw: &mut ConversionRewriter<'_, '_>) -> bool {
        let Ok(OpKind::Contraction(c)) = decode(rw.ir(), op) else { return false };
        let ctx = rw.ir();
        let ty = |v| as_tensor(ctx, ctx.body.value_type(v)).expect("a tensor").clone();
        let (tx, tw) = (ty(ctx.body.operand(op, 0)), ty(ctx.body.operand(op, 1)));
        let tr = ty(ctx.body.result(op, 0));
        if c == Contraction::Prod {
            return lower_op(self.0, op, rw, |l, rw, operands, r| {
                elementwise::product(l, rw, &operands[0], &operands[1], r)
            });
        }
        lower_op(self.0, op, rw, |l, rw, operands, r| {
            let roles = roles(&tx, &tw, &tr)?;
            let bias = (c == Contraction::Linear).then(|| &operands[2]);
            lower(l, rw, &roles, &operands[0], &operands[1], bias, r)
        })
    }
}

/// Tile sizes: rows of the accumulator tile, its columns, and the summed chunk.
#[derive(Copy, Clone, Debug)]
struct Sizes {
    m: u64,
    n: u64,
    k: u64,
}

/// The largest tile sizes (columns a multiple of the TRF lanes, chunks of `k` a multiple of 8) that fit the
/// accumulator (f32), a TRF lane and a third of data memory for each of the inputs (of `size` bytes) and the
/// output (f32 before its cast, the bias too): columns first, then the chunk, then rows.
fn sizes(n_pad: u64, k_ext: u64, size: u64, cfg: &NpuConfig) -> Result<Sizes, String> {
    let lanes = cfg.trf_lanes.max(1);
    let third = cfg.dm_slice_bytes / 3 / 8 * 8;
    let rows = |n: u64, k: u64| {
        // The accumulator tile; x's box (with room to align its row start) next to w's; the output and bias.
        let inputs = (third / size).saturating_sub(k * n) / round_up(k, 8).max(1);
        // An i8 tile also takes its i32 move before the low bytes are taken: 5 bytes per element.
        let per = if size == 1 { 5 } else { 4 };
        let out = (third.saturating_sub((2 * n + 16) * 4) / per) / n;
        (cfg.acc_slice_bytes / 4 / n).min(inputs.saturating_sub(8)).min(out).min(1 << 12)
    };
    // Columns that make whole DMA units of `w`'s rows (64 f32): narrower tiles share the slices out more finely.
    let step = column_step(cfg);
    let unit = (cfg.dma_unit_bytes / size).max(step);
    let mut n = round_up(n_pad.min(128).min(unit), step);
    loop {
        let mut k = (cfg.trf_lane_bytes / size / n.div_ceil(lanes)).min(k_ext);
        if k < k_ext {
            k = k / 8 * 8;
        }
        while k > 0 {
            if rows(n, k) > 0 {
                return Ok(Sizes { m: rows(n, k), n, k });
            }
            k = if k > 8 { (k / 2).div_ceil(8) * 8 } else { 0 };
        }
        if n <= step {
            return Err(format!(
                "no matmul tile fits: {} B of accumulator, {} B per TRF lane, {} B of data memory per slice",
                cfg.acc_slice_bytes, cfg.trf_lane_bytes, cfg.dm_slice_bytes
            ));
        }
        n = round_up(n / 2, step);
    }
}

/// Writes `r = x · w (+ bias)`.
fn lower(
    l: &mut Lowering,
    rw: &mut Rewriter<'_>,
    roles: &Roles,
    x: &Tensor,
    w: &Tensor,
    bias: Option<&Tensor>,
    r: &Tensor,
) -> Result<(), String> {
    let cfg = l.cfg.clone();
    // The index space: summed..., batch..., rows..., n (padded), k.
    let names: Vec<&String> =
        roles.summed.iter().chain(&roles.batch).chain(&roles.rows).chain([&roles.n, &roles.k]).collect();
    let extent = |name: &String| {
        [x, w, r].iter().find_map(|t| t.dims.iter().find(|d| &d.0 == name).map(|d| d.1)).expect("a dimension")
    };
    let mut space: Vec<u64> = names.iter().map(|&n| extent(n)).collect();
    let (nd, kd) = (names.len() - 2, names.len() - 1);
    if !r.row.is_multiple_of(cfg.trf_lanes.max(1)) {
        return Err(format!(
            "contractions are lowered where the result's padded rows are whole groups of the TRF lanes ({}); this \
             machine pads a row of {} to {} elements (dm_write_align {})",
            cfg.trf_lanes, space[nd], r.row, cfg.dm_write_align
        ));
    }
    space[nd] = r.row;
    let input = |t: &Tensor| Input {
        tensor: t.clone(),
        map: names.iter().map(|&n| t.dims.iter().position(|d| &d.0 == n)).collect(),
    };
    let (xi, wi, ri) = (input(x), input(w), input(r));
    let bi = bias.map(input);
    let lead = roles.summed.len();
    let (sz, tiles) = plan(&space, lead, roles.batch.len(), &xi, &wi, &cfg)?;
    // Per index of the other summed dimensions and chunk of k: two DMAs, a TRF load and a matmul; then a bias DMA
    // and add, a move and a DMA.
    let (k_ext, kc) = (space[kd], sz.k);
    let count = space[..lead].iter().fold(k_ext.div_ceil(kc), |n, &e| n.saturating_mul(e));
    l.kernel.reserve((tiles.len() as u64).saturating_mul(count.saturating_mul(4).saturating_add(4)))?;
    let chunks: Vec<(Vec<u64>, u64, u64)> = odometer(&space[..lead])
        .into_iter()
        .flat_map(|s| (0..k_ext).step_by(kc as usize).map(move |k0| (s.clone(), k0, kc.min(k_ext - k0))))
        .collect();
    let third = cfg.dm_slice_bytes / 3 / 8 * 8;
    for wave in tiles.chunks(chip_slices(&cfg) as usize) {
        for (c, (at, k0, kc)) in chunks.iter().enumerate() {
            let base = (l.waves % 2) * third;
            l.waves += 1;
            let (mut steps, mut xs, mut ws) = (Vec::new(), Vec::new(), Vec::new());
            for (slice, tile) in wave.iter().enumerate() {
                let mut t = tile.clone();
                (t.start[kd], t.ext[kd]) = (*k0, *kc);
                t.start[..lead].copy_from_slice(at);
                let (step, [dx, dw]) = bring_in(l, &xi, &wi, &t, slice as u64, base);
                steps.push(step);
                xs.push(dx);
                ws.push(dw);
            }
            l.dmas(rw, &xs, x.elem)?;
            l.dmas(rw, &ws, w.elem)?;
            for (first, end) in runs(&steps) {
                for slices in l.slices_in(first, end) {
                    let step = &steps[first as usize];
                    l.compute(rw, &load_trf(slices, step, x.elem, &cfg))?;
                    l.compute(rw, &matmul(slices, step, x.elem, c > 0))?;
                }
            }
        }
        finish(l, rw, wave, &ri, bi.as_ref(), 2 * third, &cfg)?;
    }
    Ok(())
}

/// Tile sizes and tiles whose boxes of `x` and `w` (in their own layouts, which may pad other dimensions than
/// `k`) fit a third of data memory: the sizes of [`sizes`], rows, then the chunk of `k`, then columns halved
/// until they do.
fn plan(
    space: &[u64],
    lead: usize,
    batch: usize,
    x: &Input,
    w: &Input,
    cfg: &NpuConfig,
) -> Result<(Sizes, Vec<Tile>), String> {
    let (nd, kd) = (space.len() - 2, space.len() - 1);
    let third = cfg.dm_slice_bytes / 3 / 8 * 8;
    let mut sz = sizes(space[nd], space[kd], x.tensor.elem.bytes(), cfg)?;
    loop {
        let tiles = tiles(space, lead, batch, sz, chip_slices(cfg))?;
        let fits = tiles.iter().all(|t| {
            let mut t = t.clone();
            t.ext[kd] = sz.k.min(space[kd]);
            let boxed = |i: &Input| dm_box(&i.tensor, &operand_box(i, &t, cfg.dm_write_align).1, 0, cfg).bytes;
            boxed(x) + boxed(w) <= third
        });
        if fits {
            return Ok((sz, tiles));
        }
        if sz.m > 1 {
            sz.m /= 2;
        } else if sz.k > 8 {
            sz.k = (sz.k / 2).div_ceil(8) * 8;
        } else if sz.n > column_step(cfg) {
            sz.n = round_up(sz.n / 2, column_step(cfg));
        } else {
            return Err(format!("no matmul tile's operands fit {third} B of a slice's data memory"));
        }
    }
}

/// The tiles of batch × rows × n (the `lead` other summed dimensions at index 0 and `k` left whole: a tile walks
/// them): one batch index each, boxes of at most `sz.m` rows, chunks of `sz.n` columns, about as many as `slices`.
fn tiles(space: &[u64], lead: usize, batch: usize, sz: Sizes, slices: u64) -> Result<Vec<Tile>, String> {
    let (nd, kd) = (space.len() - 2, space.len() - 1);
    let space_of = &space[lead..];
    let batches: u64 = space_of[..batch].iter().product();
    let column_tiles = space[nd].div_ceil(sz.n);
    let rows = &space_of[batch..nd - lead];
    // As many tiles as slices, but none of fewer than MIN_TILE_ROWS rows.
    let most = rows.iter().product::<u64>().div_ceil(MIN_TILE_ROWS);
    let want = slices.div_ceil(batches.saturating_mul(column_tiles)).min(most).max(1);
    let row_tiles = match rows.is_empty() {
        true => vec![Tile { start: Vec::new(), ext: Vec::new() }],
        false => Tiling::choose(rows, &|e| e.iter().product(), sz.m, want, 1)?.tiles(),
    };
    let mut out = Vec::new();
    for b in 0..batches {
        let mut index = vec![0u64; batch];
        let mut rest = b;
        for d in (0..batch).rev() {
            index[d] = rest % space_of[d];
            rest /= space_of[d];
        }
        for rt in &row_tiles {
            for n0 in (0..space[nd]).step_by(sz.n as usize) {
                let start: Vec<u64> = vec![0; lead]
                    .into_iter()
                    .chain(index.iter().copied())
                    .chain(rt.start.iter().copied())
                    .chain([n0, 0])
                    .collect();
                let ext: Vec<u64> = vec![1; lead + batch]
                    .into_iter()
                    .chain(rt.ext.iter().copied())
                    .chain([sz.n.min(space[nd] - n0), space[kd]])
                    .collect();
                out.push(Tile { start, ext });
            }
        }
    }
    Ok(out)
}

/// One tile's chunk in data memory: the matmul's sizes, how it reads `x` there and where `w`'s box is.
#[derive(Clone, Debug, PartialEq)]
struct Step {
    m: u64,
    k: u64,
    n: u64,
    a: AccessPattern,
    w: DmBox,
    w_skip: u64,
    /// `w`'s DM strides of `k` and `n` (bytes).
    w_strides: (i64, i64),
}

/// Where `tile`'s boxes of `x` and `w` lie in slice `slice` (from `base` on), and the DMAs bringing them in.
fn bring_in(l: &Lowering, x: &Input, w: &Input, tile: &Tile, slice: u64, base: u64) -> (Step, [Dma; 2]) {
    let cfg = &l.cfg;
    let memory = l.dm(slice);
    let (n_dim, k_dim) = (tile.ext.len() - 2, tile.ext.len() - 1);
    let mut at = base;
    let (mut boxes, mut dmas) = (Vec::new(), Vec::new());
    for t in [x, w] {
        let (start, ext, skip) = operand_box(t, tile, cfg.dm_write_align);
        let dm = dm_box(&t.tensor, &ext, at, cfg);
        dmas.push(box_dma(&t.tensor, &start, &ext, &dm, memory, true, cfg));
        at += dm.bytes;
        boxes.push((dm, skip));
    }
    let (xdm, xskip) = &boxes[0];
    let (wdm, wskip) = boxes[1].clone();
    let order: Vec<usize> = (0..n_dim).filter(|&d| x.map[d].is_some()).chain([k_dim]).collect();
    let stride = |d: usize| w.map[d].map_or(0, |j| wdm.strides[j]);
    let step = Step {
        m: tile.ext[..n_dim].iter().product(),
        k: tile.ext[k_dim],
        n: tile.ext[n_dim],
        a: read_pattern(x, tile, &order, xdm, *xskip),
        w_strides: (stride(k_dim), stride(n_dim)),
        w: wdm,
        w_skip: wskip,
    };
    (step, dmas.try_into().expect("two DMAs"))
}

/// `w`'s box into the TRF: column `j` (`8g + l`) in lane `l` from byte `g · k · size`, its `k` elements in order.
fn load_trf(slices: Slices, s: &Step, elem: ElemType, cfg: &NpuConfig) -> Instruction {
    let (lanes, size) = (cfg.trf_lanes, elem.bytes());
    let (ks, ns) = s.w_strides;
    let groups = s.n / lanes;
    let src = AccessPattern::new(
        s.w.base + s.w_skip * size,
        &[(groups as u32, ns * lanes as i64), (lanes as u32, ns), (s.k as u32, ks)],
        size as u32,
    );
    let dst = AccessPattern::new(
        0,
        &[(groups as u32, (s.k * size) as i64), (lanes as u32, cfg.trf_lane_bytes as i64)],
        (s.k * size) as u32,
    );
    Instruction::Stream(Stream {
        kind: Kind::LoadTrf,
        slices,
        src: Operand { space: Space::Dm, pattern: src },
        dst: Operand { space: Space::Trf, pattern: dst },
        from: elem,
        to: elem,
        relu: false,
        requant: Requant { scale: 1, shift: 0 },
        tile: (1, 1),
    })
}

/// What the tensor unit accumulates `elem` products in: i32 for i8, f32 for floats.
pub fn accumulated(elem: ElemType) -> ElemType {
    elementwise::widened(elem).unwrap_or(ElemType::F32)
}

/// The tile's matmul of `elem`s into the accumulator (from byte 0).
fn matmul(slices: Slices, s: &Step, elem: ElemType, accumulate: bool) -> Instruction {
    Instruction::Matmul(Matmul {
        slices,
        m: s.m,
        k: s.k,
        n: s.n,
        a: Operand { space: Space::Dm, pattern: s.a.clone() },
        b_base: 0,
        c: Operand { space: Space::Acc, pattern: AccessPattern::new(0, &[], (s.m * s.n * 4) as u32) },
        accumulate,
        from: elem,
        to: accumulated(elem),
    })
}

/// After a wave's last chunk: the bias added (cast to the accumulator's type first if it is not), the tiles moved
/// to data memory at `out` (cast to the result's type; i8 as the low byte of each i32, the wrap TEG's i8
/// arithmetic does) and written to the result.
fn finish(
    l: &mut Lowering,
    rw: &mut Rewriter<'_>,
    wave: &[Tile],
    r: &Input,
    bias: Option<&Input>,
    out: u64,
    cfg: &NpuConfig,
) -> Result<(), String> {
    let nd = wave[0].ext.len() - 2;
    let shapes: Vec<(u64, u64)> = wave.iter().map(|t| (t.ext[..nd].iter().product::<u64>(), t.ext[nd])).collect();
    let at = Placement { out, to: r.tensor.elem };
    if let Some(b) = bias {
        let boxes = wave.iter().zip(&shapes).enumerate().map(|(slice, (tile, &shape))| {
            let (start, ext, _) = operand_box(b, tile, cfg.dm_write_align);
            let dm = dm_box(&b.tensor, &ext, at.bias(shape), cfg);
            box_dma(&b.tensor, &start, &ext, &dm, l.dm(slice as u64), true, cfg)
        });
        let dmas: Vec<Dma> = boxes.collect();
        l.dmas(rw, &dmas, b.tensor.elem)?;
    }
    for (first, end) in runs(&shapes) {
        let tile = &wave[first as usize];
        for slices in l.slices_in(first, end) {
            finish_run(l, rw, slices, shapes[first as usize], tile, bias, at, cfg)?;
        }
    }
    let results = wave.iter().enumerate().map(|(slice, tile)| {
        let (start, ext, _) = operand_box(r, tile, 0);
        let dm = dm_box(&r.tensor, &ext, out, cfg);
        box_dma(&r.tensor, &start, &ext, &dm, l.dm(slice as u64), false, cfg)
    });
    let results: Vec<Dma> = results.collect();
    l.dmas(rw, &results, r.tensor.elem)
}

/// Where a finished tile goes in data memory: at `out`, as `to`; an i8 result's i32 tile after the i8 one, and the
/// bias after that.
#[derive(Copy, Clone)]
struct Placement {
    out: u64,
    to: ElemType,
}

impl Placement {
    /// Where the i32 or f32 tile of `m × n` is moved.
    fn moved(self, (m, n): (u64, u64)) -> u64 {
        if self.to == ElemType::I8 {
            self.out + round_up(m * n, 8)
        } else {
            self.out
        }
    }

    /// Where the bias row of a tile of `m × n` comes in.
    fn bias(self, (m, n): (u64, u64)) -> u64 {
        self.moved((m, n)) + m * n * 4
    }
}

/// The bias added to the accumulator tile of `m × n` on `slices` (whose first tile is `tile`; the bias came in by
/// [`finish`]'s DMAs), and the tile moved out of the accumulator.
#[allow(clippy::too_many_arguments)]
fn finish_run(
    l: &mut Lowering,
    rw: &mut Rewriter<'_>,
    slices: Slices,
    (m, n): (u64, u64),
    tile: &Tile,
    bias: Option<&Input>,
    at: Placement,
    cfg: &NpuConfig,
) -> Result<(), String> {
    let acc = Operand { space: Space::Acc, pattern: AccessPattern::new(0, &[], (m * n * 4) as u32) };
    let wide_t = accumulated(at.to);
    if let Some(b) = bias {
        let (_, ext, skip) = operand_box(b, tile, cfg.dm_write_align);
        let dm = dm_box(&b.tensor, &ext, at.bias((m, n)), cfg);
        let size = b.tensor.elem.bytes();
        let mut row = AccessPattern::new(dm.base + skip * size, &[], (n * size) as u32);
        if b.tensor.elem != wide_t {
            let wide = AccessPattern::new(round_up(dm.base + dm.bytes, 8), &[], (n * 4) as u32);
            l.compute(rw, &cast(slices, Space::Dm, &row, b.tensor.elem, wide.clone(), wide_t))?;
            row = wide;
        }
        let rhs = AccessPattern::new(row.base, &[(m as u32, 0)], (n * 4) as u32);
        let add = Vector {
            kind: "add".into(),
            slices,
            src: acc.clone(),
            rhs: Some(Rhs::Operand(Operand { space: Space::Dm, pattern: rhs })),
            dst: acc.clone(),
            dtype: wide_t,
        };
        l.compute(rw, &Instruction::Vector(add))?;
    }
    for step in out_of_acc(slices, &acc.pattern, m * n, wide_t, at.out, at.to) {
        l.compute(rw, &step)?;
    }
    Ok(())
}

/// Every index of `extents`, the last fastest.
fn odometer(extents: &[u64]) -> Vec<Vec<u64>> {
    let mut out = vec![Vec::new()];
    for &e in extents {
        out = out.into_iter().flat_map(|i| (0..e).map(move |j| i.iter().copied().chain([j]).collect())).collect();
    }
    out
}
