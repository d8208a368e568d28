//! `teg.reshard`: moves a tensor between shardings. Its operands are pieces of one tensor, each at its offset of
//! the whole tensor (`from`); its result is the box at offset `at`, with the declared extents. Operands holding the
//! same box are partial results, combined with the `combine` monoid. `teg-shard` places one wherever a consumer
//! shard needs cells its producer's shards hold elsewhere (or in partial form); the devices of the operands'
//! producers and of the reshard (`teg.devices`) give its transfer table (`crate::shard::transfers`), which
//! `teg-print-transfers` prints.

use super::attrs::Attrs;
use super::maps::{numbered, Maps, Row};
use super::syntax::{attr, optional, value_op, with};
use super::{Entry, OpFamily, OpKind};
use crate::array::Array;
use crate::dialects::teg::eval::{reshard, Args, EvalError};
use crate::dialects::teg::tensor_type::TensorType;
use crate::interfaces::sharding::{IndexMaps, Monoid, Piece};
use crate::ir::{Arity, AttrKind};
use crate::zspace::ZRange;

/// A reshard: where each operand and the result sit in the whole tensor, and how partial results combine.
#[derive(Clone, Debug, PartialEq)]
pub struct Reshard {
    /// Each operand's offset in the whole tensor.
    pub from: Vec<Vec<i64>>,
    /// The result's offset in the whole tensor.
    pub at: Vec<i64>,
    /// The monoid combining operands that hold the same box.
    pub combine: Option<Monoid>,
}

/// The op.
pub const OPS: &[Entry] = &[with(
    value_op(
        "teg.reshard",
        "the box at offset `at` of a tensor, from pieces at offsets `from` (equal boxes combined by `combine`)",
        Arity::AtLeast(1),
        &[attr("from", AttrKind::Array), attr("at", AttrKind::Array), optional("combine", AttrKind::Any)],
        "$operands `from` $from `to` $at (`combine` $combine^)? attr-dict `:` type($operands) (`->` type($results)^)?",
    ),
    decode,
)];

fn decode(a: &Attrs) -> Result<OpKind, String> {
    let combine = match a.optional_string("combine")? {
        None => None,
        Some(name) => match Monoid::from_name(&name) {
            Some(Monoid::Mean) | None => {
                return Err(format!("cannot combine partial results with '{name}' (sum, prod, max, min)"))
            }
            m => m,
        },
    };
    Ok(OpKind::Reshard(Reshard { from: a.int_lists("from")?, at: a.ints("at")?, combine }))
}

impl OpFamily for Reshard {
    /// The declared type, once every operand has its dimensions and element type, and every offset one
    /// non-negative coordinate per dimension with the box it starts inside `i64`.
    fn result_type(&self, operands: &[&TensorType], declared: &TensorType) -> Result<TensorType, String> {
        if self.from.len() != operands.len() {
            return Err(format!("{} operands but {} offsets in 'from'", operands.len(), self.from.len()));
        }
        let boxes = operands.iter().zip(&self.from).chain(std::iter::once((&declared, &self.at)));
        for (t, offset) in boxes {
            let names = t.dims.iter().map(|d| &d.0);
            if !names.eq(declared.dims.iter().map(|d| &d.0)) || t.dtype != declared.dtype {
                return Err(format!("the pieces of a reshard differ: {t} and {declared}"));
            }
            if offset.len() != t.dims.len() {
                return Err(format!(
                    "offset {offset:?} has {} coordinates, {t} has {} dimensions",
                    offset.len(),
                    t.dims.len()
                ));
            }
            let fits = offset.iter().zip(&t.dims).all(|(&o, d)| o >= 0 && o.checked_add(d.1 as i64).is_some());
            if !fits {
                return Err(format!("offset {offset:?} of {t} is negative or past i64"));
            }
        }
        Ok(declared.clone())
    }

    fn infers(&self) -> bool {
        false
    }

    /// Over the result's cells: each operand is read, shifted by its offset, where its box meets the result's.
    fn index_maps(&self, operands: &[&TensorType], result: Option<&TensorType>) -> Option<IndexMaps> {
        let result = result?;
        let rank = result.dims.len();
        let fits = |t: &TensorType, o: &[i64]| t.dims.len() == rank && o.len() == rank;
        if self.from.len() != operands.len()
            || !fits(result, &self.at)
            || operands.iter().zip(&self.from).any(|(t, o)| !fits(t, o))
        {
            return None;
        }
        let mut m = Maps::over(result.dims.clone());
        let out = m.ipf(m.by_name(result));
        for ((t, offset), name) in operands.iter().zip(&self.from).zip(numbered(operands.len())) {
            let rows =
                (0..t.dims.len()).map(|k| Row { terms: vec![(k, 1)], offset: self.at[k] - offset[k], extent: 1 });
            let lo: Vec<i64> = (0..t.dims.len()).map(|k| (offset[k] - self.at[k]).max(0)).collect();
            let hi: Vec<i64> = (0..t.dims.len())
                .map(|k| (offset[k] + t.dims[k].1 as i64 - self.at[k]).min(result.dims[k].1 as i64).max(lo[k]))
                .collect();
            let domain = ZRange::new(lo, hi).ok()?;
            m.inputs.push((name, vec![Piece { domain, ipf: m.ipf(rows.collect()), affine: true }]));
        }
        Some(m.done(vec![("result".into(), out)], Vec::new()))
    }

    fn eval(&self, a: &Args) -> Result<Array, EvalError> {
        let dense = a.dense_all()?;
        let arrays: Vec<&Array> = dense.iter().map(|d| &**d).collect();
        reshard::apply(&arrays, &self.from, &self.at, a.shape, self.combine)
    }
}
