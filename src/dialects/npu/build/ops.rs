//! Instructions written from their decoded form: the inverse of `Instruction::decode`, so a pass that plans an
//! instruction as a value (a [`Dma`], a [`Vector`], ...) gets exactly that instruction back when the interpreter
//! or the verifier decodes the op (`tests/npu_build.rs` checks decode(build(x)) = x).

use crate::dialects::npu::dma::{Dma, Memory};
use crate::dialects::npu::ops::clauses::Sync;
use crate::dialects::npu::ops::instruction::Instruction;
use crate::dialects::npu::ops::onchip::{Operand, Slices};
use crate::dialects::npu::ops::stream::{Kind, Requant};
use crate::dialects::npu::ops::vector::Rhs;
use crate::dialects::npu::types::elem_name;
use crate::ir::builder::OpState;
use crate::ir::types::FloatKind;
use crate::ir::{Attr, AttrId, Interners, Loc, ValueId};
use crate::machine::ElemType;

/// The `npu.dma` op `dma` decodes from, moving `dtype` elements, on `sync`'s queue with its waits and signals;
/// `buffer(region)` is the kernel argument holding HBM region `region`.
pub fn dma_state(
    ints: &mut Interners,
    dma: &Dma,
    dtype: ElemType,
    buffer: &dyn Fn(u32) -> ValueId,
    sync: &Sync,
    loc: Loc,
) -> OpState {
    let mut w = Writer { ints, props: Vec::new(), operands: Vec::new() };
    w.dma(dma, buffer);
    w.dtype("dtype", dtype);
    w.take("npu.dma", sync, loc)
}

/// The op a compute instruction decodes from, on `sync`'s queue with its waits and signals; `None` for a DMA
/// (see [`dma_state`]) or an instruction this module cannot write yet.
pub fn compute_state(ints: &mut Interners, instruction: &Instruction, sync: &Sync, loc: Loc) -> Option<OpState> {
    let mut w = Writer { ints, props: Vec::new(), operands: Vec::new() };
    let name = match instruction {
        Instruction::Memset(m) => {
            w.slices(&m.slices);
            w.operand("dst", &m.dst);
            let value = w.float(m.value);
            w.prop("value", value);
            w.dtype("dtype", m.dtype);
            "npu.memset"
        }
        Instruction::Vector(v) => {
            w.str("kind", &v.kind);
            w.slices(&v.slices);
            w.dtype("dtype", v.dtype);
            w.operand("dst", &v.dst);
            match &v.rhs {
                None => {
                    w.operand("src", &v.src);
                    "npu.vec.unary"
                }
                Some(rhs) => {
                    w.operand("lhs", &v.src);
                    match rhs {
                        Rhs::Operand(o) => w.operand("rhs", o),
                        Rhs::Imm(x) => {
                            let x = w.float(*x);
                            w.prop("rhs_imm", x);
                        }
                    }
                    "npu.vec.binary"
                }
            }
        }
        Instruction::Stream(st) => {
            w.slices(&st.slices);
            w.operand("src", &st.src);
            w.operand("dst", &st.dst);
            w.dtype("dtype", st.from);
            if st.kind == Kind::Cast {
                w.dtype("out_dtype", st.to);
                if st.relu {
                    w.unit("relu");
                }
                if st.requant != (Requant { scale: 1, shift: 0 }) {
                    w.int("scale", st.requant.scale as i64);
                    w.int("shift", st.requant.shift as i64);
                }
            }
            if st.kind == Kind::Transpose {
                w.ints("tile", &[st.tile.0 as i64, st.tile.1 as i64]);
            }
            match st.kind {
                Kind::LoadTrf => "npu.load_trf",
                Kind::LoadVrf => "npu.load_vrf",
                Kind::Cast => "npu.cast",
                Kind::Transpose => "npu.transpose",
            }
        }
        Instruction::Matmul(mm) => {
            w.slices(&mm.slices);
            for (name, v) in [("m", mm.m), ("k", mm.k), ("n", mm.n), ("b_base", mm.b_base)] {
                w.int(name, v as i64);
            }
            w.operand("a", &mm.a);
            w.operand("c", &mm.c);
            if mm.accumulate {
                w.unit("accumulate");
            }
            w.dtype("dtype", mm.from);
            w.dtype("out_dtype", mm.to);
            "npu.matmul"
        }
        Instruction::Reduce(r) => {
            w.str("kind", &r.kind);
            w.slices(&r.slices);
            w.operand("src", &r.src);
            w.operand("dst", &r.dst);
            w.dtype("dtype", r.dtype);
            if r.across {
                "npu.reduce.slices"
            } else {
                "npu.vec.reduce"
            }
        }
        Instruction::Dma(_) => return None,
    };
    Some(w.take(name, sync, loc))
}

/// Properties and operands collected for one op.
struct Writer<'i> {
    ints: &'i mut Interners,
    props: Vec<(String, AttrId)>,
    operands: Vec<ValueId>,
}

impl Writer<'_> {
    fn prop(&mut self, name: &str, value: AttrId) {
        self.props.push((name.to_string(), value));
    }

    fn int(&mut self, name: &str, value: i64) {
        let i64t = self.ints.int_type(64);
        let v = self.ints.int_attr(value as i128, i64t);
        self.prop(name, v);
    }

    fn ints(&mut self, name: &str, values: &[i64]) {
        let list = self.list(values);
        self.prop(name, list);
    }

    fn list(&mut self, values: &[i64]) -> AttrId {
        let i64t = self.ints.int_type(64);
        let items: Vec<AttrId> = values.iter().map(|&v| self.ints.int_attr(v as i128, i64t)).collect();
        self.ints.attr(Attr::Array(items.into()))
    }

    fn unit(&mut self, name: &str) {
        let unit = self.ints.attr(Attr::Unit);
        self.prop(name, unit);
    }

    fn str(&mut self, name: &str, value: &str) {
        let v = self.ints.string_attr(value);
        self.prop(name, v);
    }

    fn float(&mut self, x: f64) -> AttrId {
        let f64t = self.ints.float_type(FloatKind::F64);
        self.ints.attr(Attr::Float { bits: x.to_bits(), ty: f64t })
    }

    fn dtype(&mut self, name: &str, t: ElemType) {
        self.str(name, elem_name(t));
    }

    fn slices(&mut self, s: &Slices) {
        self.int("cluster", s.cluster as i64);
        self.ints("slices", &[s.first as i64, s.end as i64]);
        if s.chip != 0 {
            self.int("chip", s.chip as i64);
        }
    }

    fn operand(&mut self, name: &str, o: &Operand) {
        self.str(&format!("{name}_space"), o.space.name());
        self.int(&format!("{name}_base"), o.pattern.base as i64);
        let loops: Vec<AttrId> = o.pattern.loops.iter().map(|l| self.list(&[l.count as i64, l.stride])).collect();
        let loops = self.ints.attr(Attr::Array(loops.into()));
        self.prop(&format!("{name}_loops"), loops);
        self.int(&format!("{name}_packet"), o.pattern.packet as i64);
    }

    fn dma(&mut self, d: &Dma, buffer: &dyn Fn(u32) -> ValueId) {
        for (which, side) in [("src", &d.src), ("dst", &d.dst)] {
            match side.memory {
                Memory::Hbm { region, .. } => {
                    self.str(&format!("{which}_space"), "hbm");
                    self.operands.push(buffer(region));
                }
                Memory::Dm { chip, cluster, slice } => {
                    self.str(&format!("{which}_space"), "dm");
                    self.ints(&format!("{which}_slice"), &[chip as i64, cluster as i64, slice as i64]);
                }
            }
            self.int(&format!("{which}_base"), side.pattern.base as i64);
        }
        let loops: Vec<AttrId> = (d.src.pattern.loops.iter().zip(&d.dst.pattern.loops))
            .map(|(s, t)| self.list(&[s.count as i64, s.stride, t.stride]))
            .collect();
        let loops = self.ints.attr(Attr::Array(loops.into()));
        self.prop("loops", loops);
        self.int("packet", d.src.pattern.packet as i64);
        if !d.spread.is_empty() {
            let spread: Vec<AttrId> =
                d.spread.iter().map(|l| self.list(&[l.count as i64, l.step as i64, l.hbm_stride])).collect();
            let spread = self.ints.attr(Attr::Array(spread.into()));
            self.prop("spread", spread);
        }
    }

    /// The op state: operands (buffers, then the semaphores waited for, then those signalled) and properties.
    fn take(mut self, name: &str, sync: &Sync, loc: Loc) -> OpState {
        self.str("queue", &sync.queue);
        let waits: Vec<i64> = sync.waits.iter().map(|w| w.1 as i64).collect();
        let signals: Vec<i64> = sync.signals.iter().map(|s| s.1 as i64).collect();
        self.ints("waits", &waits);
        self.ints("signals", &signals);
        self.operands.extend(sync.waits.iter().chain(&sync.signals).map(|s| s.0));
        let mut state = OpState::new(self.ints, name, loc).operands(&self.operands);
        for (key, value) in self.props {
            state = state.prop(self.ints, &key, value);
        }
        state
    }
}
