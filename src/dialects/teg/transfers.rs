//! The transfer table of a `teg.reshard` op: its operands' boxes and devices, its own box and devices, and the
//! moves between them (`crate::shard::transfers`). An op's devices are its `teg.devices` ranks; a value without
//! them (a source, an op `teg-shard` did not split, or a whole value reassembled for such ops) is on every device.

use super::ops::{decode, OpKind};
use super::tensor_type::as_tensor;
use crate::ir::body::ValueDef;
use crate::ir::{Attr, Context, OpId, ValueId};
use crate::machine::Mesh;
use crate::shard::transfers::{classify, table, Kind, Move, Piece, Reshard};
use crate::zspace::ZRange;

/// The attribute listing the mesh ranks that compute an op (or hold a value).
pub const DEVICES_ATTR: &str = "teg.devices";

/// A reshard op's pieces and moves.
pub struct Table {
    /// The operands' boxes and holders.
    pub sources: Vec<Piece>,
    /// The result's box and the devices that want it.
    pub target: Piece,
    /// Who sends what to whom.
    pub moves: Vec<Move>,
    /// Whether operands holding the same box are partial results it combines.
    pub partial: bool,
}

impl Table {
    /// The table as one reshard of an edge (for [`classify`]).
    pub fn as_reshard(&self) -> Reshard<'_> {
        Reshard { sources: &self.sources, target: &self.target, moves: &self.moves, partial: self.partial }
    }

    /// What the table amounts to, alone.
    pub fn kind(&self) -> Kind {
        classify(&[self.as_reshard()])
    }

    /// The bytes it moves.
    pub fn bytes(&self) -> u64 {
        self.moves.iter().fold(0u64, |n, m| n.saturating_add(m.bytes))
    }
}

/// The table of `op` on `mesh`; `None` when `op` is not a well-formed `teg.reshard`, an error past the table's
/// size limit or for `teg.devices` that are not ranks of the mesh.
pub fn table_of(ctx: &Context, op: OpId, mesh: &Mesh) -> Option<Result<Table, String>> {
    let Ok(OpKind::Reshard(super::ops::Reshard { from, at, combine })) = decode(ctx, op) else { return None };
    let result = ctx.body.results(op).next()?;
    let out = as_tensor(ctx, ctx.body.value_type(result))?;
    let mut sources = Vec::new();
    for (k, (v, offset)) in ctx.body.operands(op).zip(&from).enumerate() {
        let t = as_tensor(ctx, ctx.body.value_type(v))?;
        let devices = match holders(ctx, v, mesh) {
            Ok(d) => d,
            Err(m) => return Some(Err(format!("the producer of operand {k}: {m}"))),
        };
        sources.push(Piece { region: region(offset, &t.dims)?, devices });
    }
    let devices = match devices_or_all(ctx, Some(op), mesh) {
        Ok(d) => d,
        Err(m) => return Some(Err(m)),
    };
    let target = Piece { region: region(&at, &out.dims)?, devices };
    let bytes = out.dtype.size() as u64;
    // Partial only when two pieces hold one box (a single piece of a split sum has nothing to combine).
    let mut boxes: Vec<(&[i64], &[i64])> = sources.iter().map(|s| (s.region.start(), s.region.end())).collect();
    boxes.sort_unstable();
    let partial = combine.is_some() && boxes.windows(2).any(|w| w[0] == w[1]);
    Some(table(mesh, &sources, &target, bytes).map(|moves| Table { sources, target, moves, partial }))
}

/// The box at `offset` with the extents of `dims`.
fn region(offset: &[i64], dims: &[(String, u64)]) -> Option<ZRange> {
    let end = offset.iter().zip(dims).map(|(&o, d)| o.checked_add(d.1 as i64)).collect::<Option<Vec<_>>>()?;
    ZRange::new(offset.to_vec(), end).ok()
}

/// The devices holding `v`: its defining op's.
fn holders(ctx: &Context, v: ValueId, mesh: &Mesh) -> Result<Vec<usize>, String> {
    let op = match ctx.body.value_def(v) {
        ValueDef::Result { op, .. } => Some(op),
        _ => None,
    };
    devices_or_all(ctx, op, mesh)
}

/// `op`'s `teg.devices` ranks, or every rank of `mesh` when it has none (or there is no op).
pub fn devices_or_all(ctx: &Context, op: Option<OpId>, mesh: &Mesh) -> Result<Vec<usize>, String> {
    match op.and_then(|op| devices_of(ctx, op, mesh.num_devices())) {
        Some(ranks) => ranks,
        None => Ok((0..mesh.num_devices()).collect()),
    }
}

/// `op`'s `teg.devices` ranks, if it has the attribute: an error unless it is a non-empty list of distinct ranks
/// below `devices`.
pub fn devices_of(ctx: &Context, op: OpId, devices: usize) -> Option<Result<Vec<usize>, String>> {
    let attr = ctx.op_attr(op, DEVICES_ATTR)?;
    let bad = || format!("{DEVICES_ATTR} must list distinct ranks of the {devices}-device mesh");
    let Attr::Array(items) = ctx.attr_data(attr) else { return Some(Err(bad())) };
    // Integers only (not `true`, an `i1`).
    let rank = |a: &Attr| match a {
        Attr::Int { value, ty } if ctx.type_kind(*ty).int_width() != Some(1) => usize::try_from(*value).ok(),
        _ => None,
    };
    let ranks: Option<Vec<usize>> = items.iter().map(|&i| rank(ctx.attr_data(i)).filter(|&r| r < devices)).collect();
    let Some(ranks) = ranks.filter(|r| !r.is_empty()) else { return Some(Err(bad())) };
    let mut sorted = ranks.clone();
    sorted.sort_unstable();
    sorted.dedup();
    Some(if sorted.len() == ranks.len() { Ok(ranks) } else { Err(bad()) })
}
