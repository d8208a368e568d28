//! Renders diagnostics for people: MLIR's layout (`file:line:col: error: message`, the source line, a caret) by
//! default, or codespan-reporting's rich layout. The only module that uses codespan-reporting.

use crate::ir::entity::EntityId;
use crate::ir::source::{FileId, LineCol, SourceMap};
use crate::ir::{Context, Diagnostic, Loc, LocData, Severity};
use codespan_reporting::diagnostic::{Diagnostic as CsDiagnostic, Label, Severity as CsSeverity};
use codespan_reporting::files::{Error as FilesError, Files};
use codespan_reporting::term::{self, Config, DisplayStyle};

/// How diagnostics are laid out.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum Style {
    /// `file:line:col: severity: message`, source line, caret (what lit tests match).
    #[default]
    Mlir,
    /// codespan-reporting's boxed snippets.
    Rich,
}

/// The sources of a context, seen through codespan-reporting's `Files` interface.
struct SourceFiles<'a>(&'a SourceMap);

impl<'a> Files<'a> for SourceFiles<'a> {
    type FileId = usize;
    type Name = &'a str;
    type Source = &'a str;

    fn name(&'a self, id: usize) -> Result<&'a str, FilesError> {
        self.file(id).map(|f| f.name.as_str())
    }

    fn source(&'a self, id: usize) -> Result<&'a str, FilesError> {
        self.file(id).map(|f| &*f.text)
    }

    fn line_index(&'a self, id: usize, byte_index: usize) -> Result<usize, FilesError> {
        Ok(self.file(id)?.line_index(byte_index as u32))
    }

    fn line_range(&'a self, id: usize, line_index: usize) -> Result<std::ops::Range<usize>, FilesError> {
        let file = self.file(id)?;
        file.line_range(line_index)
            .ok_or(FilesError::LineTooLarge { given: line_index, max: file.line_index(file.text.len() as u32) })
    }
}

impl SourceFiles<'_> {
    fn file(&self, id: usize) -> Result<&crate::ir::source::SourceFile, FilesError> {
        if id < self.0.len() {
            Ok(self.0.file(FileId::from_index(id)))
        } else {
            Err(FilesError::FileMissing)
        }
    }
}

/// Where a location points, resolved as far as possible.
enum Place {
    /// A byte offset in a loaded file.
    Source(FileId, u32),
    /// A file position that is not loaded.
    Named(String, u32, u32),
    /// Nowhere.
    Unknown,
}

fn place(ctx: &Context, loc: Loc) -> Place {
    match loc {
        Loc::Unknown => Place::Unknown,
        Loc::Source { file, offset } => Place::Source(file, offset),
        Loc::Id(id) => match &ctx.locs[id] {
            LocData::FileLineCol { file, line, col } => {
                let name = ctx.str(*file);
                let loaded = ctx.sources.find(name).and_then(|f| {
                    let pos = crate::ir::source::LineCol { line: *line, col: *col };
                    ctx.sources.file(f).offset_of(pos).map(|o| (f, o))
                });
                match loaded {
                    Some((f, o)) if (o as usize) <= ctx.sources.file(f).text.len() => Place::Source(f, o),
                    _ => Place::Named(name.to_string(), *line, *col),
                }
            }
            LocData::Name { child: Some(c), .. } => place(ctx, *c),
            // Only a child holding a position can give one: the walk follows one path, not the whole DAG.
            LocData::Fused { locs, .. } => {
                locs.iter().find(|&&l| ctx.loc_footprint(l).positioned).map_or(Place::Unknown, |&l| place(ctx, l))
            }
            LocData::CallSite { callee, .. } => place(ctx, *callee),
            LocData::Name { child: None, .. } => Place::Unknown,
        },
    }
}

/// Renders one diagnostic and its notes.
pub fn render(ctx: &Context, diag: &Diagnostic, style: Style) -> String {
    let mut out = String::new();
    render_with(ctx, diag, style, &mut Columns::default(), &mut out);
    out
}

/// Renders a list of diagnostics.
pub fn render_all(ctx: &Context, diags: &[Diagnostic], style: Style) -> String {
    let (mut out, mut columns) = (String::new(), Columns::default());
    for d in diags {
        render_with(ctx, d, style, &mut columns, &mut out);
    }
    out
}

fn render_with(ctx: &Context, diag: &Diagnostic, style: Style, columns: &mut Columns, out: &mut String) {
    render_one(ctx, diag, style, columns, out);
    for note in &diag.notes {
        render_one(ctx, note, style, columns, out);
    }
}

fn render_one(ctx: &Context, diag: &Diagnostic, style: Style, columns: &mut Columns, out: &mut String) {
    match (place(ctx, diag.loc), style) {
        (Place::Source(file, offset), Style::Rich) => {
            out.push_str(&codespan(ctx, diag, file, offset, DisplayStyle::Rich))
        }
        (Place::Source(file, offset), Style::Mlir) => {
            let f = ctx.sources.file(file);
            let lc = f.line_col(offset);
            let col = columns.char_column(file, f, lc);
            out.push_str(&format!("{}:{}:{col}: {}: {}\n", f.name, lc.line, diag.severity, diag.message));
            if let Some(text) = f.line_text(lc.line) {
                let (shown, col) = clip_line(text, lc.col);
                out.push_str(&shown);
                out.push('\n');
                out.push_str(&caret_line(&shown, col));
            }
        }
        (Place::Named(name, line, col), _) => {
            out.push_str(&format!("{name}:{line}:{col}: {}: {}\n", diag.severity, diag.message))
        }
        (Place::Unknown, _) => out.push_str(&format!("<unknown>:0: {}: {}\n", diag.severity, diag.message)),
    }
}

/// Character columns (what a diagnostic's `file:line:col` shows) of byte positions, counted on from the last
/// position asked for when the next is further along the same line: diagnostics in order along one long line cost
/// time linear in the line, not quadratic.
#[derive(Default)]
struct Columns {
    last: Option<(FileId, u32, u32, u32)>,
}

impl Columns {
    /// The 1-based character column of `lc` (1-based line and byte column) in `f`.
    fn char_column(&mut self, file: FileId, f: &crate::ir::source::SourceFile, lc: LineCol) -> u32 {
        let Some(text) = f.line_text(lc.line) else { return lc.col };
        let (from, chars) = match self.last {
            Some((id, line, byte, chars)) if id == file && line == lc.line && byte <= lc.col => (byte, chars),
            _ => (1, 1),
        };
        let span = text.as_bytes().get(from as usize - 1..(lc.col as usize - 1).min(text.len())).unwrap_or(&[]);
        let chars = chars + span.iter().filter(|&&b| (b as i8) >= -0x40).count() as u32;
        self.last = Some((file, lc.line, lc.col, chars));
        chars
    }
}

/// Lines longer than this are shown as a window around the caret.
const MAX_SHOWN: usize = 240;

/// The part of `text` to show around 1-based byte column `col`, and the caret column within it.
fn clip_line(text: &str, col: u32) -> (String, u32) {
    if text.len() <= MAX_SHOWN {
        return (text.to_string(), col);
    }
    let at = (col as usize).saturating_sub(1).min(text.len());
    let mut start = at.saturating_sub(MAX_SHOWN / 2);
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = (start + MAX_SHOWN).min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let prefix = if start > 0 { "..." } else { "" };
    let suffix = if end < text.len() { "..." } else { "" };
    let shown = format!("{prefix}{}{suffix}", &text[start..end]);
    (shown, (at - start + prefix.len()) as u32 + 1)
}

/// Spaces up to the column (tabs kept, so the caret lines up) and a `^`.
fn caret_line(text: &str, col: u32) -> String {
    let mut s: String =
        text.bytes().take(col.saturating_sub(1) as usize).map(|b| if b == b'\t' { '\t' } else { ' ' }).collect();
    s.push_str("^\n");
    s
}

fn codespan(ctx: &Context, diag: &Diagnostic, file: FileId, offset: u32, display: DisplayStyle) -> String {
    let severity = match diag.severity {
        Severity::Error => CsSeverity::Error,
        Severity::Warning => CsSeverity::Warning,
        Severity::Note => CsSeverity::Note,
        Severity::Remark => CsSeverity::Help,
    };
    let start = offset as usize;
    let d =
        CsDiagnostic::new(severity).with_message(&diag.message).with_label(Label::primary(file.index(), start..start));
    let config = Config { display_style: display, ..Config::default() };
    let files = SourceFiles(&ctx.sources);
    let text = term::emit_into_string(&config, &files, &d).unwrap_or_default();
    if diag.severity == Severity::Remark {
        // codespan-reporting has no "remark" severity; MLIR does.
        return text.replacen("help", "remark", 1);
    }
    text
}
