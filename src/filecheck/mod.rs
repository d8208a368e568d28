//! LLVM-compatible FileCheck engine (placeholder until the engine lands).
