//! What a conversion must reach: for each op (by name, else by dialect) whether it may stay (legal), must go
//! (illegal), may stay if a predicate says so (dynamic), or may stay once all its types are legal.

use super::type_converter::TypeConverter;
use crate::ir::interner::FxHashMap;
use crate::ir::registry::dialect_of;
use crate::ir::{Context, OpId};

/// A predicate deciding an op's legality from the IR.
pub type LegalityFn = Box<dyn Fn(&Context, OpId) -> bool + Send + Sync>;

/// Whether an op may stay after the conversion.
pub enum Legality {
    /// It may stay.
    Legal,
    /// It must be rewritten.
    Illegal,
    /// It may stay if the predicate says so.
    Dynamic(LegalityFn),
    /// It may stay if the type converter leaves every type it uses unchanged: operands, results, the arguments
    /// of its regions' entry blocks and the function types among its properties (MLIR's `isSignatureLegal` and
    /// `isLegal(op)` together).
    TypesLegal,
}

impl std::fmt::Debug for Legality {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Legality::Legal => "Legal",
            Legality::Illegal => "Illegal",
            Legality::Dynamic(_) => "Dynamic",
            Legality::TypesLegal => "TypesLegal",
        })
    }
}

/// What the converted IR may contain.
#[derive(Debug, Default)]
pub struct ConversionTarget {
    ops: FxHashMap<String, Legality>,
    dialects: FxHashMap<String, Legality>,
}

impl ConversionTarget {
    /// A target with nothing declared.
    pub fn new() -> Self {
        Self::default()
    }

    /// Declares the legality of one op.
    pub fn op(mut self, name: &str, legality: Legality) -> Self {
        self.ops.insert(name.to_string(), legality);
        self
    }

    /// Declares the legality of every op of a dialect (an op's own declaration wins).
    pub fn dialect(mut self, name: &str, legality: Legality) -> Self {
        self.dialects.insert(name.to_string(), legality);
        self
    }

    /// An op that may stay if `legal` says so.
    pub fn dynamic_op(self, name: &str, legal: impl Fn(&Context, OpId) -> bool + Send + Sync + 'static) -> Self {
        self.op(name, Legality::Dynamic(Box::new(legal)))
    }

    fn declared(&self, ctx: &Context, op: OpId) -> Option<&Legality> {
        let name = ctx.op_name(op);
        self.ops.get(name).or_else(|| self.dialects.get(dialect_of(name)))
    }

    /// `Some(true)` legal, `Some(false)` illegal, `None` undeclared.
    pub fn is_legal(&self, ctx: &mut Context, op: OpId, types: &TypeConverter) -> Option<bool> {
        Some(match self.declared(ctx, op)? {
            Legality::Legal => true,
            Legality::Illegal => false,
            Legality::Dynamic(f) => f(ctx, op),
            Legality::TypesLegal => types.op_types_legal(ctx, op),
        })
    }

    /// True if the op was declared illegal outright (the failure message says so).
    pub fn explicitly_illegal(&self, ctx: &Context, op: OpId) -> bool {
        matches!(self.declared(ctx, op), Some(Legality::Illegal))
    }
}
