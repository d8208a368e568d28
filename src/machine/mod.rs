//! Target machines: a library of its own (it imports nothing else of the crate), so the sharding cost model and
//! the NPU cycle model read the same numbers.
//!
//! A [`Machine`] is a [`Mesh`] of identical [`Device`]s, one [`Link`] per mesh axis (the α–β model) and the time
//! unit all its numbers use. [`Collective`] gives the α–β cost of the collectives sharding inserts;
//! [`NpuConfig`] holds the `tap-npu v0` numbers (published, derived or assumed, each marked) and builds the NPU
//! device and its chip-to-chip link. [`presets`] has the default NPU machine and the meshes of the MLP
//! auto-sharding benchmark.
//!
//! Sources: `shared/reference/npu-machine.md` (NPU figures, §10 for several chips) and
//! `shared/reference/sharding-and-cost.md` (collective costs, the benchmark's meshes).

pub mod collective;
pub mod device;
pub mod error;
pub mod link;
pub mod mesh;
pub mod npu;
pub mod presets;

pub use collective::Collective;
pub use device::{Device, ElemType, Memory, OpClass, Throughput};
pub use error::MachineError;
pub use link::Link;
pub use mesh::{Axis, Mesh};
pub use npu::NpuConfig;

use error::{non_negative, positive};

/// The unit every time, rate and latency of a machine is expressed in.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TimeUnit {
    /// Seconds: rates are per second.
    Second,
    /// Cycles of a clock of this frequency (Hz): rates are per cycle. The NPU's unit.
    Cycle {
        /// Clock frequency, Hz.
        hz: f64,
    },
    /// A unitless time, as Alpa's benchmark uses (α = 1, β = 1 or 0.01).
    Abstract,
}

/// A mesh of identical devices joined by one kind of link per mesh axis.
#[derive(Debug, Clone, PartialEq)]
pub struct Machine {
    name: String,
    unit: TimeUnit,
    device: Device,
    mesh: Mesh,
    links: Vec<Link>,
    npu: Option<NpuConfig>,
}

impl Machine {
    /// A machine; `links` has one link per mesh axis, in the mesh's axis order. Errors when the counts differ or
    /// a cycle clock is not a finite positive frequency.
    pub fn new(
        name: &str,
        unit: TimeUnit,
        device: Device,
        mesh: Mesh,
        links: Vec<Link>,
    ) -> Result<Machine, MachineError> {
        if let TimeUnit::Cycle { hz } = unit {
            positive("clock frequency", hz)?;
        }
        if links.len() != mesh.axes().len() {
            return Err(MachineError::LinkCount { axes: mesh.axes().len(), links: links.len() });
        }
        Ok(Machine { name: name.to_string(), unit, device, mesh, links, npu: None })
    }

    /// Attaches the NPU configuration the device was built from, for the cycle model.
    pub fn with_npu(mut self, npu: NpuConfig) -> Machine {
        self.npu = Some(npu);
        self
    }

    /// The machine's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The unit of every time in this machine.
    pub fn time_unit(&self) -> TimeUnit {
        self.unit
    }

    /// The device every mesh position holds.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The mesh.
    pub fn mesh(&self) -> &Mesh {
        &self.mesh
    }

    /// The links, one per mesh axis in axis order.
    pub fn links(&self) -> &[Link] {
        &self.links
    }

    /// The link along axis `name`.
    pub fn link(&self, axis: &str) -> Result<&Link, MachineError> {
        Ok(&self.links[self.mesh.axis_index(axis)?])
    }

    /// The NPU configuration, for an NPU machine.
    pub fn npu(&self) -> Option<&NpuConfig> {
        self.npu.as_ref()
    }

    /// Capacity of a device's main memory, bytes: the per-device memory budget of sharding.
    pub fn memory_per_device(&self) -> Option<u64> {
        self.device.main_memory().map(|m| m.capacity)
    }

    /// A time of this machine in seconds (`None` for an abstract unit).
    pub fn seconds(&self, time: f64) -> Option<f64> {
        match self.unit {
            TimeUnit::Second => Some(time),
            TimeUnit::Cycle { hz } => Some(time / hz),
            TimeUnit::Abstract => None,
        }
    }

    /// The α–β cost of collective `c` over a tensor of `bytes` bytes (the whole tensor) along mesh `axes`: one
    /// ring over the group's devices, with the largest `α` and `β` among the axes (see [`collective`]). Errors
    /// on an unknown or repeated axis or a negative or non-finite byte count; no axes is a group of one (0).
    pub fn collective_cost(&self, c: Collective, bytes: f64, axes: &[&str]) -> Result<f64, MachineError> {
        let bytes = non_negative("collective bytes", bytes)?;
        let n = self.mesh.group_size(axes)?;
        let mut alpha: f64 = 0.0;
        let mut beta: f64 = 0.0;
        for axis in axes {
            let link = self.link(axis)?;
            alpha = alpha.max(link.alpha());
            beta = beta.max(link.beta());
        }
        Ok(c.cost(bytes, n, &Link::from_alpha_beta(alpha, beta)?))
    }

    /// Sending `bytes` bytes to a neighbour along `axis`: `α + β · bytes` (0 on an axis of size 1).
    pub fn send_recv_cost(&self, bytes: f64, axis: &str) -> Result<f64, MachineError> {
        self.collective_cost(Collective::SendRecv, bytes, &[axis])
    }
}
