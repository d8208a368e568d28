//! Type conversion of functions, for any dialect conversion with a type converter: a `func.func`'s signature
//! and entry block, the operands of `func.return` and the operands and results of `func.call` take the converted
//! types (one type may become several). A conversion adds [`PATTERNS`] to its own and declares the three ops
//! `Legality::TypesLegal`.

use crate::ir::conversion::{ConversionPattern, ConversionRewriter, OpAdaptor};
use crate::ir::{OpId, TypeId, ValueId};

/// The three patterns.
pub const PATTERNS: [&dyn ConversionPattern; 3] = [&SignatureConversion, &ReturnConversion, &CallConversion];

/// `func.func`: converts the function type and the body's entry block arguments.
pub struct SignatureConversion;

impl ConversionPattern for SignatureConversion {
    fn name(&self) -> &'static str {
        "FuncSignatureConversion"
    }

    fn root(&self) -> Option<&'static str> {
        Some("func.func")
    }

    fn match_and_rewrite(&self, op: OpId, _: &OpAdaptor, rw: &mut ConversionRewriter<'_, '_>) -> bool {
        let Some(attr) = rw.op_attr(op, "function_type") else { return false };
        let Some(old) = rw.attr_data(attr).as_type() else { return false };
        let types = rw.types();
        let new = types.convert_function_type(rw.interners(), old);
        let region = rw.body.regions(op).first().copied();
        if new == old && !region.is_some_and(|r| entry_changes(rw, r)) {
            return false;
        }
        let value = rw.interners().type_attr(new);
        rw.set_prop(op, "function_type", value);
        if arg_counts_change(rw, old, new) {
            rw.remove_attr(op, "arg_attrs");
            rw.remove_attr(op, "res_attrs");
        }
        if let Some(r) = region {
            rw.convert_region_types(r);
        }
        true
    }
}

/// True if the converter changes an argument type of `region`'s entry block.
fn entry_changes(rw: &mut ConversionRewriter<'_, '_>, region: crate::ir::RegionId) -> bool {
    let Some(&entry) = rw.body.region(region).blocks.first() else { return false };
    let types: Vec<TypeId> = rw.body.block(entry).args.iter().map(|&a| rw.body.value_type(a)).collect();
    rw.convert_types(&types) != types
}

fn arg_counts_change(rw: &ConversionRewriter<'_, '_>, old: TypeId, new: TypeId) -> bool {
    let counts = |t: TypeId| match rw.type_kind(t) {
        crate::ir::TypeKind::Function { inputs, results } => (inputs.len(), results.len()),
        _ => (0, 0),
    };
    counts(old) != counts(new)
}

/// `func.return`: returns the converted values.
pub struct ReturnConversion;

impl ConversionPattern for ReturnConversion {
    fn name(&self) -> &'static str {
        "FuncReturnConversion"
    }

    fn root(&self) -> Option<&'static str> {
        Some("func.return")
    }

    fn match_and_rewrite(&self, op: OpId, operands: &OpAdaptor, rw: &mut ConversionRewriter<'_, '_>) -> bool {
        let flat = operands.flat();
        if rw.body.operands(op).eq(flat.iter().copied()) {
            return false;
        }
        rw.set_operands(op, &flat);
        true
    }
}

/// `func.call`: calls with the converted values and returns values of the converted result types.
pub struct CallConversion;

impl ConversionPattern for CallConversion {
    fn name(&self) -> &'static str {
        "FuncCallConversion"
    }

    fn root(&self) -> Option<&'static str> {
        Some("func.call")
    }

    fn match_and_rewrite(&self, op: OpId, operands: &OpAdaptor, rw: &mut ConversionRewriter<'_, '_>) -> bool {
        let flat = operands.flat();
        let old_types: Vec<TypeId> = rw.body.results(op).map(|v| rw.body.value_type(v)).collect();
        let groups: Vec<Vec<TypeId>> = old_types.iter().map(|&t| rw.convert_type(t)).collect();
        let unchanged = groups.iter().zip(&old_types).all(|(g, &t)| g.as_slice() == [t]);
        if unchanged && rw.body.operands(op).eq(flat.iter().copied()) {
            return false;
        }
        let Some(callee) = rw.op_attr(op, "callee") else { return false };
        let results: Vec<TypeId> = groups.iter().flatten().copied().collect();
        let state = rw.op_state("func.call").operands(&flat).results(&results);
        let state = state.prop(rw.interners(), "callee", callee);
        let call = rw.create(state);
        let mut values = rw.body.results(call);
        let replacement: Vec<Vec<ValueId>> = groups.iter().map(|g| values.by_ref().take(g.len()).collect()).collect();
        rw.replace_op_with_groups(op, &replacement);
        true
    }
}
