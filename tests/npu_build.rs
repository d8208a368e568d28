//! Kernels written in code (`dialects::npu::build`): every instruction decodes back to the value it was written
//! from, and the semaphores the builder derives from the instructions' bytes order every conflicting pair, so the
//! interpreter's race detector accepts random programs of DMAs, memsets, vector instructions, TRF loads, matmuls and casts on random queues over
//! overlapping bytes (and rejects them when the waits are dropped).

use proptest::prelude::*;
use tapestry::dialects::npu::access::AccessPattern;
use tapestry::dialects::npu::build::KernelBuilder;
use tapestry::dialects::npu::dma::{Dma, Memory, Side};
use tapestry::dialects::npu::interp::Program;
use tapestry::dialects::npu::ops::instruction::Instruction;
use tapestry::dialects::npu::ops::matmul::Matmul;
use tapestry::dialects::npu::ops::memset::Memset;
use tapestry::dialects::npu::ops::onchip::{Operand, Slices, Space};
use tapestry::dialects::npu::ops::stream::{Kind, Requant, Stream};
use tapestry::dialects::npu::ops::vector::{Rhs, Vector};
use tapestry::dialects::npu::types::BufType;
use tapestry::ir::builder::InsertPoint;
use tapestry::ir::rewrite::Rewriter;
use tapestry::ir::{Context, Loc, OpId};
use tapestry::machine::{ElemType, NpuConfig};

/// Bytes of each buffer and of the window of data memory used.
const SPAN: u64 = 512;

#[derive(Clone, Debug)]
enum Step {
    /// HBM buffer ↔ slice: (to DM, buffer, slice, HBM base, DM base, 8-byte words, DMA engine).
    Dma(bool, u32, u64, u64, u64, u64, u8),
    /// `dst = src + rhs` (or `relu src`) on slices `first..end`: (unary, first, end, src, rhs, dst, words, sub queue).
    Vector(bool, u64, u64, u64, u64, u64, u64, bool),
    /// Fill words of slice `slice` with a value: (slice, base, words, value).
    Memset(u64, u64, u64, i8),
    /// On slice `slice`: B (k × 8t) into the TRF, `C = A · B` (or `+=`) into the accumulator, C moved to DM:
    /// (slice, m, k, t, accumulate).
    Matmul(u64, u64, u64, u64, bool),
}

fn step() -> impl Strategy<Value = Step> {
    let word = 0..SPAN / 8;
    prop_oneof![
        (any::<bool>(), 0u32..2, 0u64..2, word.clone(), word.clone(), 1u64..8, 0u8..3)
            .prop_map(|(d, b, s, h, m, n, e)| Step::Dma(d, b, s, h, m, n, e)),
        (any::<bool>(), 0u64..2, 1u64..3, word.clone(), word.clone(), word, 1u64..8, any::<bool>())
            .prop_map(|(u, f, e, s, r, d, n, q)| Step::Vector(u, f.min(e - 1), e.max(f + 1).min(2), s, r, d, n, q)),
        (0u64..2, 0..SPAN / 8, 1u64..8, any::<i8>()).prop_map(|(s, b, n, v)| Step::Memset(s, b, n, v)),
        (0u64..2, 1u64..4, 1u64..5, 1u64..3, any::<bool>()).prop_map(|(s, m, k, t, a)| Step::Matmul(s, m, k, t, a)),
    ]
}

/// `base` in 8-byte words clamped so that `words` fit in the window, in bytes.
fn at(base: u64, words: u64) -> u64 {
    base.min(SPAN / 8 - words) * 8
}

fn instructions(step: &Step) -> Vec<(Instruction, String)> {
    let Step::Matmul(slice, m, k, t, accumulate) = *step else { return vec![instruction(step)] };
    let cfg = NpuConfig::default();
    let slices = Slices { chip: 0, cluster: 0, first: slice, end: slice + 1 };
    let n = 8 * t;
    let dm = |base: u64, bytes: u64| Operand { space: Space::Dm, pattern: AccessPattern::new(base, &[], bytes as u32) };
    let acc = Operand { space: Space::Acc, pattern: AccessPattern::new(0, &[], (m * n * 4) as u32) };
    let trf = Operand {
        space: Space::Trf,
        pattern: AccessPattern::new(0, &[(t as u32, k as i64 * 4), (8, cfg.trf_lane_bytes as i64)], (k * 4) as u32),
    };
    let stream = |kind: Kind, src: Operand, dst: Operand| Stream {
        kind,
        slices,
        src,
        dst,
        from: ElemType::F32,
        to: ElemType::F32,
        relu: false,
        requant: Requant { scale: 1, shift: 0 },
        tile: (1, 1),
    };
    let matmul = Matmul {
        slices,
        m,
        k,
        n,
        a: dm(0, m * k * 4),
        b_base: 0,
        c: acc.clone(),
        accumulate,
        from: ElemType::F32,
        to: ElemType::F32,
    };
    vec![
        (Instruction::Stream(stream(Kind::LoadTrf, dm(0, k * n * 4), trf)), "sub".into()),
        (Instruction::Matmul(matmul), "main".into()),
        (Instruction::Stream(stream(Kind::Cast, acc, dm(256, m * n * 4))), "main".into()),
    ]
}

fn instruction(step: &Step) -> (Instruction, String) {
    match *step {
        Step::Dma(to_dm, buffer, slice, hbm, dm, words, engine) => {
            let hbm = Side {
                memory: Memory::Hbm { chip: 0, region: buffer, bytes: SPAN },
                pattern: AccessPattern::new(at(hbm, words), &[(words as u32, 8)], 8),
            };
            let dm = Side {
                memory: Memory::Dm { chip: 0, cluster: 0, slice },
                pattern: AccessPattern::new(at(dm, words), &[(words as u32, 8)], 8),
            };
            let (src, dst) = if to_dm { (hbm, dm) } else { (dm, hbm) };
            (Instruction::Dma(Dma::new(src, dst)), format!("dma{engine}"))
        }
        Step::Vector(unary, first, end, src, rhs, dst, words, sub) => {
            let operand = |base: u64| Operand {
                space: Space::Dm,
                pattern: AccessPattern::new(at(base, words), &[(words as u32 * 2, 4)], 4),
            };
            let v = Vector {
                kind: if unary { "relu" } else { "add" }.into(),
                slices: Slices { chip: 0, cluster: 0, first, end },
                src: operand(src),
                rhs: (!unary).then(|| Rhs::Operand(operand(rhs))),
                dst: Operand { space: Space::Dm, pattern: AccessPattern::new(at(dst, words), &[], words as u32 * 8) },
                dtype: ElemType::F32,
            };
            (Instruction::Vector(v), if sub { "sub" } else { "main" }.into())
        }
        Step::Memset(slice, base, words, value) => {
            let m = Memset {
                slices: Slices { chip: 0, cluster: 0, first: slice, end: slice + 1 },
                dst: Operand { space: Space::Dm, pattern: AccessPattern::new(at(base, words), &[], words as u32 * 8) },
                dtype: ElemType::F32,
                value: value as f64 / 4.0,
            };
            (Instruction::Memset(m), "main".into())
        }
        Step::Matmul(..) => unreachable!("several instructions"),
    }
}

/// Writes `steps` into a kernel of two buffers; returns the context and the kernel.
fn build(steps: &[Step]) -> (Context, OpId) {
    let mut ctx = Context::new(tapestry::dialects::all());
    let module = tapestry::parse::parse_file(&mut ctx, "t.tap", "builtin.module {\n}\n").expect("a module");
    let block = ctx.body.region(ctx.body.regions(module)[0]).blocks[0];
    let mut rw = Rewriter::new(&mut ctx, InsertPoint::End(block));
    let buf = BufType { chip: 0, len: SPAN / 4, elem: ElemType::F32 };
    let mut k = KernelBuilder::new(&mut rw, "k", &[buf.clone(), buf], NpuConfig::default(), Loc::Unknown);
    rw.set_insertion_point(InsertPoint::End(k.block()));
    for (ins, queue) in steps.iter().flat_map(instructions) {
        let op = match &ins {
            Instruction::Dma(d) => k.dma(&mut rw, d, ElemType::F32, &queue),
            other => k.compute(&mut rw, other, &queue),
        }
        .expect("a valid instruction");
        let back = Instruction::decode(rw.ir(), op, &NpuConfig::default()).expect("decodes").expect("touches memory");
        assert_eq!(format!("{back:?}"), format!("{ins:?}"), "decode(build(x)) = x");
    }
    let kernel = k.kernel;
    (ctx, kernel)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn built_kernels_decode_back_and_have_no_races(steps in prop::collection::vec(step(), 1..24)) {
        let (ctx, kernel) = build(&steps);
        let printed = tapestry::ir::print::op_to_string(&ctx, kernel, Default::default());
        if let Err(e) = Program::load(&ctx, kernel) {
            panic!("{}\n{printed}", e.message);
        }
    }
}

/// Without its waits, a program whose instructions conflict across queues is a race the interpreter reports: the
/// property above is not vacuous.
#[test]
fn dropping_the_waits_is_a_race() {
    let steps = [Step::Dma(true, 0, 0, 0, 0, 4, 0), Step::Vector(true, 0, 1, 0, 0, 8, 4, false)];
    let (mut ctx, kernel) = build(&steps);
    assert!(Program::load(&ctx, kernel).is_ok());
    let block = ctx.body.region(ctx.body.regions(kernel)[0]).blocks[0];
    let vec_op = ctx.body.last_op(block).expect("ops");
    let waits = ctx.body.operands(vec_op).count() - 1;
    assert_eq!(waits, 1, "the relu waits for the DMA");
    let empty = ctx.attr(tapestry::ir::Attr::Array(Vec::new().into()));
    ctx.set_op_attr(vec_op, "waits", empty);
    let signal = ctx.body.operand(vec_op, 1);
    ctx.body.set_operands(vec_op, &[signal]);
    let err = Program::load(&ctx, kernel).expect_err("a race");
    assert!(err.message.contains("race"), "{}", err.message);
}
