//! `check-legality`: fails if an op the options mark illegal remains (the end check of a lowering, e.g. "no `teg`
//! op is left"). It runs the dialect-conversion driver with no patterns, so its report is the driver's.

use super::options::{OptionKind, OptionSpec, OptionValues};
use super::pass::{Changed, Pass, PassEnv, PassInfo};
use super::registry::PassEntry;
use crate::ir::conversion::{apply_conversion, ConversionMode, ConversionTarget, Legality, TypeConverter};
use crate::ir::{Context, Diagnostic, OpId};

/// The registration of `check-legality`.
pub const ENTRY: PassEntry = PassEntry { info: &INFO, create };

static INFO: PassInfo = PassInfo {
    argument: "check-legality",
    name: "CheckLegality",
    description: "Fail if an op of the listed dialects or names remains",
    anchor: None,
    options: &[
        OptionSpec {
            name: "illegal-dialects",
            kind: OptionKind::List,
            default: "",
            description: "Dialects whose ops must be gone",
        },
        OptionSpec { name: "illegal-ops", kind: OptionKind::List, default: "", description: "Ops that must be gone" },
        OptionSpec {
            name: "legal-ops",
            kind: OptionKind::List,
            default: "",
            description: "Ops allowed even in an illegal dialect",
        },
    ],
    statistics: &[],
};

fn create(options: &OptionValues) -> Box<dyn Pass> {
    let mut target = ConversionTarget::new();
    for d in options.list("illegal-dialects") {
        target = target.dialect(&d, Legality::Illegal);
    }
    for o in options.list("illegal-ops") {
        target = target.op(&o, Legality::Illegal);
    }
    for o in options.list("legal-ops") {
        target = target.op(&o, Legality::Legal);
    }
    Box::new(CheckLegality { target })
}

struct CheckLegality {
    target: ConversionTarget,
}

impl Pass for CheckLegality {
    fn info(&self) -> &'static PassInfo {
        &INFO
    }

    fn run(&mut self, ctx: &mut Context, op: OpId, _: &mut PassEnv<'_>) -> Result<Changed, Vec<Diagnostic>> {
        apply_conversion(ctx, op, &self.target, &[], &TypeConverter::new(), ConversionMode::Partial)
            .map_err(|d| vec![d])?;
        Ok(Changed::No)
    }
}
