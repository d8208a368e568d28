//! The index maps of every teg op (the sharding interface's `index_maps`): which cells of each operand an op
//! reads to compute a box of its result. The index space is the result's dimensions (plus the reduced ones for a
//! reduction, a lane or copy dimension for interleave and repeat), and operands are read by dimension name:
//! cell ops elementwise (an extent-1 or missing dimension broadcast), views through their coordinate maps (a
//! slice by its step, a reverse by -1, concat and constant pads piecewise, reflect and wrap pads with their border
//! marked not affine), generators read nothing, block operators through their signatures.

use super::infer::select_index;
use super::kind::{OpKind, PadMode};
use super::tensor_type::TensorType;
use crate::interfaces::sharding::{IndexMaps, Piece};
use crate::zspace::{Ipf, ZAffineMap, ZRange};

/// One row of an IPF: `Σ coef·index[dim] + offset`, selecting `extent` cells.
#[derive(Clone)]
struct Row {
    terms: Vec<(usize, i64)>,
    offset: i64,
    extent: u64,
}

impl Row {
    fn unit(dim: usize) -> Row {
        Row { terms: vec![(dim, 1)], offset: 0, extent: 1 }
    }

    fn fixed(offset: i64, extent: u64) -> Row {
        Row { terms: Vec::new(), offset, extent }
    }
}

/// An index space under construction, with the pieces of each operand.
struct Maps {
    index: Vec<(String, u64)>,
    inputs: Vec<(String, Vec<Piece>)>,
}

impl Maps {
    fn over(index: Vec<(String, u64)>) -> Maps {
        Maps { index, inputs: Vec::new() }
    }

    fn pos(&self, name: &str) -> Option<usize> {
        self.index.iter().position(|d| d.0 == name)
    }

    fn ipf(&self, rows: Vec<Row>) -> Ipf {
        let rank = self.index.len();
        let matrix = rows
            .iter()
            .map(|r| (0..rank).map(|i| r.terms.iter().filter(|t| t.0 == i).map(|t| t.1).sum()).collect())
            .collect();
        let offset = rows.iter().map(|r| r.offset).collect();
        let map = ZAffineMap::new(rank, matrix, offset).expect("rows of the index rank");
        Ipf::new(map, rows.iter().map(|r| r.extent).collect()).expect("one extent per row")
    }

    /// The rows reading `t` by dimension name: a dimension of the index space with the same extent moves with
    /// it, an extent-1 dimension stays at 0 (broadcast, or dropped from the result).
    fn by_name(&self, t: &TensorType) -> Vec<Row> {
        t.dims
            .iter()
            .map(|(name, extent)| match self.pos(name) {
                Some(i) if self.index[i].1 == *extent || *extent != 1 => Row::unit(i),
                _ => Row::fixed(0, 1),
            })
            .collect()
    }

    /// Operand `name` read through `rows` over the whole index space.
    fn read(&mut self, name: &str, rows: Vec<Row>) {
        let piece = Piece { domain: self.whole(), ipf: self.ipf(rows), affine: true };
        self.inputs.push((name.to_string(), vec![piece]));
    }

    fn whole(&self) -> ZRange {
        ZRange::of_shape(&self.index.iter().map(|d| d.1).collect::<Vec<_>>())
    }

    /// The index space with dimension `dim` cut to `[from, to)`.
    fn part(&self, dim: usize, from: i64, to: i64) -> ZRange {
        let whole = self.whole();
        let (mut start, mut end) = (whole.start().to_vec(), whole.end().to_vec());
        (start[dim], end[dim]) = (from, to.max(from));
        ZRange::new(start, end).expect("a part of the index space")
    }

    fn done(self, outputs: Vec<(String, Ipf)>, reductions: Vec<(usize, super::kind::Monoid)>) -> IndexMaps {
        IndexMaps { index: self.index, inputs: self.inputs, outputs, reductions }
    }
}

/// The names operands go by in an op's maps.
fn operand_names(kind: &OpKind, count: usize) -> Vec<String> {
    let fixed: &[&str] = match kind {
        OpKind::Binary(_) | OpKind::Compare(_) => &["a", "b"],
        OpKind::Where => &["cond", "a", "b"],
        OpKind::Reduce { .. } => &["x", "mask"],
        OpKind::Concat { .. } | OpKind::Interleave { .. } => &[],
        _ => &["x"],
    };
    (0..count).map(|i| fixed.get(i).map_or_else(|| format!("x{i}"), |n| n.to_string())).collect()
}

/// The maps of a teg op that is not a block operator (those use their signatures), given its operand types and
/// its result type (`None` for a sink); `None` for ops without tensors (sequence points, yields).
pub fn of_op(kind: &OpKind, operands: &[&TensorType], result: Option<&TensorType>) -> Option<IndexMaps> {
    let names = operand_names(kind, operands.len());
    let Some(result) = result else {
        // A sink makes its operand observable outside, cell by cell.
        let mut m = Maps::over(operands.first()?.dims.clone());
        m.read(&names[0], m.by_name(operands[0]));
        let observed = m.ipf(m.by_name(operands[0]));
        return Some(m.done(vec![("observed".into(), observed)], Vec::new()));
    };
    let mut m = Maps::over(result.dims.clone());
    let mut reductions = Vec::new();
    let mut out = m.ipf(m.by_name(result));
    match kind {
        OpKind::Reverse { dims } => {
            let x = operands[0];
            let rows: Vec<Row> = (x.dims.iter().zip(m.by_name(x)))
                .map(|((name, n), row)| match (dims.contains(name), m.pos(name)) {
                    (true, Some(i)) => Row { terms: vec![(i, -1)], offset: *n as i64 - 1, extent: 1 },
                    _ => row,
                })
                .collect();
            m.read(&names[0], rows);
        }
        OpKind::Slice { dim, start, step, .. } => {
            let i = m.pos(dim)?;
            let x = operands[0];
            let mut rows = m.by_name(x);
            rows[x.position(dim)?] = Row { terms: vec![(i, *step)], offset: *start, extent: 1 };
            m.read(&names[0], rows);
        }
        OpKind::Select { dim, index } => {
            let x = operands[0];
            let k = x.position(dim)?;
            let at = select_index(*index, x.dims[k].1, dim).ok()? as i64;
            let mut rows = m.by_name(x);
            rows[k] = Row::fixed(at, 1);
            m.read(&names[0], rows);
        }
        OpKind::Reduce { dims, monoid, .. } => {
            let x = operands[0];
            for (name, extent) in x.dims.iter().filter(|d| dims.contains(&d.0)) {
                reductions.push((m.index.len(), *monoid));
                m.index.push((name.clone(), *extent));
            }
            out = m.ipf(m.by_name(result));
            for (t, name) in operands.iter().zip(&names) {
                m.read(name, m.by_name(t));
            }
        }
        OpKind::Concat { dim } => {
            let i = m.pos(dim)?;
            let mut at = 0i64;
            for (t, name) in operands.iter().zip(&names) {
                let n = t.dims[t.position(dim)?].1 as i64;
                let mut rows = m.by_name(t);
                rows[t.position(dim)?] = Row { terms: vec![(i, 1)], offset: -at, extent: 1 };
                let piece = Piece { domain: m.part(i, at, at + n), ipf: m.ipf(rows), affine: true };
                m.inputs.push((name.clone(), vec![piece]));
                at += n;
            }
        }
        OpKind::Interleave { dim } | OpKind::Repeat { dim, .. } => {
            // The dimension splits into an outer one, each operand's own, and an inner lane (interleave: which
            // operand) or copy (repeat: which repetition) dimension.
            let i = m.pos(dim)?;
            let x = operands[0];
            let n = x.dims[x.position(dim)?].1;
            let k = result.dims[i].1.checked_div(n).unwrap_or(0);
            m.index[i].1 = n;
            let lane = m.index.len();
            let interleave = matches!(kind, OpKind::Interleave { .. });
            m.index.push((format!("{dim}.{}", if interleave { "lane" } else { "copy" }), k));
            let mut rows = m.by_name(result);
            rows[i] = match interleave {
                true => Row { terms: vec![(i, k as i64), (lane, 1)], offset: 0, extent: 1 },
                false => Row { terms: vec![(i, 1), (lane, n as i64)], offset: 0, extent: 1 },
            };
            out = m.ipf(rows);
            for (j, (t, name)) in operands.iter().zip(&names).enumerate() {
                let domain = if interleave { m.part(lane, j as i64, j as i64 + 1) } else { m.whole() };
                let piece = Piece { domain, ipf: m.ipf(m.by_name(t)), affine: true };
                m.inputs.push((name.clone(), vec![piece]));
            }
        }
        OpKind::Pad { dim, low, mode, .. } => {
            let (x, i) = (operands[0], m.pos(dim)?);
            let (k, n) = (x.position(dim)?, x.dims[x.position(dim)?].1 as i64);
            let mut rows = m.by_name(x);
            rows[k] = Row { terms: vec![(i, 1)], offset: -low, extent: 1 };
            let mut pieces = vec![Piece { domain: m.part(i, *low, low + n), ipf: m.ipf(rows), affine: true }];
            if *mode != PadMode::Constant {
                // The border copies cells from anywhere in the dimension: its box is the whole dimension.
                let mut rows = m.by_name(x);
                rows[k] = Row::fixed(0, n as u64);
                let total = result.dims[i].1 as i64;
                for domain in [m.part(i, 0, *low), m.part(i, low + n, total)] {
                    pieces.push(Piece { domain, ipf: m.ipf(rows.clone()), affine: false });
                }
            }
            m.inputs.push((names[0].clone(), pieces));
        }
        OpKind::Zeros
        | OpKind::Ones
        | OpKind::Full(_)
        | OpKind::Iota { .. }
        | OpKind::Random { .. }
        | OpKind::Index => {}
        OpKind::Source { .. } => {}
        OpKind::Block { .. } | OpKind::Yield | OpKind::Sink { .. } | OpKind::SequencePoint => return None,
        OpKind::Matmul | OpKind::Linear | OpKind::Prod | OpKind::Contract | OpKind::Conv2d { .. } => return None,
        // Cell ops, permute, squeeze, unsqueeze and broadcasts: every operand by name.
        _ => {
            for (t, name) in operands.iter().zip(&names) {
                m.read(name, m.by_name(t));
            }
        }
    }
    Some(m.done(vec![("result".into(), out)], reductions))
}
