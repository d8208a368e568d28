//! `layout-print`: for every layout attribute in the module, in op order, prints its table: one JSON object per
//! line (`format=json`), a human-readable table (`format=table`), its address loops (`format=loops`) or its
//! canonical core form (`format=core`), to the pass output (standard output in `tap-opt`), as CuTe's
//! `print_layout` does for one layout. The forms themselves are the layout library's (`layout::format`).

use super::options::{OptionKind, OptionSpec, OptionValues};
use super::pass::{Changed, Pass, PassEnv, PassInfo};
use super::registry::PassEntry;
use crate::dialects::layout::attr::LayoutAttr;
use crate::ir::{walk, Attr, AttrId, Context, Diagnostic, OpId, TypeId, TypeKind};
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
            let mut found = Vec::new();
            collect_layouts(ctx, data.props, &mut found);
            collect_layouts(ctx, data.attrs, &mut found);
            for v in ctx.body.results(op) {
                collect_in_type(ctx, ctx.body.value_type(v), &mut found);
            }
            // A layout met twice on one op (a type used by several results) is printed once.
            let mut seen = Vec::new();
            found.retain(|(a, _)| {
                !seen.contains(a) && {
                    seen.push(*a);
                    true
                }
            });
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

/// The layout attributes inside `attr` (itself, nested in arrays and dictionaries, or in a type it holds), in order.
fn collect_layouts(ctx: &Context, attr: AttrId, out: &mut Vec<(AttrId, LayoutAttr)>) {
    match ctx.attr_data(attr) {
        Attr::Dialect(d) => {
            if let Some(l) = d.downcast::<LayoutAttr>() {
                out.push((attr, l.clone()));
            }
        }
        Attr::Type(t) => collect_in_type(ctx, *t, out),
        Attr::Array(items) => items.iter().for_each(|&a| collect_layouts(ctx, a, out)),
        Attr::Dict(entries) => entries.iter().for_each(|&(_, a)| collect_layouts(ctx, a, out)),
        _ => {}
    }
}

/// The layouts in a type: tensor encodings, through function and tuple types.
fn collect_in_type(ctx: &Context, ty: TypeId, out: &mut Vec<(AttrId, LayoutAttr)>) {
    match ctx.type_kind(ty) {
        TypeKind::Tensor { encoding: Some(e), .. } => collect_layouts(ctx, *e, out),
        TypeKind::Function { inputs, results } => {
            inputs.iter().chain(results.iter()).for_each(|&t| collect_in_type(ctx, t, out))
        }
        TypeKind::Tuple(items) => items.iter().for_each(|&t| collect_in_type(ctx, t, out)),
        _ => {}
    }
}
