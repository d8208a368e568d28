//! lit's built-in `%` substitutions (`%s %S %p %t %T %basename_t %{pathsep} %%`), applied to a RUN line in
//! a single left-to-right pass so that an expansion is never substituted again.

use std::path::Path;

/// The paths a test's substitutions expand to.
#[derive(Debug, Clone)]
pub struct Substitutions {
    /// `%s`: absolute path of the test file.
    pub source: String,
    /// `%S`, `%p`: its directory.
    pub source_dir: String,
    /// `%t`: `<exec root>/<rel dir>/Output/<file>.tmp`.
    pub tmp: String,
    /// `%T`: the directory of `%t`.
    pub tmp_dir: String,
    /// `%basename_t`: the file name `%t` is built from (`<file>`, without `.tmp`).
    pub basename_t: String,
}

impl Substitutions {
    /// The layout real lit uses: `%t` lives in an `Output` directory under the test's exec directory.
    pub fn new(source: &Path, exec_dir: &Path) -> Self {
        let file = source.file_name().expect("test file name").to_string_lossy().into_owned();
        let tmp_dir = exec_dir.join("Output");
        Substitutions {
            source: source.display().to_string(),
            source_dir: source.parent().expect("test directory").display().to_string(),
            tmp: tmp_dir.join(format!("{file}.tmp")).display().to_string(),
            tmp_dir: tmp_dir.display().to_string(),
            basename_t: file,
        }
    }

    /// Expands every known `%` sequence of `line`; unknown ones are left as they are. `%%` yields a literal `%`
    /// that is not looked at again (`%%s` is `%s`, not the source path). The result is trimmed like lit's.
    pub fn apply(&self, line: &str) -> String {
        let table: [(&str, &str); 19] = [
            ("%%", "%"),
            ("%{pathsep}", ":"),
            ("%{fs-sep}", "/"),
            ("%basename_t", &self.basename_t),
            ("%{s:real}", &self.source),
            ("%{S:real}", &self.source_dir),
            ("%{p:real}", &self.source_dir),
            ("%{t:real}", &self.tmp),
            ("%{T:real}", &self.tmp_dir),
            ("%/s", &self.source),
            ("%/S", &self.source_dir),
            ("%/p", &self.source_dir),
            ("%/t", &self.tmp),
            ("%/T", &self.tmp_dir),
            ("%s", &self.source),
            ("%S", &self.source_dir),
            ("%p", &self.source_dir),
            ("%t", &self.tmp),
            ("%T", &self.tmp_dir),
        ];
        let mut out = String::with_capacity(line.len());
        let mut rest = line;
        'scan: while let Some(i) = rest.find('%') {
            out.push_str(&rest[..i]);
            rest = &rest[i..];
            for (key, value) in &table {
                if let Some(after) = rest.strip_prefix(key) {
                    out.push_str(value);
                    rest = after;
                    continue 'scan;
                }
            }
            out.push('%');
            rest = &rest[1..];
        }
        out.push_str(rest);
        out.trim().to_string()
    }
}
