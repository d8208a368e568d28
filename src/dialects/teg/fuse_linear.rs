//! The fusion back of a matmul and a bias add into `teg.linear` (the pattern `teg-fuse-linear` applies; the
//! inverse of the expansion `teg-shard` applies to a linear whose summed dimension is split).

use super::ops::{decode, Contraction, OpKind};
use super::patterns::producer;
use super::shard_plan::SHARD_ATTR;
use super::tensor_type::as_tensor;
use crate::ir::builder::OpState;
use crate::ir::rewrite::{RewritePattern, Rewriter};
use crate::ir::{OpId, ValueId};

/// `add(matmul(x, w), b)` with `b` over the matmul's output dimension alone → `linear(x, w, b)`, the whitepaper's
/// fusion back, when the matmul is used once and its plan does not split the summed dimension (a split sum would
/// add the bias once per shard). Not a canonicalization: `teg-fuse-linear` applies it. The fused op adds the bias
/// first, so floats may differ in their last bits.
pub struct FuseLinear;

impl RewritePattern for FuseLinear {
    fn name(&self) -> &'static str {
        "FuseLinear"
    }

    fn root(&self) -> Option<&'static str> {
        Some("teg.add")
    }

    fn match_and_rewrite(&self, op: OpId, rw: &mut Rewriter<'_>) -> bool {
        let (a, b) = (rw.body.operand(op, 0), rw.body.operand(op, 1));
        let Some((product, bias)) = [(a, b), (b, a)].into_iter().find(|&(p, c)| fusable(rw, p, c)) else {
            return false;
        };
        let matmul = producer(rw, product).expect("checked");
        let (x, w) = (rw.body.operand(matmul, 0), rw.body.operand(matmul, 1));
        let ty = rw.body.value_type(product);
        let loc = rw.body.op(op).loc;
        let attrs = rw.body.op(matmul).attrs;
        let mut state = OpState::new(rw.interners(), "teg.linear", loc).operands(&[x, w, bias]).results(&[ty]);
        state.attrs = rw.dict_entries(attrs).to_vec();
        let value = rw.create_value(state);
        rw.replace_op(op, &[value]);
        true
    }
}

/// Whether `product` is a matmul's single-use result that `bias` (over its last dimension alone, same element
/// type) can be fused into, the matmul's plan leaving its summed dimension whole.
fn fusable(rw: &Rewriter<'_>, product: ValueId, bias: ValueId) -> bool {
    let Some(matmul) = producer(rw, product) else { return false };
    if !matches!(decode(rw, matmul), Ok(OpKind::Contraction(Contraction::Matmul))) {
        return false;
    }
    if rw.body.uses(product).count() != 1 {
        return false;
    }
    let (Some(p), Some(c), Some(x)) = (
        as_tensor(rw, rw.body.value_type(product)),
        as_tensor(rw, rw.body.value_type(bias)),
        as_tensor(rw, rw.body.value_type(rw.body.operand(matmul, 0))),
    ) else {
        return false;
    };
    let (Some(out), Some(summed)) = (p.dims.last(), x.dims.last()) else { return false };
    let plan = rw.op_attr(matmul, SHARD_ATTR);
    let split = plan.is_some_and(|d| rw.dict_get(d, &summed.0).is_some());
    c.dims.len() == 1 && c.dims[0] == *out && c.dtype == p.dtype && !split
}
