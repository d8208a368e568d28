//! The four notations, each with its data as written and its meaning in the core form: CuTe (`cute.rs`, with its
//! algebra in `cute_algebra.rs`), XLA (`xla.rs`), Furiosa (`furiosa.rs`, meaning in `furiosa_to_core.rs`) and CK
//! (`ck.rs`, meaning in `ck_to_core.rs`).

pub mod ck;
pub mod ck_to_core;
pub mod cute;
pub mod cute_algebra;
pub mod furiosa;
pub mod furiosa_to_core;
pub mod xla;
