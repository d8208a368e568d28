//! Region simplification: erasing blocks that no path of successors reaches from their region's entry (the
//! control-flow clean-up `canonicalize` runs between pattern sweeps, as MLIR's `region-simplify=normal`).

use super::body::{BlockId, Body, OpId, RegionId};
use indexmap::IndexSet;

/// Erases every unreachable block in every multi-block region nested under `root` and returns how many blocks were
/// erased. A block's successors are those of its last op, so this works on unregistered terminators too.
pub fn erase_unreachable_blocks(body: &mut Body, root: OpId) -> usize {
    let mut erased = 0;
    for region in nested_regions(body, root) {
        if body.region(region).blocks.len() > 1 {
            let dead = unreachable_blocks(body, region);
            erased += dead.len();
            body.erase_blocks(region, &dead);
        }
    }
    erased
}

/// The regions of `root` and of every op nested under it.
fn nested_regions(body: &Body, root: OpId) -> Vec<RegionId> {
    std::iter::once(root).chain(super::walk::preorder(body, root)).flat_map(|op| body.regions(op).to_vec()).collect()
}

/// The blocks of `region` not reachable from its entry block, in region order.
fn unreachable_blocks(body: &Body, region: RegionId) -> Vec<BlockId> {
    let blocks = &body.region(region).blocks;
    let mut reached: IndexSet<BlockId> = IndexSet::new();
    let mut stack = vec![blocks[0]];
    while let Some(b) = stack.pop() {
        if reached.insert(b) {
            if let Some(term) = body.last_op(b) {
                stack.extend(body.successors(term).iter().copied());
            }
        }
    }
    blocks.iter().copied().filter(|b| !reached.contains(b)).collect()
}
