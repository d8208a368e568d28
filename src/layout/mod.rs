//! Layouts: where the elements of a logical tensor sit in a linear buffer. Four published notations (CuTe
//! layouts, Furiosa mapping expressions, XLA tiled layouts, CK tensor descriptors, in [`notation`]) are given one
//! exact meaning, the core form ([`core_form::GeneralLayout`]: coordinate stages, a strided [`strided::Layout`],
//! a swizzle), with canonical forms, equivalence, tables, views and address loops on it. A library of its own:
//! it imports nothing else of the crate, so the `layout` dialect and its passes share it.

pub mod address;
pub mod address_fn;
pub mod canonical;
pub mod core_form;
pub mod format;
pub mod notation;
pub mod stage;
pub mod strided;
pub mod swizzle;
pub mod table;
pub mod views;
