//! `teg-conv-dense`: rewrites strided and dilated convolutions into dense convolutions over strided slices of
//! their input, interleaved back (the dialect's `DenseConv` pattern, applied by the greedy driver), so that no
//! shard of them reads a row no window uses. Values are unchanged; floats are summed in the same order.

use super::pass::PassInfo;
use super::pattern_pass::PatternPass;
use super::registry::PassEntry;
use crate::dialects::teg::conv_dense::DenseConv;

/// The registration of `teg-conv-dense`.
pub const ENTRY: PassEntry = PassEntry {
    info: &INFO,
    create: |_| Box::new(PatternPass { info: &INFO, patterns: &[&DenseConv], counter: COUNTER }),
};

const COUNTER: &str = "num-rewritten";

static INFO: PassInfo = PassInfo {
    argument: "teg-conv-dense",
    name: "TegConvDense",
    description: "Rewrite strided and dilated teg.conv2d into dense convolutions over strided views",
    anchor: None,
    options: &[],
    statistics: &[(COUNTER, "Convolution axes made dense")],
};
