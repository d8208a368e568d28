//! Ready-made machines: the default NPU machine (`rngd-lite` chips on a mesh) and the meshes of the MLP
//! auto-sharding benchmark of `sharding-and-cost.md` §2 (Alpa's `test_solver_mlp.py` settings).

use super::device::{Device, ElemType, Memory, OpClass};
use super::error::MachineError;
use super::link::Link;
use super::mesh::Mesh;
use super::npu::NpuConfig;
use super::{Machine, TimeUnit};

/// Bytes in a MiB.
const MIB: u64 = 1 << 20;

/// NPU chips with configuration `config` on a mesh given as `(axis, size)` pairs, every axis joined by the
/// configured chip-to-chip link. Times are cycles.
pub fn npu<S: AsRef<str>>(config: NpuConfig, axes: &[(S, usize)]) -> Result<Machine, MachineError> {
    let device = config.device()?;
    let mesh = Mesh::new(axes)?;
    let links = vec![config.link()?; mesh.axes().len()];
    let unit = TimeUnit::Cycle { hz: config.clock_hz };
    Ok(Machine::new(&format!("{} × {}", config.profile, mesh.num_devices()), unit, device, mesh, links)?
        .with_npu(config))
}

/// The default NPU machine: one `rngd-lite` chip (a mesh `{chip: 1}`), all numbers [`NpuConfig::default`].
pub fn npu_default() -> Machine {
    npu(NpuConfig::default(), &[("chip", 1)]).expect("the default NPU configuration is valid")
}

/// A machine as Alpa's auto-sharding solver sees one: a mesh `(axis, size)`, per-axis `alpha` and `beta` in an
/// abstract time unit, and `memory` bytes per device; compute is charged nothing (so the device has no rates)
/// and memory bandwidth is not modelled (unlimited).
pub fn alpa<S: AsRef<str>>(
    axes: &[(S, usize)],
    alpha: &[f64],
    beta: &[f64],
    memory: u64,
) -> Result<Machine, MachineError> {
    alpa_rated(axes, alpha, beta, memory, &[])
}

/// [`alpa`]'s machine whose devices compute at `rates`: per op class, operations per time unit (for every element
/// type, which the abstract model does not tell apart). A class without a rate is free.
pub fn alpa_rated<S: AsRef<str>>(
    axes: &[(S, usize)],
    alpha: &[f64],
    beta: &[f64],
    memory: u64,
    rates: &[(OpClass, f64)],
) -> Result<Machine, MachineError> {
    let mesh = Mesh::new(axes)?;
    let n = mesh.axes().len();
    if alpha.len() != n || beta.len() != n {
        return Err(MachineError::LinkCount { axes: n, links: alpha.len().min(beta.len()) });
    }
    let links = alpha.iter().zip(beta).map(|(a, b)| Link::from_alpha_beta(*a, *b)).collect::<Result<_, _>>()?;
    let mut device = Device::new("alpa-device").with_memory(Memory::new("memory", memory, 1, f64::MAX)?)?;
    for &(class, rate) in rates {
        device = device.with_throughput(class, ElemType::F32, rate)?;
    }
    Machine::new("alpa", TimeUnit::Abstract, device, mesh, links)
}

/// The MLP benchmark machine on a `rows × cols` mesh (axes `x`, `y`): α = 1 per axis, β = [1, 0.01] for a
/// two-axis mesh and [1, 1] when one axis has size 1 (the 1×8 and 8×1 rows), 1000 MiB per device.
pub fn mlp_benchmark(rows: usize, cols: usize) -> Result<Machine, MachineError> {
    let beta = if rows > 1 && cols > 1 { [1.0, 0.01] } else { [1.0, 1.0] };
    alpa(&[("x", rows), ("y", cols)], &[1.0, 1.0], &beta, 1000 * MIB)
}
