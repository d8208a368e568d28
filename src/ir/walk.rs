//! Walks over nested IR: every op under an op, in pre-order (parents before children) or post-order.

use super::body::{Body, OpId};

/// Every op nested under `root` (excluding `root`), parents before children, in textual order.
pub fn preorder(body: &Body, root: OpId) -> Vec<OpId> {
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(op) = stack.pop() {
        if op != root {
            out.push(op);
        }
        let mut children = Vec::new();
        for &r in body.regions(op) {
            for &b in &body.region(r).blocks {
                children.extend(body.block_ops(b));
            }
        }
        stack.extend(children.into_iter().rev());
    }
    out
}

/// Every op nested under `root` (excluding `root`), children before parents.
pub fn postorder(body: &Body, root: OpId) -> Vec<OpId> {
    let mut out = Vec::new();
    let mut stack = vec![(root, false)];
    while let Some((op, expanded)) = stack.pop() {
        if expanded {
            if op != root {
                out.push(op);
            }
            continue;
        }
        stack.push((op, true));
        let mut children = Vec::new();
        for &r in body.regions(op) {
            for &b in &body.region(r).blocks {
                children.extend(body.block_ops(b));
            }
        }
        stack.extend(children.into_iter().rev().map(|c| (c, false)));
    }
    out
}

/// Nesting depth of `op`: 0 for a detached or top-level op.
pub fn depth(body: &Body, op: OpId) -> usize {
    let mut d = 0;
    let mut cur = op;
    while let Some(parent) = body.parent_op(cur) {
        d += 1;
        cur = parent;
    }
    d
}
