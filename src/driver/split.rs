//! `--split-input-file`: the byte ranges of the chunks between marker lines (`// -----`).

use std::ops::Range;

/// Chunks of `text` separated by lines that start (after indentation) with `marker`; marker lines belong to
/// no chunk.
pub fn split(text: &str, marker: &str) -> Vec<Range<usize>> {
    let mut chunks = Vec::new();
    let mut start = 0;
    let mut line_start = 0;
    for line in text.split_inclusive('\n') {
        let line_end = line_start + line.len();
        if line.trim_start().starts_with(marker) {
            chunks.push(start..line_start);
            start = line_end;
        }
        line_start = line_end;
    }
    chunks.push(start..text.len());
    chunks
}

#[cfg(test)]
mod tests {
    use super::split;

    #[test]
    fn marker_lines_separate_chunks() {
        let text = "a\n// -----\nb\n  // -----  \nc";
        let parts: Vec<&str> = split(text, "// -----").into_iter().map(|r| &text[r]).collect();
        assert_eq!(parts, ["a\n", "b\n", "c"]);
    }
}
