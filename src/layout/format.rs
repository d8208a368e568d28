//! Text forms of layouts, as `layout-print` writes them: a layout tabulated in its element order
//! ([`Tabulation`]) as one JSON object per line or as a readable table, its canonical core form and its address
//! loops as JSON lines. Each form starts from the layout's location and text, which the caller gives.

use super::address::AccessPattern;
use super::core_form::{CanonicalGeneral, GeneralLayout};
use super::strided::LayoutError;
use super::table::{Order, Slot};
use serde_json::json;

/// A layout tabulated in its notation's element order: what `layout-print` shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tabulation {
    /// Number of logical elements.
    pub size: u64,
    /// Buffer size, padding included.
    pub cosize: u64,
    /// The offset of each element (`None`: not stored).
    pub offsets: Vec<Option<i64>>,
    /// What each buffer position holds.
    pub positions: Vec<Slot>,
}

impl Tabulation {
    /// Tabulates `core`, elements numbered in `order`, if it has at most `limit` elements and positions (else
    /// says how many it has).
    pub fn of(core: &GeneralLayout, order: Order, limit: u64) -> Result<Tabulation, LayoutError> {
        let too_big = |what: &str, n: u64| LayoutError(format!("{n} {what} are more than the limit of {limit}"));
        if core.size() > limit {
            return Err(too_big("elements", core.size()));
        }
        if core.cosize() > limit {
            return Err(too_big("positions", core.cosize()));
        }
        Ok(Tabulation {
            size: core.size(),
            cosize: core.cosize(),
            offsets: core.offsets(order)?,
            positions: core.positions(order)?,
        })
    }
}

/// One JSON object: the offsets, and the elements at each buffer position (none for padding).
pub fn json_line(loc: &str, text: &str, tab: &Tabulation) -> String {
    let positions: Vec<&[u64]> = tab
        .positions
        .iter()
        .map(|s| match s {
            Slot::Live(elems) => elems.as_slice(),
            Slot::Padding(_) => &[],
        })
        .collect();
    let value = json!({
        "loc": loc,
        "layout": text,
        "size": tab.size,
        "cosize": tab.cosize,
        "offsets": tab.offsets,
        "positions": positions,
    });
    format!("{value}\n")
}

/// The canonical core form: what the layout means, whatever its notation. Coordinate stages and a swizzle, when
/// the layout has them, come as `logical` (the dimensions the stages read), `stages` and `swizzle`.
pub fn core_line(loc: &str, text: &str, g: &CanonicalGeneral) -> String {
    let c = &g.inner;
    let dims: Vec<_> = c
        .dims
        .iter()
        .zip(&c.digits)
        .map(|(d, digits)| {
            json!({
                "name": d.name, "extent": d.extent, "start": d.start, "stored": d.stored, "pad": d.pad.name(),
                "digits": digits.iter().map(|&(place, extent, stride)| json!([place, extent, stride])).collect::<Vec<_>>(),
            })
        })
        .collect();
    let mut value =
        json!({ "loc": loc, "layout": text, "dims": dims, "replicas": c.replicas, "base": c.base, "cosize": c.cosize });
    if !g.stages.is_empty() {
        let logical: Vec<_> = g.logical.iter().map(|d| json!({ "name": d.name, "extent": d.extent })).collect();
        value["logical"] = json!(logical);
        value["stages"] = json!(g.stages.iter().map(ToString::to_string).collect::<Vec<_>>());
    }
    if let Some(sw) = &g.swizzle {
        value["swizzle"] = json!(sw.to_string());
    }
    format!("{value}\n")
}

/// The address loops: a base offset and `(count, stride)` loops, outermost first.
pub fn loops_line(loc: &str, text: &str, p: &AccessPattern) -> String {
    let value = json!({ "loc": loc, "layout": text, "base": p.base, "loops": p.loops });
    format!("{value}\n")
}

/// A readable form: the offsets in element order, then the buffer with what each position holds.
pub fn table(loc: &str, text: &str, tab: &Tabulation) -> String {
    let mut out = format!("{loc}: {text}\n  size {}, cosize {}\n  offsets:", tab.size, tab.cosize);
    for o in &tab.offsets {
        match o {
            Some(o) => out.push_str(&format!(" {o}")),
            None => out.push_str(" -"),
        }
    }
    out.push_str("\n  positions:");
    for (p, s) in tab.positions.iter().enumerate() {
        match s {
            Slot::Live(e) => {
                let list: Vec<String> = e.iter().map(u64::to_string).collect();
                out.push_str(&format!(" {p}:{}", list.join("|")))
            }
            Slot::Padding(kind) => out.push_str(&format!(" {p}:pad({})", kind.name())),
        }
    }
    out.push('\n');
    out
}
