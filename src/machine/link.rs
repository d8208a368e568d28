//! The links along one mesh axis, in the α–β model: sending `B` bytes between two neighbours on the axis costs
//! `α + β · B`, with `α` the latency and `β` the inverse bandwidth (time per byte).
//!
//! These two numbers are the whole interface between the sharding cost model and the machine: the collective
//! costs of [`super::collective`] read them, and the NPU chip-to-chip transfer of `npu-machine` §10 costs
//! `latency + bytes / bandwidth` on the same link, so the estimate and the interpreter agree by construction.
//! Times are in the machine's time unit ([`super::TimeUnit`]).

use super::error::{non_negative, positive, MachineError};

/// One mesh axis's links: latency `α` and inverse bandwidth `β`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Link {
    alpha: f64,
    beta: f64,
}

impl Link {
    /// A link from its latency (time per transfer, `>= 0`) and bandwidth (bytes per time unit, `> 0`).
    pub fn new(latency: f64, bandwidth: f64) -> Result<Link, MachineError> {
        let alpha = non_negative("link latency", latency)?;
        let bandwidth = positive("link bandwidth", bandwidth)?;
        Ok(Link { alpha, beta: 1.0 / bandwidth })
    }

    /// A link from `α` (latency, `>= 0`) and `β` (time per byte, `>= 0`; 0 is an infinitely fast link), as
    /// Alpa's cluster environment writes them.
    pub fn from_alpha_beta(alpha: f64, beta: f64) -> Result<Link, MachineError> {
        Ok(Link { alpha: non_negative("link alpha", alpha)?, beta: non_negative("link beta", beta)? })
    }

    /// The latency `α`: the fixed cost of one transfer.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// The inverse bandwidth `β`: time per byte.
    pub fn beta(&self) -> f64 {
        self.beta
    }

    /// Bytes per time unit (infinite when `β` is 0).
    pub fn bandwidth(&self) -> f64 {
        1.0 / self.beta
    }

    /// The cost of one point-to-point transfer of `bytes` over this link: `α + β · bytes`.
    pub fn transfer(&self, bytes: f64) -> f64 {
        self.alpha + self.beta * bytes
    }
}
