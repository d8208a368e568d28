//! `teg-print-dims`: for every op with index maps, in op order, prints its index space and what each index
//! dimension is (parallel, reduction with its monoid, unused) and how each input moves along it (broadcast,
//! dense, window with its halo, strided with its gap; per piece for an input read piecewise, marked `(bounding
//! box)` for a piece that is not affine): what the sharding passes read.

use super::pass::{Changed, Pass, PassEnv, PassInfo};
use super::registry::PassEntry;
use crate::interfaces::sharding::{index_maps_of, IndexMaps};
use crate::ir::{walk, Context, Diagnostic, OpId};
use crate::zspace::{dim_kinds, DimRole};

/// The registration of `teg-print-dims`.
pub const ENTRY: PassEntry = PassEntry { info: &INFO, create };

static INFO: PassInfo = PassInfo {
    argument: "teg-print-dims",
    name: "TegPrintDims",
    description: "Print the index dimensions of every TEG op and their kinds",
    anchor: None,
    options: &[],
    statistics: &[("num-ops", "Number of ops printed")],
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
            let Some(maps) = index_maps_of(ctx, op) else { continue };
            let loc = ctx.loc_text(ctx.body.op(op).loc);
            let _ = env.out.write_all(describe(ctx.op_name(op), &loc, &maps).as_bytes());
            env.stats.add("num-ops", 1);
        }
        Ok(Changed::No)
    }
}

/// `teg.matmul at f:1:2 index [batch=10, out=3, in=2]` and one line per index dimension.
fn describe(name: &str, loc: &str, maps: &IndexMaps) -> String {
    let index: Vec<String> = maps.index.iter().map(|(n, e)| format!("{n}={e}")).collect();
    let mut out = format!("{name} at {loc} index [{}]\n", index.join(", "));
    let pieces: Vec<_> = maps.inputs.iter().flat_map(|(_, p)| p).collect();
    let inputs: Vec<_> = pieces.iter().map(|p| &p.ipf).collect();
    let outputs: Vec<_> = maps.outputs.iter().map(|o| &o.1).collect();
    for (i, kind) in dim_kinds(maps.index.len(), &inputs, &outputs).iter().enumerate() {
        let role = match kind.role {
            DimRole::Parallel => "parallel".to_string(),
            DimRole::Unused => "unused".to_string(),
            DimRole::Reduction => match maps.reductions.iter().find(|r| r.0 == i) {
                Some((_, m)) => format!("reduction({})", m.name()),
                None => "reduction(no monoid)".to_string(),
            },
        };
        let mut access =
            kind.inputs
                .iter()
                .zip(&pieces)
                .map(|(a, p)| if p.affine { a.to_string() } else { format!("{a} (bounding box)") });
        let per_input: Vec<String> = maps
            .inputs
            .iter()
            .map(|(n, p)| match p.len() {
                0 => format!("{n} unread"),
                k => format!("{n} {}", access.by_ref().take(k).collect::<Vec<_>>().join(" | ")),
            })
            .collect();
        match per_input.is_empty() {
            true => out.push_str(&format!("  {}: {role}\n", maps.index[i].0)),
            false => out.push_str(&format!("  {}: {role}; {}\n", maps.index[i].0, per_input.join(", "))),
        }
    }
    out
}
