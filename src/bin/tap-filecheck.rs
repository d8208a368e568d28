//! `tap-filecheck`: LLVM FileCheck (placeholder).
fn main() {}
