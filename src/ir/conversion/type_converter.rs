//! The type converter: rules that say what a type becomes during a conversion: one type, several (a value
//! split into parts, one-to-many) or none. Rules are tried from the most recently added; a type no rule handles
//! stays as it is.

use crate::ir::body::{Body, OpId};
use crate::ir::{Attr, Context, Interners, TypeId, TypeKind};

/// A conversion rule: `Some(types)` if it handles `ty`, `None` to let an earlier rule decide.
pub type TypeRule = Box<dyn Fn(&mut Interners, TypeId) -> Option<Vec<TypeId>> + Send + Sync>;

/// What types become.
#[derive(Default)]
pub struct TypeConverter {
    rules: Vec<TypeRule>,
}

impl std::fmt::Debug for TypeConverter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TypeConverter({} rules)", self.rules.len())
    }
}

impl TypeConverter {
    /// A converter that keeps every type.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a one-to-one rule (tried before the rules added earlier).
    pub fn rule(mut self, f: impl Fn(&mut Interners, TypeId) -> Option<TypeId> + Send + Sync + 'static) -> Self {
        self.rules.push(Box::new(move |ints, ty| f(ints, ty).map(|t| vec![t])));
        self
    }

    /// Adds a one-to-many rule: `ty` becomes the types returned, in order (none: the value disappears).
    pub fn rule_many(
        mut self,
        f: impl Fn(&mut Interners, TypeId) -> Option<Vec<TypeId>> + Send + Sync + 'static,
    ) -> Self {
        self.rules.push(Box::new(f));
        self
    }

    /// What `ty` becomes.
    pub fn convert(&self, ints: &mut Interners, ty: TypeId) -> Vec<TypeId> {
        self.rules.iter().rev().find_map(|rule| rule(ints, ty)).unwrap_or_else(|| vec![ty])
    }

    /// What a list of types becomes, flattened.
    pub fn convert_all(&self, ints: &mut Interners, types: &[TypeId]) -> Vec<TypeId> {
        types.iter().flat_map(|&t| self.convert(ints, t)).collect()
    }

    /// True if `ty` stays as it is.
    pub fn is_legal(&self, ints: &mut Interners, ty: TypeId) -> bool {
        self.convert(ints, ty) == [ty]
    }

    /// A function type with its inputs and results converted.
    pub fn convert_function_type(&self, ints: &mut Interners, ty: TypeId) -> TypeId {
        let TypeKind::Function { inputs, results } = ints.type_kind(ty).clone() else { return ty };
        let (inputs, results) = (self.convert_all(ints, &inputs), self.convert_all(ints, &results));
        ints.function_type(&inputs, &results)
    }

    /// True if every type `op` uses stays: operands, results, arguments of its regions' entry blocks, and the
    /// function types among its properties (a function's signature).
    pub fn op_types_legal(&self, ctx: &mut Context, op: OpId) -> bool {
        let mut types = op_types(&ctx.body, op);
        types.extend(signature_types(ctx, op));
        types.into_iter().all(|t| self.is_legal(&mut ctx.interners, t))
    }
}

/// The types of `op`'s operands, results and entry-block arguments.
fn op_types(body: &Body, op: OpId) -> Vec<TypeId> {
    let values = body.operands(op).chain(body.results(op));
    let mut types: Vec<TypeId> = values.map(|v| body.value_type(v)).collect();
    for &region in body.regions(op) {
        if let Some(&entry) = body.region(region).blocks.first() {
            types.extend(body.block(entry).args.iter().map(|&a| body.value_type(a)));
        }
    }
    types
}

/// The inputs and results of the function types among `op`'s properties.
fn signature_types(ctx: &Context, op: OpId) -> Vec<TypeId> {
    let mut out = Vec::new();
    for &(_, attr) in ctx.dict_entries(ctx.body.op(op).props) {
        if let Attr::Type(ty) = ctx.attr_data(attr) {
            if let TypeKind::Function { inputs, results } = ctx.type_kind(*ty) {
                out.extend(inputs.iter().chain(results.iter()));
            }
        }
    }
    out
}
