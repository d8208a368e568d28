//! `tap-opt`: the opt-style driver (placeholder).
fn main() {}
