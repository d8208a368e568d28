//! Typed op handles: `define_op!` gives an op kind a `Copy` wrapper around its [`OpId`] with named accessors
//! for its operands, results and attributes and a builder, so rewrites match and build ops without spelling
//! names, positions and attribute keys at each use.

use super::body::OpId;
use super::Context;

/// A typed handle on an op of one kind.
pub trait Op: Copy {
    /// The op name, `dialect.op`.
    const NAME: &'static str;
    /// Wraps an id without checking its kind (use [`Op::cast`]).
    fn wrap(op: OpId) -> Self;
    /// The op.
    fn id(self) -> OpId;
    /// `op` as this kind, if it is one (compares the op's resolved registration, not its name's text).
    fn cast(ctx: &Context, op: OpId) -> Option<Self> {
        let name = match ctx.registered(op) {
            Some(reg) => reg.info.name,
            None => ctx.op_name(op),
        };
        (name == Self::NAME && !ctx.body.is_erased(op)).then(|| Self::wrap(op))
    }
}

/// Defines a typed op handle:
///
/// ```ignore
/// define_op! {
///     /// `arith.addi`.
///     pub struct AddIOp = "arith.addi";
///     operands { lhs: 0, rhs: 1 }
///     results { result: 0 }
///     props { }
/// }
/// ```
///
/// gives `AddIOp(OpId)` implementing [`Op`], accessors `lhs(ctx)`, `rhs(ctx)`, `result(ctx)` (values) and one
/// per property (the attribute, if present), and `AddIOp::build(b, lhs, rhs, result_type)` that creates the op
/// through any [`super::builder::Build`] (a rewriter or an op builder), with declared defaults filled in.
#[macro_export]
macro_rules! define_op {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident = $op:literal;
        operands { $($operand:ident : $oi:literal),* $(,)? }
        results { $($result:ident : $ri:literal),* $(,)? }
        props { $($prop:ident : $key:literal),* $(,)? }
    ) => {
        $(#[$meta])*
        #[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
        $vis struct $name(pub $crate::ir::OpId);

        impl $crate::ir::op::Op for $name {
            const NAME: &'static str = $op;
            fn wrap(op: $crate::ir::OpId) -> Self {
                $name(op)
            }
            fn id(self) -> $crate::ir::OpId {
                self.0
            }
        }

        #[allow(dead_code)]
        impl $name {
            $(
                #[doc = concat!("Operand `", stringify!($operand), "`.")]
                pub fn $operand(self, ctx: &$crate::ir::Context) -> $crate::ir::ValueId {
                    ctx.body.operand(self.0, $oi)
                }
            )*
            $(
                #[doc = concat!("Result `", stringify!($result), "`.")]
                pub fn $result(self, ctx: &$crate::ir::Context) -> $crate::ir::ValueId {
                    ctx.body.result(self.0, $ri)
                }
            )*
            $(
                #[doc = concat!("Property `", $key, "`, if set.")]
                pub fn $prop(self, ctx: &$crate::ir::Context) -> Option<$crate::ir::AttrId> {
                    ctx.op_attr(self.0, $key)
                }
            )*

            /// Creates the op at the builder's insertion point: operands, then result types, then properties.
            #[allow(clippy::too_many_arguments)]
            pub fn build(
                b: &mut impl $crate::ir::builder::Build,
                $($operand: $crate::ir::ValueId,)*
                $($result: $crate::ir::TypeId,)*
                $($prop: $crate::ir::AttrId,)*
            ) -> Self {
                #[allow(unused_mut)]
                let mut state = $crate::ir::builder::OpState::new(b.interners(), $op, $crate::ir::Loc::Unknown)
                    .operands(&[$($operand),*])
                    .results(&[$($result),*]);
                $(state = state.prop(b.interners(), $key, $prop);)*
                $name(b.insert(state))
            }
        }
    };
}
