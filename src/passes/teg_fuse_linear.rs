//! `teg-fuse-linear`: fuses `teg.add(teg.matmul(x, w), b)`, `b` a bias over the output dimension, into
//! `teg.linear(x, w, b)` when the matmul's plan leaves its summed dimension whole (the inverse of the expansion
//! `teg-shard` applies to a linear whose summed dimension is split). The rewrite is the dialect's `FuseLinear`
//! pattern, applied by the greedy driver.

use super::pass::PassInfo;
use super::pattern_pass::PatternPass;
use super::registry::PassEntry;
use crate::dialects::teg::fuse_linear::FuseLinear;

/// The registration of `teg-fuse-linear`.
pub const ENTRY: PassEntry = PassEntry {
    info: &INFO,
    create: |_| Box::new(PatternPass { info: &INFO, patterns: &[&FuseLinear], counter: COUNTER }),
};

const COUNTER: &str = "num-fused";

static INFO: PassInfo = PassInfo {
    argument: "teg-fuse-linear",
    name: "TegFuseLinear",
    description: "Fuse a matmul and the add of a bias into teg.linear when the summed dimension is not split",
    anchor: None,
    options: &[],
    statistics: &[(COUNTER, "Linears made")],
};
