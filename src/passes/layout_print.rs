//! `layout-print`: for every layout attribute in the module, in op order, prints its table: one JSON object per
//! line (`format=json`), a human-readable table (`format=table`), its address loops (`format=loops`) or its
//! canonical core form (`format=core`), to the pass output (standard output in `tap-opt`), as CuTe's
//! `print_layout` does for one layout. The forms themselves are the layout library's (`layout::format`).

use super::options::{OptionKind, OptionSpec, OptionValues};
use super::pass::{Changed, Pass, PassEnv, PassInfo};
use super::registry::PassEntry;
use crate::dialects::layout::attr::LayoutAttr;
use crate::ir::footprint::Child;
use crate::ir::interner::FxHashSet;
use crate::ir::{walk, Attr, AttrId, Context, Diagnostic, OpId};
use crate::layout::core_form::canonical_general;
use crate::layout::format::{core_line, json_line, loops_line, table};

/// The registration of `layout-print`.
pub const ENTRY: PassEntry = PassEntry { info: &INFO, create };

static INFO: PassInfo = PassInfo {
    argument: "layout-print",
    name: "LayoutPrint",
    description: "Print the element offsets and buffer positions of every layout attribute",
    anchor: None,
    options: &[
        OptionSpec {
            name: "format",
            kind: OptionKind::Enum(&["json", "table", "loops", "core"]),
            default: "json",
            description: "One JSON object per line, a readable table, the address loops, or the canonical core form",
        },
        OptionSpec {
            name: "limit",
            kind: OptionKind::Int,
            default: "1048576",
            description: "Largest number of elements or positions printed (a larger layout is an error)",
        },
    ],
    statistics: &[("num-layouts", "Number of layouts printed")],
};

fn create(options: &OptionValues) -> Box<dyn Pass> {
    let format = match options.text("format") {
        "table" => Format::Table,
        "loops" => Format::Loops,
        "core" => Format::Core,
        _ => Format::Json,
    };
    Box::new(LayoutPrint { format, limit: options.int("limit").max(0) as u64 })
}

#[derive(Copy, Clone, PartialEq, Eq)]
enum Format {
    Json,
    Table,
    Loops,
    Core,
}

struct LayoutPrint {
    format: Format,
    limit: u64,
}

impl Pass for LayoutPrint {
    fn info(&self) -> &'static PassInfo {
        &INFO
    }

    fn run(&mut self, ctx: &mut Context, root: OpId, env: &mut PassEnv<'_>) -> Result<Changed, Vec<Diagnostic>> {
        let mut errors = Vec::new();
        for op in std::iter::once(root).chain(walk::preorder(&ctx.body, root)) {
            let data = ctx.body.op(op);
            // Every distinct attribute inside the op's attributes and result types once: a layout met twice on
            // one op (a type used by several results, an alias used often) is printed once.
            let roots = [Child::Attr(data.props), Child::Attr(data.attrs)]
                .into_iter()
                .chain(ctx.body.results(op).map(|v| Child::Type(ctx.body.value_type(v))));
            let found: Vec<(AttrId, LayoutAttr)> = ctx
                .distinct_within(roots, &mut FxHashSet::default())
                .into_iter()
                .filter_map(|item| match item {
                    Child::Attr(a) => layout_of(ctx, a).map(|l| (a, l)),
                    _ => None,
                })
                .collect();
            for (attr, layout) in found {
                let text = crate::ir::print::attr_to_string(ctx, attr);
                let loc = ctx.loc_text(data.loc);
                let shown = match self.format {
                    Format::Loops => layout.access_pattern().map(|p| loops_line(&loc, &text, &p)),
                    Format::Core => {
                        layout.to_core().and_then(|g| canonical_general(&g)).map(|c| core_line(&loc, &text, &c))
                    }
                    Format::Table => layout.tabulate(self.limit).map(|tab| table(&loc, &text, &tab)),
                    Format::Json => layout.tabulate(self.limit).map(|tab| json_line(&loc, &text, &tab)),
                };
                match shown {
                    Ok(shown) => {
                        let _ = env.out.write_all(shown.as_bytes());
                        env.stats.add("num-layouts", 1);
                    }
                    Err(e) => errors.push(Diagnostic::error(data.loc, format!("cannot print layout {text}: {e}"))),
                }
            }
        }
        if errors.is_empty() {
            Ok(Changed::No)
        } else {
            Err(errors)
        }
    }
}

/// The layout `attr` is, if it is one.
fn layout_of(ctx: &Context, attr: AttrId) -> Option<LayoutAttr> {
    match ctx.attr_data(attr) {
        Attr::Dialect(d) => d.downcast::<LayoutAttr>().cloned(),
        _ => None,
    }
}
