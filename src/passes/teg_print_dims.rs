//! `teg-print-dims`: for every block operator with a signature, in op order, prints its index space and what
//! each index dimension is (parallel, reduction with its monoid, unused) and how each input moves along it
//! (broadcast, dense, window with its halo, strided with its gap): what the sharding passes read.

use super::pass::{Changed, Pass, PassEnv, PassInfo};
use super::registry::PassEntry;
use crate::interfaces::sharding::{signature_of, Signature};
use crate::ir::{walk, Context, Diagnostic, OpId};
use crate::zspace::{dim_kinds, DimRole};

/// The registration of `teg-print-dims`.
pub const ENTRY: PassEntry = PassEntry { info: &INFO, create };

static INFO: PassInfo = PassInfo {
    argument: "teg-print-dims",
    name: "TegPrintDims",
    description: "Print the index dimensions of every TEG block operator and their kinds",
    anchor: None,
    options: &[],
    statistics: &[("num-ops", "Number of block operators printed")],
};

fn create(_: &super::options::OptionValues) -> Box<dyn Pass> {
    Box::new(PrintDims)
}

struct PrintDims;

impl Pass for PrintDims {
    fn info(&self) -> &'static PassInfo {
        &INFO
    }

    fn run(&mut self, ctx: &mut Context, root: OpId, env: &mut PassEnv<'_>) -> Result<Changed, Vec<Diagnostic>> {
        for op in walk::preorder(&ctx.body, root) {
            let Some(sig) = signature_of(ctx, op) else { continue };
            let loc = ctx.loc_text(ctx.body.op(op).loc);
            let _ = env.out.write_all(describe(ctx.op_name(op), &loc, &sig).as_bytes());
            env.stats.add("num-ops", 1);
        }
        Ok(Changed::No)
    }
}

/// `teg.matmul at f:1:2 index [batch=10, out=3, in=2]` and one line per index dimension.
fn describe(name: &str, loc: &str, sig: &Signature) -> String {
    let index: Vec<String> = sig.index.iter().map(|(n, e)| format!("{n}={e}")).collect();
    let mut out = format!("{name} at {loc} index [{}]\n", index.join(", "));
    let inputs: Vec<_> = sig.inputs.iter().map(|i| &i.1).collect();
    let outputs: Vec<_> = sig.outputs.iter().map(|o| &o.1).collect();
    for (i, kind) in dim_kinds(sig.index.len(), &inputs, &outputs).iter().enumerate() {
        let role = match kind.role {
            DimRole::Parallel => "parallel".to_string(),
            DimRole::Unused => "unused".to_string(),
            DimRole::Reduction => match sig.reductions.iter().find(|r| r.0 == i) {
                Some((_, m)) => format!("reduction({})", m.name()),
                None => "reduction(no monoid)".to_string(),
            },
        };
        let access: Vec<String> = sig.inputs.iter().zip(&kind.inputs).map(|((n, _), a)| format!("{n} {a}")).collect();
        out.push_str(&format!("  {}: {role}; {}\n", sig.index[i].0, access.join(", ")));
    }
    out
}
