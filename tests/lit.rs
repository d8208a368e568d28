//! lit runner (placeholder).
fn main() {}
