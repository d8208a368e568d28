//! A builder of index maps (the sharding interface's `index_maps`), which the families use to say which cells of
//! each operand an op reads for a box of its result. The index space starts as the result's dimensions (a family
//! adds the reduced ones, or a lane dimension), and operands are read by dimension name unless a family gives
//! rows of its own (a slice by its step, a reverse by -1, pieces for concat and pads).

use super::Monoid;
use crate::dialects::teg::tensor_type::TensorType;
use crate::interfaces::sharding::{IndexMaps, Piece};
use crate::zspace::{Ipf, ZAffineMap, ZRange};

/// One row of an IPF: `Σ coef·index[dim] + offset`, selecting `extent` cells.
#[derive(Clone)]
pub struct Row {
    /// `(index dimension, coefficient)` terms.
    pub terms: Vec<(usize, i64)>,
    /// The constant.
    pub offset: i64,
    /// The cells selected.
    pub extent: u64,
}

impl Row {
    /// Index dimension `dim`, one cell.
    pub fn unit(dim: usize) -> Row {
        Row { terms: vec![(dim, 1)], offset: 0, extent: 1 }
    }

    /// Always `offset`, `extent` cells.
    pub fn fixed(offset: i64, extent: u64) -> Row {
        Row { terms: Vec::new(), offset, extent }
    }
}

/// An index space under construction, with the pieces of each operand.
pub struct Maps {
    /// The index space.
    pub index: Vec<(String, u64)>,
    /// Each operand's pieces so far.
    pub inputs: Vec<(String, Vec<Piece>)>,
}

impl Maps {
    /// An index space of these dimensions, no operand read yet.
    pub fn over(index: Vec<(String, u64)>) -> Maps {
        Maps { index, inputs: Vec::new() }
    }

    /// The position of index dimension `name`.
    pub fn pos(&self, name: &str) -> Option<usize> {
        self.index.iter().position(|d| d.0 == name)
    }

    /// The IPF of `rows` over the index space.
    pub fn ipf(&self, rows: Vec<Row>) -> Ipf {
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
    pub fn by_name(&self, t: &TensorType) -> Vec<Row> {
        t.dims
            .iter()
            .map(|(name, extent)| match self.pos(name) {
                Some(i) if self.index[i].1 == *extent || *extent != 1 => Row::unit(i),
                _ => Row::fixed(0, 1),
            })
            .collect()
    }

    /// Operand `name` read through `rows` over the whole index space.
    pub fn read(&mut self, name: &str, rows: Vec<Row>) {
        let piece = Piece { domain: self.whole(), ipf: self.ipf(rows), affine: true };
        self.inputs.push((name.to_string(), vec![piece]));
    }

    /// The whole index space.
    pub fn whole(&self) -> ZRange {
        ZRange::of_shape(&self.index.iter().map(|d| d.1).collect::<Vec<_>>())
    }

    /// The index space with dimension `dim` cut to `[from, to)`.
    pub fn part(&self, dim: usize, from: i64, to: i64) -> ZRange {
        let whole = self.whole();
        let (mut start, mut end) = (whole.start().to_vec(), whole.end().to_vec());
        (start[dim], end[dim]) = (from, to.max(from));
        ZRange::new(start, end).expect("a part of the index space")
    }

    /// The maps, with these outputs and reductions.
    pub fn done(self, outputs: Vec<(String, Ipf)>, reductions: Vec<(usize, Monoid)>) -> IndexMaps {
        IndexMaps { index: self.index, inputs: self.inputs, outputs, reductions }
    }
}

/// The maps of an op over the result's index space that reads each operand (named `names`) by dimension name and
/// writes its result cell by cell: cell ops, and views that only rename or broadcast.
pub fn by_name(names: &[&str], operands: &[&TensorType], result: &TensorType) -> IndexMaps {
    let mut m = Maps::over(result.dims.clone());
    for (t, name) in operands.iter().zip(names) {
        m.read(name, m.by_name(t));
    }
    let out = m.ipf(m.by_name(result));
    m.done(vec![("result".into(), out)], Vec::new())
}

/// The name of operand `i` of an op of several like operands (concat, interleave): `x0`, `x1`, ...
pub fn numbered(count: usize) -> Vec<String> {
    (0..count).map(|i| format!("x{i}")).collect()
}
