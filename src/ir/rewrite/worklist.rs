//! A LIFO worklist of ops without duplicates, shared by the rewrite drivers.

use crate::ir::body::OpId;
use crate::ir::entity::EntityId;

/// Ops waiting to be visited; an op already queued is not queued twice.
#[derive(Default)]
pub(crate) struct Worklist {
    stack: Vec<OpId>,
    queued: Vec<bool>,
}

impl Worklist {
    /// Queues `op` unless it is queued already.
    pub(crate) fn push(&mut self, op: OpId) {
        let i = op.index();
        if i >= self.queued.len() {
            self.queued.resize(i + 1, false);
        }
        if !self.queued[i] {
            self.queued[i] = true;
            self.stack.push(op);
        }
    }

    /// Queues `ops` so that they pop in the order given.
    pub(crate) fn push_in_order(&mut self, ops: &[OpId]) {
        ops.iter().rev().for_each(|&op| self.push(op));
    }

    /// The most recently queued op.
    pub(crate) fn pop(&mut self) -> Option<OpId> {
        let op = self.stack.pop()?;
        self.queued[op.index()] = false;
        Some(op)
    }
}
