//! `teg-keep-partial`: keeps partial results partial across linear ops. After `teg-shard`, an add, sub or neg of
//! values assembled by alike `teg.reshard`s (partial sums, or plain pieces) is applied to the pieces where they
//! lie and reshards once (the dialect's `CombineLater` patterns, applied by the greedy driver). Run `cse` after
//! it: the consumers' shards give identical piece ops.

use super::pass::PassInfo;
use super::pattern_pass::PatternPass;
use super::registry::PassEntry;
use crate::dialects::teg::keep_partial::COMBINE_LATER;

/// The registration of `teg-keep-partial`.
pub const ENTRY: PassEntry = PassEntry {
    info: &INFO,
    create: |_| Box::new(PatternPass { info: &INFO, patterns: &COMBINE_LATER, counter: COUNTER }),
};

const COUNTER: &str = "num-deferred";

static INFO: PassInfo = PassInfo {
    argument: "teg-keep-partial",
    name: "TegKeepPartial",
    description: "Apply adds, subs and negs of resharded values to the pieces before the reshard",
    anchor: None,
    options: &[],
    statistics: &[(COUNTER, "Linear ops moved before a reshard")],
};
