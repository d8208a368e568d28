//! The sharding cost model's estimate of a graph's time on the NPU, taken before the graph is lowered and kept on
//! the kernel (`npu.estimate`), so that `tap-run --lower --cost` can print it next to the interpreter's makespan.

use crate::dialects::teg::device_costs::device_costs;
use crate::dialects::teg::shard_problem::mesh_of;
use crate::ir::{Context, OpId};
use crate::machine::NpuConfig;

/// The kernel attribute holding the sharding cost model's estimate of the graph's time, in cycles.
pub const ESTIMATE_ATTR: &str = "npu.estimate";

/// The sharding cost model's estimate of `graph`'s time in cycles (`dialects::teg::device_costs`, what `teg-cost`
/// prints) on chips of machine `cfg` on its mesh (one chip without one), before it is lowered; `None` when the
/// model cannot price it.
pub fn estimate(ctx: &Context, graph: OpId, cfg: &NpuConfig) -> Option<u64> {
    let axes: Vec<(String, usize)> = match mesh_of(ctx, graph) {
        Some(machine) => machine.ok()?.mesh().axes().iter().map(|a| (a.name.clone(), a.size)).collect(),
        None => vec![("chip".into(), 1)],
    };
    let machine = crate::machine::presets::npu(cfg.clone(), &axes).ok()?;
    let costs = device_costs(ctx, graph, &machine).ok()?;
    Some(costs.devices.iter().map(|c| c.finish).fold(0.0, f64::max).ceil() as u64)
}
