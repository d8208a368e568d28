//! `dce`: erases ops whose results are unused and whose memory effects (the memory-effects interface; `Pure`
//! ops have none) allow it, repeatedly (children first), until none is left.

use super::pass::{Changed, Pass, PassEnv, PassInfo};
use super::registry::PassEntry;
use crate::interfaces::memory_effects::is_trivially_dead;
use crate::ir::walk::postorder;
use crate::ir::{Context, Diagnostic, OpId};

/// The registration of `dce`.
pub const ENTRY: PassEntry = PassEntry { info: &INFO, create: |_| Box::new(Dce) };

static INFO: PassInfo = PassInfo {
    argument: "dce",
    name: "DCE",
    description: "Eliminate dead operations without side effects",
    anchor: None,
    options: &[],
    statistics: &[("num-dce'd", "Number of operations DCE'd")],
};

struct Dce;

impl Pass for Dce {
    fn info(&self) -> &'static PassInfo {
        &INFO
    }

    fn run(&mut self, ctx: &mut Context, op: OpId, env: &mut PassEnv<'_>) -> Result<Changed, Vec<Diagnostic>> {
        let mut erased = 0u64;
        loop {
            let dead: Vec<OpId> = postorder(&ctx.body, op).into_iter().filter(|&o| is_trivially_dead(ctx, o)).collect();
            if dead.is_empty() {
                break;
            }
            for o in dead {
                if !ctx.body.is_erased(o) && is_trivially_dead(ctx, o) {
                    ctx.body.drop_all_references(o);
                    ctx.body.erase_op(o);
                    erased += 1;
                }
            }
        }
        env.stats.add("num-dce'd", erased);
        Ok(if erased > 0 { Changed::Yes } else { Changed::No })
    }
}
