//! The NPU interpreter (being built): it will decode an `npu` program once, execute its instructions on real data,
//! and time them with the machine's cycle costs. So far it holds its timing and ordering core, `schedule`.

pub mod schedule;
