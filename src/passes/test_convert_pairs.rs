//! `test-convert-pairs`: a conversion that exercises the framework end to end from `tap-opt`. `!pair.pair`
//! becomes two `i32` (a one-to-two type conversion); `pair.make`, `pair.add` and `pair.first` become
//! `arith` on the halves; function signatures, returns and calls follow the types. `pair.opaque` has no
//! pattern, so a partial conversion keeps it (with a cast back to `!pair.pair` where it reads a pair) and a
//! full one (`full=true`) fails on it; `pair.unconvertible` is illegal and has no pattern, so it always fails.

use super::options::{OptionKind, OptionSpec, OptionValues};
use super::pass::{Changed, Pass, PassEnv, PassInfo};
use super::registry::PassEntry;
use crate::dialects::arith::AddIOp;
use crate::dialects::func::conversion::PATTERNS as FUNC_PATTERNS;
use crate::dialects::pair::is_pair;
use crate::ir::conversion::{
    apply_conversion, ConversionMode, ConversionPattern, ConversionRewriter, ConversionTarget, Legality, OpAdaptor,
    TypeConverter,
};
use crate::ir::{Context, Diagnostic, OpId, ValueId};

/// The registration of `test-convert-pairs`.
pub const ENTRY: PassEntry = PassEntry { info: &INFO, create };

static INFO: PassInfo = PassInfo {
    argument: "test-convert-pairs",
    name: "TestConvertPairs",
    description: "Test dialect conversion: split !pair.pair into two i32",
    anchor: None,
    options: &[OptionSpec {
        name: "full",
        kind: OptionKind::Bool,
        default: "false",
        description: "Full conversion: every op must end up legal",
    }],
    statistics: &[("num-rewrites", "Number of patterns applied"), ("num-casts", "Number of casts left")],
};

fn create(options: &OptionValues) -> Box<dyn Pass> {
    let mode = if options.bool("full") { ConversionMode::Full } else { ConversionMode::Partial };
    Box::new(ConvertPairs { mode })
}

struct ConvertPairs {
    mode: ConversionMode,
}

impl Pass for ConvertPairs {
    fn info(&self) -> &'static PassInfo {
        &INFO
    }

    fn run(&mut self, ctx: &mut Context, op: OpId, env: &mut PassEnv<'_>) -> Result<Changed, Vec<Diagnostic>> {
        let target = target();
        let types = TypeConverter::new().rule_many(|ints, ty| {
            is_pair(ints, ty).then(|| {
                let i32 = ints.int_type(32);
                vec![i32, i32]
            })
        });
        let mut patterns: Vec<&dyn ConversionPattern> = vec![&MakePair, &PairAdd, &First];
        patterns.extend(FUNC_PATTERNS);
        let outcome = apply_conversion(ctx, op, &target, &patterns, &types, self.mode).map_err(|d| vec![d])?;
        env.stats.add("num-rewrites", outcome.rewrites);
        env.stats.add("num-casts", outcome.casts);
        Ok(if outcome.rewrites > 0 { Changed::Yes } else { Changed::No })
    }
}

fn target() -> ConversionTarget {
    let mut target = ConversionTarget::new()
        .dialect("arith", Legality::Legal)
        .op("builtin.module", Legality::Legal)
        .op("builtin.unrealized_conversion_cast", Legality::Legal)
        .op("pair.unconvertible", Legality::Illegal);
    for name in ["pair.make", "pair.add", "pair.first"] {
        target = target.op(name, Legality::Illegal);
    }
    for name in ["func.func", "func.return", "func.call"] {
        target = target.op(name, Legality::TypesLegal);
    }
    target
}

/// `pair.make %a, %b` is its two halves.
struct MakePair;

impl ConversionPattern for MakePair {
    fn name(&self) -> &'static str {
        "MakePair"
    }

    fn root(&self) -> Option<&'static str> {
        Some("pair.make")
    }

    fn match_and_rewrite(&self, op: OpId, operands: &OpAdaptor, rw: &mut ConversionRewriter<'_, '_>) -> bool {
        rw.replace_op_with_groups(op, &[operands.flat()]);
        true
    }
}

/// `pair.add %p, %q` is two `arith.addi`, one per half.
struct PairAdd;

impl ConversionPattern for PairAdd {
    fn name(&self) -> &'static str {
        "PairAdd"
    }

    fn root(&self) -> Option<&'static str> {
        Some("pair.add")
    }

    fn match_and_rewrite(&self, op: OpId, operands: &OpAdaptor, rw: &mut ConversionRewriter<'_, '_>) -> bool {
        let (&[a0, a1], &[b0, b1]) = (operands.group(0), operands.group(1)) else { return false };
        let i32 = rw.interners().int_type(32);
        let halves: Vec<ValueId> =
            [(a0, b0), (a1, b1)].into_iter().map(|(a, b)| AddIOp::build(&mut **rw, a, b, i32).result(rw)).collect();
        rw.replace_op_with_groups(op, &[halves]);
        true
    }
}

/// `pair.first %p` is the first half.
struct First;

impl ConversionPattern for First {
    fn name(&self) -> &'static str {
        "First"
    }

    fn root(&self) -> Option<&'static str> {
        Some("pair.first")
    }

    fn match_and_rewrite(&self, op: OpId, operands: &OpAdaptor, rw: &mut ConversionRewriter<'_, '_>) -> bool {
        let &[first, _] = operands.group(0) else { return false };
        rw.replace_op(op, &[first]);
        true
    }
}
