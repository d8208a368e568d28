//! Lazy DMAs, memsets and TRF loads change nothing a program can see (float sums aside, which a GEMM over another layout may
//! round differently: the inputs are small integers, whose sums are exact): on random kernels (DMAs between HBM buffers and two
//! slices' data memories with random packets and strides, memsets, moves and relu through data memory, register-file
//! loads, plain and transposing, and matmuls, together and apart, some reading `A` in a memset a DMA wrote into,
//! some instructions unordered), an `Npu` that turns DMAs out of HBM into forwards, memsets into fills (and DMAs
//! into them into overlays) and lets matmuls read through TRF loads gives the same buffers, or the same error at the
//! same instruction, as one that copies every DMA and loads every TRF at once.

use indexmap::IndexMap;
use proptest::prelude::*;
use tapestry::array::{Array, Data};
use tapestry::dialects::npu::interp::{Npu, Program};
use tapestry::ir::Context;

/// Bytes of each HBM buffer and of the window of data memory the kernels use.
const SPAN: u64 = 1024;

#[derive(Clone, Debug)]
enum Ins {
    /// `src` and `dst` as (memory, base); `loops` (count, src stride, dst stride); packet.
    /// With `spread`, between HBM and slice 0, the command serves slices 0 and 1: out of HBM a broadcast, into it a
    /// gather of the two slices' packets one run apart.
    Dma { src: (Mem, u64), dst: (Mem, u64), count: u64, src_stride: u64, dst_stride: u64, packet: u64, spread: bool },
    /// A move (`npu.cast` f32 to f32) or a relu, from one run of a slice's data memory to another.
    Unary { relu: bool, slice: u64, src: u64, dst: u64, len: u64 },
    /// `C = A · B` on a slice: `A` (m × k) at `a`, `B` loaded into the TRF by `load` just before, `C` moved to `c`;
    /// when `feed` is `(buffer, base, rows per packet, stride)`, a DMA first brings `A` in from HBM (so that the
    /// matmul may read it there); when `window` is `(value, buffer, base)` instead, a memset first fills `A` with the
    /// value and a DMA from HBM writes the first two elements of each of its rows (so that the matmul may read it
    /// in the fill).
    Matmul { m: u64, a: u64, c: u64, feed: Option<(u64, u64, u64, u64)>, window: Option<(i64, u64, u64)>, load: Load },
    /// A memset of a run of a slice's data memory.
    Memset { slice: u64, at: u64, len: u64, value: i64 },
    /// A TRF load alone.
    Load(Load),
    /// A matmul alone, reading whatever the TRF holds, `C` moved to `c`.
    Mm { slice: u64, m: u64, k: u64, n: u64, a: u64, c: u64 },
}

/// A TRF load of `n` columns of `k` from `b` (`Bᵀ`, or `B` row by row when `t`, transposed on the way); when `feed`
/// is `(buffer, base, stride)`, a DMA first brings the box in from HBM, a row per packet (so that a matmul may read
/// it there).
#[derive(Clone, Copy, Debug)]
struct Load {
    slice: u64,
    k: u64,
    n: u64,
    b: u64,
    t: bool,
    feed: Option<(u64, u64, u64)>,
}

/// A load of `n` columns of `k` on `slice` from the place `pick` finds, fed from HBM when `fed` is some.
fn load_of(slice: u64, (k, n): (u64, u64), pick: u64, t: bool, fed: Option<(u64, u64, u64)>) -> Load {
    let (rows, packet) = if t { (k, n * 4) } else { (n, k * 4) };
    let feed = fed.map(|(buffer, pick, gap)| {
        let stride = packet + gap * 8;
        (buffer, base((rows - 1) * stride + packet, pick), stride)
    });
    Load { slice, k, n, b: base(n * k * 4, pick), t, feed }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Mem {
    Hbm(u64),
    Dm(u64),
}

fn mem() -> impl Strategy<Value = Mem> {
    prop_oneof![3 => (0u64..2).prop_map(Mem::Hbm), 1 => Just(Mem::Hbm(2)), 4 => (0u64..2).prop_map(Mem::Dm)]
}

/// A base in units of 8 bytes such that `extent` bytes from it stay inside the window.
fn base(extent: u64, pick: u64) -> u64 {
    (pick % ((SPAN - extent) / 8 + 1)) * 8
}

fn ins() -> impl Strategy<Value = Ins> {
    let dma =
        (mem(), mem(), 1u64..5, 0u64..4, 0u64..3, 0u64..4, any::<u64>(), any::<u64>(), proptest::bool::weighted(0.3))
            .prop_map(|(src, dst, count, s, d, p, x, y, spread)| {
                let packet = 8 << p;
                let src_stride = [packet, 2 * packet, 64, 256][s as usize].max(packet);
                let dst_stride = [packet, 2 * packet, 3 * packet][d as usize];
                let reach = |stride: u64| (count - 1) * stride + packet;
                Ins::Dma {
                    src: (src, base(reach(src_stride), x)),
                    // A third start at 0, where loads apart read: DMAs often overwrite what a load read.
                    dst: (dst, if y % 3 == 0 { 0 } else { base(reach(dst_stride), y) }),
                    count,
                    src_stride,
                    dst_stride,
                    packet,
                    spread: spread && matches!((src, dst), (Mem::Hbm(_), Mem::Dm(0)) | (Mem::Dm(0), Mem::Hbm(_))),
                }
            });
    let unary = (any::<bool>(), 0u64..2, 1u64..9, any::<u64>(), any::<u64>()).prop_map(|(relu, slice, n, x, y)| {
        let len = n * 32;
        Ins::Unary { relu, slice, src: base(len, x), dst: base(len, y), len }
    });
    let feed = proptest::option::weighted(0.6, (0u64..2, any::<u64>(), 0u64..3, 0u64..3));
    let fed = || proptest::option::weighted(0.5, (0u64..2, any::<u64>(), 0u64..3));
    let window = proptest::option::weighted(0.5, (-2i64..3, 0u64..2, any::<u64>()));
    let matmul = (0u64..2, 1u64..4, 1u64..4, 1u64..9, any::<[u64; 3]>(), feed, fed(), window).prop_map(
        |(slice, m, k, n, picks, feed, fed, window)| {
            let (m, k) = (2 * m, 2 * k);
            let [a, c] = [m * k, m * n].map(|e| e * 4);
            let feed = feed.map(|(buffer, pick, per, gap)| {
                let per = [1, 2, m][per as usize];
                let packet = per * k * 4;
                let stride = packet + gap * 8;
                (buffer, base((m / per - 1) * stride + packet, pick), per, stride)
            });
            let load = load_of(slice, (k, n), picks[1], picks[0] % 2 == 0, fed);
            let window = window.map(|(value, buffer, pick)| (value, buffer, base(m * 8, pick)));
            Ins::Matmul { m, a: base(a, picks[0]), c: base(c, picks[2]), feed, window, load }
        },
    );
    // Loads and matmuls apart draw from fewer shapes and places, so that a matmul often reads what a load wrote.
    let load = (0u64..2, 1u64..3, 1u64..3, 0u64..2, any::<bool>(), fed())
        .prop_map(|(slice, k, n, pick, t, fed)| Ins::Load(load_of(slice, (2 * k, 4 * n), pick * 8, t, fed)));
    let mm = (0u64..2, 1u64..4, 1u64..3, 1u64..3, any::<[u64; 2]>()).prop_map(|(slice, m, k, n, picks)| {
        let (m, k, n) = (2 * m, 2 * k, 4 * n);
        Ins::Mm { slice, m, k, n, a: base(m * k * 4, picks[0]), c: base(m * n * 4, picks[1]) }
    });
    let memset = (0u64..2, 1u64..9, any::<u64>(), -2i64..3).prop_map(|(slice, n, x, value)| {
        let len = n * 24;
        Ins::Memset { slice, at: base(len, x), len, value }
    });
    prop_oneof![3 => dma, 1 => unary, 1 => matmul, 1 => load, 1 => mm, 1 => memset]
}

fn side(m: Mem, at: u64) -> String {
    match m {
        Mem::Hbm(b) => format!("%b{b}, base {at}"),
        Mem::Dm(s) => format!("dm[0, {s}], base {at}"),
    }
}

/// The kernel: five HBM buffers (the first two bound), each slice's window filled from one of them (so that most
/// reads find bytes; slice 1's only half when `half`, so that some read bytes nothing wrote), then the instructions
/// on their queues, a barrier after those marked, then each window filled whole copied out to a buffer of its own.
fn kernel(program: &[(Ins, bool)], half: bool) -> String {
    let n = SPAN / 4;
    let mut text = format!(
        "npu.kernel @k(%b0: !npu.buf<hbm, {n} x f32>, %b1: !npu.buf<hbm, {n} x f32>, %b2: !npu.buf<hbm, {n} x f32>, %b3: !npu.buf<hbm, {n} x f32>, %b4: !npu.buf<hbm, {n} x f32>) {{\n"
    );
    let filled = |s: u64| if s == 1 && half { SPAN / 2 } else { SPAN };
    for s in 0..2 {
        let len = filled(s);
        text += &format!(
            "  npu.dma queue(dma{s}) src(%b{s}, base 0) dst(dm[0, {s}], base 0) loops [(1, {len}, {len})] packet {len} : f32\n"
        );
    }
    text += "  npu.barrier\n";
    for (i, (ins, barrier)) in program.iter().enumerate() {
        text += &match ins {
            Ins::Dma { src, dst, count, src_stride, dst_stride, packet, spread } => format!(
                "  npu.dma queue(dma{}) src({}) dst({}) loops [({count}, {src_stride}, {dst_stride})] packet {packet}{} : f32\n",
                i % 3,
                side(src.0, src.1),
                side(dst.0, dst.1),
                match (spread, src.0) {
                    (false, _) => String::new(),
                    (true, Mem::Hbm(_)) => " spread [(2, 1, 0)]".to_string(),
                    (true, Mem::Dm(_)) => format!(" spread [(2, 1, {})]", ((count - 1) * dst_stride + packet).div_ceil(8) * 8),
                }
            ),
            Ins::Unary { relu: false, slice, src, dst, len } => format!(
                "  npu.cast queue(main) on(0, {slice}) src(dm, base {src}, loops [], packet {len}) dst(dm, base {dst}, loops [], packet {len}) : f32 -> f32\n"
            ),
            Ins::Unary { relu: true, slice, src, dst, len } => format!(
                "  npu.vec.unary relu queue(main) on(0, {slice}) src(dm, base {src}, loops [], packet {len}) dst(dm, base {dst}, loops [], packet {len}) : f32\n"
            ),
            Ins::Matmul { m, a, c, feed, window, load } => {
                let (slice, k) = (load.slice, load.k);
                let feed = feed.filter(|_| window.is_none()).map_or(String::new(), |(buffer, at, per, stride)| {
                    let packet = per * k * 4;
                    format!(
                        "  npu.dma queue(dma0) src(%b{buffer}, base {at}) dst(dm[0, {slice}], base {a}) loops [({}, {stride}, {packet})] packet {packet} : f32\n  npu.barrier\n",
                        m / per
                    )
                });
                let window = match (feed.is_empty(), window) {
                    (true, Some((value, buffer, at))) => format!(
                        "{}  npu.barrier\n  npu.dma queue(dma0) src(%b{buffer}, base {at}) dst(dm[0, {slice}], base {a}) loops [({m}, 8, {})] packet 8 : f32\n  npu.barrier\n",
                        memset(slice, *a, m * k * 4, *value),
                        k * 4
                    ),
                    _ => String::new(),
                };
                feed + &window + &load_trf(load) + &matmul(slice, *m, k, load.n, *a, *c)
            }
            Ins::Memset { slice, at, len, value } => memset(*slice, *at, *len, *value),
            Ins::Load(load) => load_trf(load),
            Ins::Mm { slice, m, k, n, a, c } => matmul(*slice, *m, *k, *n, *a, *c),
        };
        if *barrier {
            text += "  npu.barrier\n";
        }
    }
    // Each slice's window, copied out whole at the end: every byte a program leaves in data memory is seen.
    text += "  npu.barrier\n";
    for s in (0..2).filter(|&s| filled(s) == SPAN) {
        text += &format!(
            "  npu.dma queue(dma{s}) src(dm[0, {s}], base 0) dst(%b{}, base 0) loops [(1, {SPAN}, {SPAN})] packet {SPAN} : f32\n",
            s + 3
        );
    }
    text + "}\n"
}

/// A memset of `len` bytes of a slice's data memory from `at`.
fn memset(slice: u64, at: u64, len: u64, value: i64) -> String {
    format!(
        "  npu.memset queue(main) on(0, {slice}) dst(dm, base {at}, loops [], packet {len}) value {value}.0 : f32\n"
    )
}

/// The text of a load (after the DMA that feeds it, if any).
fn load_trf(l: &Load) -> String {
    let Load { slice, k, n, b, t, feed } = *l;
    let (rows, packet) = if t { (k, n * 4) } else { (n, k * 4) };
    let feed = feed.map_or(String::new(), |(buffer, at, stride)| {
        format!(
            "  npu.dma queue(dma0) src(%b{buffer}, base {at}) dst(dm[0, {slice}], base {b}) loops [({rows}, {stride}, {packet})] packet {packet} : f32\n  npu.barrier\n"
        )
    });
    let src = match t {
        true => format!("loops [({n}, 4), ({k}, {})], packet 4", n * 4),
        false => format!("loops [], packet {}", n * k * 4),
    };
    feed + &format!(
        "  npu.load_trf queue(main) on(0, {slice}) src(dm, base {b}, {src}) dst(trf, base 0, loops [({n}, 8192)], packet {}) : f32\n",
        k * 4
    )
}

/// `C = A · B` (B out of the TRF) on a slice, `C` moved to `c` in data memory.
fn matmul(slice: u64, m: u64, k: u64, n: u64, a: u64, c: u64) -> String {
    format!(
        "  npu.matmul queue(main) on(0, {slice}) m {m} k {k} n {n} a(dm, base {a}, loops [], packet {}) b(trf, base 0) c(acc, base 0, loops [], packet {}) : f32 -> f32\n  \
         npu.cast queue(main) on(0, {slice}) src(acc, base 0, loops [], packet {}) dst(dm, base {c}, loops [], packet {}) : f32 -> f32\n",
        m * k * 4,
        m * n * 4,
        m * n * 4,
        m * n * 4
    )
}

fn input(seed: usize) -> Array {
    let n = (SPAN / 4) as usize;
    Array::new(vec![n as u64], Data::F32((0..n).map(|i| ((i * 7 + seed) % 11) as f32 - 5.0).collect())).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 800, ..ProptestConfig::default() })]

    #[test]
    fn lazy_dmas_give_what_eager_ones_give(
        program in proptest::collection::vec((ins(), prop::bool::weighted(0.7)), 1..20),
        half in prop::bool::weighted(0.3),
    ) {
        let text = kernel(&program, half);
        let mut ctx = Context::new(tapestry::dialects::all());
        let parsed = tapestry::parse_and_verify(&mut ctx, "k.tap", &text);
        // The one kernel the generator makes that the verifier refuses: a DMA within one memory that overlaps itself.
        prop_assume!(parsed.is_ok());
        let module = parsed.unwrap();
        let region = ctx.body.regions(module)[0];
        let k = ctx.body.block_ops(ctx.body.region(region).blocks[0]).next().unwrap();
        let Ok(loaded) = Program::load(&ctx, k) else { return Ok(()) }; // A race: refused before anything runs.
        let inputs: IndexMap<String, Array> = [("arg0".to_string(), input(1)), ("arg1".to_string(), input(4))].into();
        let (mut lazy, mut eager) = (Npu::default(), Npu::eager());
        for _ in 0..2 {
            let (got, want) = (lazy.launch(&loaded, &inputs), eager.launch(&loaded, &inputs));
            match (got, want) {
                (Ok(g), Ok(w)) => prop_assert_eq!(g.buffers, w.buffers, "{}", text),
                (Err(g), Err(w)) => prop_assert_eq!(g, w, "{}", text),
                (g, w) => prop_assert!(false, "lazy {:?}, eager {:?}\n{}", g.map(|r| r.buffers), w.map(|r| r.buffers), text),
            }
        }
    }
}

/// Where each of four slices' `A` and `B` come from: the row block of `A` and the column block of `B` per slice (a
/// grid, a column, a row, or any), so that the slices of one matmul often stack into one GEMM, and sometimes do not.
fn blocks() -> impl Strategy<Value = [(u64, u64); 4]> {
    let grid = Just([(0, 0), (0, 1), (1, 0), (1, 1)]);
    let column = Just([(0, 0), (1, 0), (2, 0), (3, 0)]);
    let row = Just([(0, 0), (0, 1), (0, 2), (0, 3)]);
    let any = proptest::array::uniform4((0u64..4, 0u64..4));
    (prop_oneof![grid, column, row, any], Just([0usize, 1, 2, 3]).prop_shuffle())
        .prop_map(|(blocks, order)| order.map(|i| blocks[i]))
}

/// A kernel of four slices: each brings in its row block of `A` (`m` × `k`, rows `a_stride` bytes apart in HBM
/// buffer `%b{buffers.0}` from `a0`; when `window`, only each row's first two elements, into a memset of zeros, so
/// that slices of one row block read `A` in fills of one content, `interp::shared_a`; the matmul reads it `down` its
/// columns or not) and its column block of `B` (`k` × `n`, in `%b{buffers.1}` from `b0`: row by row
/// `b_stride` apart when `rows`, else column by column), loads `B` into the TRF, multiplies, then per entry of
/// `then` multiplies again adding (`true`) or moves slice 0's `C` out of its accumulator (`false`, which carries out
/// a deferred product, `interp::deferred`), and writes `C` out to `%b2`.
#[allow(clippy::too_many_arguments)]
fn stacking_kernel(
    (m, k, n): (u64, u64, u64),
    blocks: [(u64, u64); 4],
    buffers: (u64, u64),
    (a0, a_stride): (u64, u64),
    (b0, b_stride, rows): (u64, u64, bool),
    then: &[bool],
    (window, down): (bool, bool),
) -> String {
    let len = SPAN / 4;
    let b_at = 256;
    let mut text = format!(
        "npu.kernel @k(%b0: !npu.buf<hbm, {len} x f32>, %b1: !npu.buf<hbm, {len} x f32>, %b2: !npu.buf<hbm, {len} x f32>) {{\n"
    );
    if window {
        text += &format!(
            "  npu.memset queue(main) on(0, 0:4) dst(dm, base 0, loops [], packet {}) value 0.0 : f32\n  npu.barrier\n",
            m * k * 4
        );
    }
    for (s, (r, c)) in blocks.iter().enumerate() {
        let a = a0 + r * m * a_stride;
        text += &format!(
            "  npu.dma queue(dma0) src(%b{}, base {a}) dst(dm[0, {s}], base 0) loops [({m}, {a_stride}, {})] packet {} : f32\n",
            buffers.0,
            k * 4,
            if window { 8 } else { k * 4 }
        );
        let (b, count, packet) = if rows { (b0 + c * n * 4, k, n * 4) } else { (b0 + c * n * b_stride, n, k * 4) };
        text += &format!(
            "  npu.dma queue(dma1) src(%b{}, base {b}) dst(dm[0, {s}], base {b_at}) loops [({count}, {b_stride}, {packet})] packet {packet} : f32\n",
            buffers.1
        );
    }
    let src = match rows {
        true => format!("loops [({n}, 4), ({k}, {})], packet 4", n * 4),
        false => format!("loops [], packet {}", n * k * 4),
    };
    text += &format!(
        "  npu.barrier\n  npu.load_trf queue(main) on(0, 0:4) src(dm, base {b_at}, {src}) dst(trf, base 0, loops [({n}, 8192)], packet {}) : f32\n",
        k * 4
    );
    let c = m * n * 4;
    // `A` read as it lies (row-major), or `down` its columns as if it lay column-major (as a convolution reads its
    // window: a run of a row's pixels per channel and tap).
    let a = match down {
        false => format!("loops [], packet {}", m * k * 4),
        true => format!("loops [({m}, 4), ({k}, {})], packet 4", m * 4),
    };
    for step in std::iter::once(None).chain(then.iter().map(Some)) {
        if step == Some(&false) {
            text += &format!(
                "  npu.cast queue(main) on(0, 0) src(acc, base 0, loops [], packet {c}) dst(dm, base 1024, loops [], packet {c}) : f32 -> f32\n"
            );
            continue;
        }
        let add = if step.is_some() { " accumulate" } else { "" };
        text += &format!(
            "  npu.matmul queue(main) on(0, 0:4) m {m} k {k} n {n} a(dm, base 0, {a}) b(trf, base 0) c(acc, base 0, loops [], packet {c}){add} : f32 -> f32\n"
        );
    }
    text + &c_out(c)
}

/// The end of the four-slice kernels: each slice's `C` (`c` bytes) moved out of its accumulator and written to
/// `%b2`, slice after slice.
fn c_out(c: u64) -> String {
    let mut text = format!(
        "  npu.cast queue(main) on(0, 0:4) src(acc, base 0, loops [], packet {c}) dst(dm, base 512, loops [], packet {c}) : f32 -> f32\n  npu.barrier\n"
    );
    for s in 0..4 {
        text += &format!(
            "  npu.dma queue(dma0) src(dm[0, {s}], base 512) dst(%b2, base {}) loops [(1, {c}, {c})] packet {c} : f32\n",
            s * c
        );
    }
    text + "}\n"
}

/// Runs kernel `text` (its first two buffers bound) on a lazy and on an eager `Npu`: both give the same buffers.
fn lazy_gives_what_eager_gives(text: &str) -> Result<(), TestCaseError> {
    let fail = |e: &dyn std::fmt::Debug| TestCaseError::fail(format!("{e:?}\n{text}"));
    let mut ctx = Context::new(tapestry::dialects::all());
    let module = tapestry::parse_and_verify(&mut ctx, "k.tap", text).map_err(|e| fail(&e))?;
    let region = ctx.body.regions(module)[0];
    let kernel = ctx.body.block_ops(ctx.body.region(region).blocks[0]).next().unwrap();
    let loaded = Program::load(&ctx, kernel).map_err(|e| fail(&e))?;
    let inputs: IndexMap<String, Array> = [("arg0".to_string(), input(1)), ("arg1".to_string(), input(5))].into();
    let got = Npu::default().launch(&loaded, &inputs).map_err(|e| fail(&e))?;
    let want = Npu::eager().launch(&loaded, &inputs).map_err(|e| fail(&e))?;
    prop_assert_eq!(got.buffers, want.buffers, "{}", text);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Slices whose `A` row blocks and `B` column blocks lie in HBM next to each other run as one GEMM
    /// (`interp::stacked`), and so do slices reading `A` in fills of one content (`interp::shared_a`), whose
    /// products wait for the matmuls adding to them (`interp::deferred`); every element of `C` is the one each
    /// slice's own GEMM gives (the inputs are small integers, so sums are exact in any order and a misplaced block
    /// shows).
    #[test]
    fn stacked_slices_give_what_each_gives_alone(
        (m, k, n) in (1u64..3, 1u64..3, 1u64..3).prop_map(|(m, k, n)| (2 * m, 2 * k, 4 * n)),
        blocks in blocks(),
        buffers in (0u64..2, 0u64..2),
        gaps in (0u64..2, 0u64..2),
        picks in any::<[u64; 2]>(),
        rows in any::<bool>(),
        then in proptest::collection::vec(any::<bool>(), 0..4),
        window in any::<bool>(),
        down in any::<bool>(),
    ) {
        let a_stride = k * 4 + gaps.0 * 8;
        let a_reach = (4 * m - 1) * a_stride + k * 4;
        let b_stride = if rows { 4 * n * 4 + gaps.1 * 8 } else { k * 4 + gaps.1 * 8 };
        let b_reach = if rows { (k - 1) * b_stride + 4 * n * 4 } else { (4 * n - 1) * b_stride + k * 4 };
        let a = (base(a_reach, picks[0]), a_stride);
        let b = (base(b_reach, picks[1]), b_stride, rows);
        lazy_gives_what_eager_gives(&stacking_kernel((m, k, n), blocks, buffers, a, b, &then, (window, down)))?;
    }
}

/// A kernel of four slices, a 2 × 2 grid of blocks of `C = A · B` (`A` `2m` × `k · chunks` in `%b0`, `B`
/// `k · chunks` × `2n` in `%b1`, both row-major), multiplied one chunk of `k` at a time in the order `order`, each
/// chunk's tiles brought into data memory by DMA and `B` loaded into the TRF, the matmuls after the first adding:
/// the stacked products are deferred and join (`interp::deferred`), and chunks taken in order continue each other
/// in HBM, so their terms merge into one GEMM.
fn chunked_kernel((m, k, n): (u64, u64, u64), order: &[u64]) -> String {
    let len = SPAN / 4;
    let wide = k * order.len() as u64;
    let mut text = format!(
        "npu.kernel @k(%b0: !npu.buf<hbm, {len} x f32>, %b1: !npu.buf<hbm, {len} x f32>, %b2: !npu.buf<hbm, {len} x f32>) {{\n"
    );
    for (i, &j) in order.iter().enumerate() {
        for s in 0..4u64 {
            let (r, c) = (s / 2, s % 2);
            let a = (r * m * wide + j * k) * 4;
            let b = (j * k * 2 * n + c * n) * 4;
            text += &format!(
                "  npu.dma queue(dma0) src(%b0, base {a}) dst(dm[0, {s}], base 0) loops [({m}, {}, {})] packet {} : f32\n",
                wide * 4,
                k * 4,
                k * 4
            );
            text += &format!(
                "  npu.dma queue(dma1) src(%b1, base {b}) dst(dm[0, {s}], base 256) loops [({k}, {}, {})] packet {} : f32\n",
                2 * n * 4,
                n * 4,
                n * 4
            );
        }
        let add = if i > 0 { " accumulate" } else { "" };
        text += &format!(
            "  npu.barrier\n  npu.load_trf queue(main) on(0, 0:4) src(dm, base 256, loops [({n}, 4), ({k}, {})], packet 4) dst(trf, base 0, loops [({n}, 8192)], packet {}) : f32\n",
            n * 4,
            k * 4
        );
        text += &format!(
            "  npu.matmul queue(main) on(0, 0:4) m {m} k {k} n {n} a(dm, base 0, loops [], packet {}) b(trf, base 0) c(acc, base 0, loops [], packet {}){add} : f32 -> f32\n  npu.barrier\n",
            m * k * 4,
            m * n * 4
        );
    }
    let c = m * n * 4;
    text + &c_out(c)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 100, ..ProptestConfig::default() })]

    /// A contraction's chunks of `k`, as a lowering writes them, give every element of `C` each slice's own GEMMs
    /// give, whether the chunks come in order (their terms merge) or not.
    #[test]
    fn chunks_of_k_give_what_each_slice_gives(
        (m, k, n) in (1u64..3, 1u64..3, 1u64..3).prop_map(|(m, k, n)| (2 * m, 2 * k, 4 * n)),
        order in (1u64..4).prop_flat_map(|c| Just((0..c).collect::<Vec<u64>>()).prop_shuffle()),
    ) {
        lazy_gives_what_eager_gives(&chunked_kernel((m, k, n), &order))?;
    }
}
