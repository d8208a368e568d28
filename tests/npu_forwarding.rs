//! Lazy DMAs and TRF loads change nothing a program can see: on random kernels (DMAs between HBM buffers and two
//! slices' data memories with random packets and strides, moves and relu through data memory, register-file loads,
//! plain and transposing, and matmuls, together and apart, some instructions unordered), an `Npu` that turns DMAs
//! out of HBM into forwards and lets matmuls read through TRF loads gives the same buffers, or the same error at the
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
    Dma { src: (Mem, u64), dst: (Mem, u64), count: u64, src_stride: u64, dst_stride: u64, packet: u64 },
    /// A move (`npu.cast` f32 to f32) or a relu, from one run of a slice's data memory to another.
    Unary { relu: bool, slice: u64, src: u64, dst: u64, len: u64 },
    /// `C = A · B` on a slice: `A` (m × k) at `a`, `B` loaded into the TRF by `load` just before, `C` moved to `c`;
    /// when `feed` is `(buffer, base, rows per packet, stride)`, a DMA first brings `A` in from HBM (so that the
    /// matmul may read it there).
    Matmul { m: u64, a: u64, c: u64, feed: Option<(u64, u64, u64, u64)>, load: Load },
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
    let dma = (mem(), mem(), 1u64..5, 0u64..4, 0u64..3, 0u64..4, any::<u64>(), any::<u64>()).prop_map(
        |(src, dst, count, s, d, p, x, y)| {
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
            }
        },
    );
    let unary = (any::<bool>(), 0u64..2, 1u64..9, any::<u64>(), any::<u64>()).prop_map(|(relu, slice, n, x, y)| {
        let len = n * 32;
        Ins::Unary { relu, slice, src: base(len, x), dst: base(len, y), len }
    });
    let feed = proptest::option::weighted(0.6, (0u64..2, any::<u64>(), 0u64..3, 0u64..3));
    let fed = || proptest::option::weighted(0.5, (0u64..2, any::<u64>(), 0u64..3));
    let matmul = (0u64..2, 1u64..4, 1u64..4, 1u64..9, any::<[u64; 3]>(), feed, fed()).prop_map(
        |(slice, m, k, n, picks, feed, fed)| {
            let (m, k) = (2 * m, 2 * k);
            let [a, c] = [m * k, m * n].map(|e| e * 4);
            let feed = feed.map(|(buffer, pick, per, gap)| {
                let per = [1, 2, m][per as usize];
                let packet = per * k * 4;
                let stride = packet + gap * 8;
                (buffer, base((m / per - 1) * stride + packet, pick), per, stride)
            });
            let load = load_of(slice, (k, n), picks[1], picks[0] % 2 == 0, fed);
            Ins::Matmul { m, a: base(a, picks[0]), c: base(c, picks[2]), feed, load }
        },
    );
    // Loads and matmuls apart draw from fewer shapes and places, so that a matmul often reads what a load wrote.
    let load = (0u64..2, 1u64..3, 1u64..3, 0u64..2, any::<bool>(), fed())
        .prop_map(|(slice, k, n, pick, t, fed)| Ins::Load(load_of(slice, (2 * k, 4 * n), pick * 8, t, fed)));
    let mm = (0u64..2, 1u64..4, 1u64..3, 1u64..3, any::<[u64; 2]>()).prop_map(|(slice, m, k, n, picks)| {
        let (m, k, n) = (2 * m, 2 * k, 4 * n);
        Ins::Mm { slice, m, k, n, a: base(m * k * 4, picks[0]), c: base(m * n * 4, picks[1]) }
    });
    prop_oneof![3 => dma, 1 => unary, 1 => matmul, 1 => load, 1 => mm]
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
            Ins::Dma { src, dst, count, src_stride, dst_stride, packet } => format!(
                "  npu.dma queue(dma{}) src({}) dst({}) loops [({count}, {src_stride}, {dst_stride})] packet {packet} : f32\n",
                i % 3,
                side(src.0, src.1),
                side(dst.0, dst.1)
            ),
            Ins::Unary { relu: false, slice, src, dst, len } => format!(
                "  npu.cast queue(main) on(0, {slice}) src(dm, base {src}, loops [], packet {len}) dst(dm, base {dst}, loops [], packet {len}) : f32 -> f32\n"
            ),
            Ins::Unary { relu: true, slice, src, dst, len } => format!(
                "  npu.vec.unary relu queue(main) on(0, {slice}) src(dm, base {src}, loops [], packet {len}) dst(dm, base {dst}, loops [], packet {len}) : f32\n"
            ),
            Ins::Matmul { m, a, c, feed, load } => {
                let (slice, k) = (load.slice, load.k);
                let feed = feed.map_or(String::new(), |(buffer, at, per, stride)| {
                    let packet = per * k * 4;
                    format!(
                        "  npu.dma queue(dma0) src(%b{buffer}, base {at}) dst(dm[0, {slice}], base {a}) loops [({}, {stride}, {packet})] packet {packet} : f32\n  npu.barrier\n",
                        m / per
                    )
                });
                feed + &load_trf(load) + &matmul(slice, *m, k, load.n, *a, *c)
            }
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
