//! The files the IR was parsed from, so that locations can be turned into `file:line:col` and a source line.

use super::entity::IdVec;
use std::sync::{Arc, OnceLock};

crate::define_id!(
    /// A file loaded into the [`SourceMap`].
    FileId,
    "file"
);

/// One loaded file.
#[derive(Debug)]
pub struct SourceFile {
    /// The name diagnostics show (a path, or `<stdin>`).
    pub name: String,
    /// The full text.
    pub text: Arc<str>,
    /// Byte offset of each line start, computed on first use.
    line_starts: OnceLock<Vec<u32>>,
}

/// A resolved position: 1-based line and column within a file.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct LineCol {
    /// 1-based line.
    pub line: u32,
    /// 1-based column, counted in bytes as MLIR does.
    pub col: u32,
}

impl SourceFile {
    fn line_starts(&self) -> &[u32] {
        self.line_starts.get_or_init(|| {
            let mut starts = vec![0u32];
            starts.extend(self.text.bytes().enumerate().filter(|(_, b)| *b == b'\n').map(|(i, _)| i as u32 + 1));
            starts
        })
    }

    /// The line and column of a byte offset.
    pub fn line_col(&self, offset: u32) -> LineCol {
        let starts = self.line_starts();
        let line = starts.partition_point(|&s| s <= offset).max(1) - 1;
        LineCol { line: line as u32 + 1, col: offset - starts[line] + 1 }
    }

    /// 0-based index of the line containing `offset`.
    pub fn line_index(&self, offset: u32) -> usize {
        self.line_starts().partition_point(|&s| s <= offset).max(1) - 1
    }

    /// Byte range of the 0-based line `index`, newline included.
    pub fn line_range(&self, index: usize) -> Option<std::ops::Range<usize>> {
        let starts = self.line_starts();
        let start = *starts.get(index)? as usize;
        let end = starts.get(index + 1).map_or(self.text.len(), |&e| e as usize);
        Some(start..end)
    }

    /// The text of a 1-based line, without its newline.
    pub fn line_text(&self, line: u32) -> Option<&str> {
        let starts = self.line_starts();
        let start = *starts.get(line.checked_sub(1)? as usize)? as usize;
        let end = starts.get(line as usize).map_or(self.text.len(), |&e| e as usize);
        Some(self.text[start..end].trim_end_matches(['\n', '\r']))
    }

    /// The byte offset of a 1-based line and column, if it lies inside the file.
    pub fn offset_of(&self, pos: LineCol) -> Option<u32> {
        let start = *self.line_starts().get(pos.line.checked_sub(1)? as usize)?;
        Some(start + pos.col.checked_sub(1)?)
    }
}

/// All files loaded into a context.
#[derive(Debug, Default)]
pub struct SourceMap {
    files: IdVec<FileId, SourceFile>,
}

impl SourceMap {
    /// Adds a file and returns its id.
    pub fn add(&mut self, name: impl Into<String>, text: Arc<str>) -> FileId {
        self.files.push(SourceFile { name: name.into(), text, line_starts: OnceLock::new() })
    }

    /// The file behind an id.
    pub fn file(&self, id: FileId) -> &SourceFile {
        &self.files[id]
    }

    /// Number of loaded files.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// True when no file is loaded.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// The first file loaded under `name`, if any.
    pub fn find(&self, name: &str) -> Option<FileId> {
        self.files.iter().find(|(_, f)| f.name == name).map(|(id, _)| id)
    }
}
