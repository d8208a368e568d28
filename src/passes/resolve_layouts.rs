//! `resolve-layouts`: gives every tensor of every TEG graph a layout, written on the op that defines it as
//! `teg.layout = #layout.cute<shape:stride>`, for the NPU the module targets (`npu.machine`). A tensor is stored
//! row-major with its rows padded to `NpuConfig::padded_row` elements (a multiple of the DM write alignment, and
//! of 64 elements for long rows), so that every row, and every piece of a row the lowering tiles, is a DMA packet
//! the machine accepts. Sources take the same layout: the harness writes the bound array into it.
//!
//! This is the layout every op of the lowering reads today; views as layouts (no copy) and relayout copies where a
//! consumer needs another layout come with the ops that need them.

use super::pass::{Changed, Pass, PassEnv, PassInfo};
use super::registry::PassEntry;
use crate::dialects::layout::attr::{CuteAttr, LayoutAttr};
use crate::dialects::npu::machine_attr::machine_of;
use crate::dialects::teg::tensor_type::as_tensor;
use crate::dialects::teg::{graph_ops, graphs_under, LAYOUT_ATTR};
use crate::ir::dialect_data::DialectData;
use crate::ir::{Attr, AttrId, Context, Diagnostic, Interners, OpId};
use crate::layout::notation::cute::CuteLayout;
use crate::machine::NpuConfig;
use std::sync::Arc;

/// The registration of `resolve-layouts`.
pub const ENTRY: PassEntry = PassEntry { info: &INFO, create: |_| Box::new(ResolveLayouts) };

static INFO: PassInfo = PassInfo {
    argument: "resolve-layouts",
    name: "ResolveLayouts",
    description: "Give every TEG tensor a layout in the NPU's memory (teg.layout)",
    anchor: None,
    options: &[],
    statistics: &[("num-layouts", "Tensors given a layout")],
};

struct ResolveLayouts;

impl Pass for ResolveLayouts {
    fn info(&self) -> &'static PassInfo {
        &INFO
    }

    fn run(&mut self, ctx: &mut Context, root: OpId, env: &mut PassEnv<'_>) -> Result<Changed, Vec<Diagnostic>> {
        let mut count = 0;
        for graph in graphs_under(ctx, root) {
            let cfg = machine_of(ctx, graph).map_err(|m| vec![Diagnostic::error(ctx.body.op(graph).loc, m)])?;
            let ops: Vec<OpId> = graph_ops(ctx, graph).collect();
            for op in ops {
                let result = ctx.body.results(op).next();
                let Some(shape) = result.and_then(|v| as_tensor(ctx, ctx.body.value_type(v))).map(|t| t.shape()) else {
                    continue;
                };
                let attr = row_major(&mut ctx.interners, &shape, &cfg);
                ctx.set_op_attr(op, LAYOUT_ATTR, attr);
                count += 1;
            }
        }
        env.stats.add("num-layouts", count);
        Ok(if count > 0 { Changed::Yes } else { Changed::No })
    }
}

/// `shape` row-major with padded rows, as a CuTe layout attribute (a scalar is `1:1`).
pub fn row_major(ints: &mut Interners, shape: &[u64], cfg: &NpuConfig) -> AttrId {
    let mut modes = vec![(1i64, 1i64); shape.len().max(1)];
    let mut stride = 1i64;
    for (k, &extent) in shape.iter().enumerate().rev() {
        modes[k] = (extent as i64, stride);
        let stored = if k + 1 == shape.len() { cfg.padded_row(extent) } else { extent };
        stride = stride.saturating_mul(stored as i64);
    }
    let attr = LayoutAttr::Cute(CuteAttr::plain(CuteLayout::from_flat(&modes)));
    ints.attr(Attr::Dialect(DialectData(Arc::new(attr))))
}
