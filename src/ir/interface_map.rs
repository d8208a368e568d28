//! Where interface implementations live: a table from (op, interface) and from (payload type, interface) to a
//! `&'static` implementation, type-erased so that the core stores implementations of interfaces it does not
//! know. The interfaces themselves are traits in `crate::interfaces`; dialects attach implementations to their own
//! ops and payloads when they register, and any module may attach one to another dialect's op (MLIR's external
//! models).

use super::interner::FxHashMap;
use std::any::{Any, TypeId};

/// Interface implementations by op and by payload type.
#[derive(Default)]
pub struct InterfaceMap {
    ops: FxHashMap<(usize, TypeId), Box<dyn Any + Send + Sync>>,
    payloads: FxHashMap<(TypeId, TypeId), Box<dyn Any + Send + Sync>>,
}

impl std::fmt::Debug for InterfaceMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "InterfaceMap({} op, {} payload implementations)", self.ops.len(), self.payloads.len())
    }
}

impl InterfaceMap {
    /// Attaches `imp` as interface `I` of the op registered at `op` (replacing an earlier one).
    pub fn attach_op<I: ?Sized + Sync + 'static>(&mut self, op: usize, imp: &'static I) {
        self.ops.insert((op, TypeId::of::<I>()), Box::new(imp));
    }

    /// Attaches `imp` as interface `I` of dialect payloads (types, attributes) of Rust type `P`.
    pub fn attach_payload<P: Any, I: ?Sized + Sync + 'static>(&mut self, imp: &'static I) {
        self.payloads.insert((TypeId::of::<P>(), TypeId::of::<I>()), Box::new(imp));
    }

    /// Interface `I` of the op registered at `op`.
    pub fn op<I: ?Sized + Sync + 'static>(&self, op: usize) -> Option<&'static I> {
        self.ops.get(&(op, TypeId::of::<I>()))?.downcast_ref::<&'static I>().copied()
    }

    /// Interface `I` of a payload (`payload.as_any()` of a dialect type or attribute).
    pub fn payload<I: ?Sized + Sync + 'static>(&self, payload: &dyn Any) -> Option<&'static I> {
        self.payloads.get(&(payload.type_id(), TypeId::of::<I>()))?.downcast_ref::<&'static I>().copied()
    }
}
