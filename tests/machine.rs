//! The machine library: mesh rank mapping, collective costs against the closed-form figures of
//! `sharding-and-cost.md` (Alpa's MLP optima), the NPU figures and worked examples of `npu-machine.md`, and
//! validation errors.

use tapestry::machine::presets::{self, mlp_benchmark};
use tapestry::machine::{
    Collective, Device, ElemType, Link, Machine, MachineError, Memory, Mesh, NpuConfig, OpClass, TimeUnit,
};

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

macro_rules! assert_close {
    ($a:expr, $b:expr) => {{
        let (a, b) = ($a, $b);
        assert!(close(a, b), "{} = {a}, expected {b}", stringify!($a));
    }};
}

// ----- mesh -----

#[test]
fn ranks_are_row_major() {
    let mesh = Mesh::new(&[("x", 2), ("y", 4)]).unwrap();
    assert_eq!(mesh.num_devices(), 8);
    assert_eq!(mesh.shape(), vec![2, 4]);
    assert_eq!(mesh.coords(5).unwrap(), vec![1, 1]);
    assert_eq!(mesh.coords(3).unwrap(), vec![0, 3]);
    assert_eq!(mesh.rank(&[1, 3]).unwrap(), 7);
    assert_eq!(mesh.axis_size("y").unwrap(), 4);
}

#[test]
fn rank_and_coordinates_round_trip() {
    let shapes: &[&[usize]] = &[&[2, 4], &[3, 4], &[1, 8], &[8, 1], &[2, 3, 5], &[7], &[]];
    for shape in shapes {
        let names = ["a", "b", "c"];
        let axes: Vec<(&str, usize)> = shape.iter().enumerate().map(|(i, s)| (names[i], *s)).collect();
        let mesh = Mesh::new(&axes).unwrap();
        assert_eq!(mesh.num_devices(), shape.iter().product::<usize>());
        for rank in 0..mesh.num_devices() {
            let coords = mesh.coords(rank).unwrap();
            assert!(coords.iter().zip(*shape).all(|(c, s)| c < s));
            assert_eq!(mesh.rank(&coords).unwrap(), rank, "{shape:?} rank {rank}");
        }
    }
}

#[test]
fn groups_along_axes() {
    let mesh = Mesh::new(&[("x", 2), ("y", 4)]).unwrap();
    assert_eq!(mesh.group(5, &["y"]).unwrap(), vec![4, 5, 6, 7]);
    assert_eq!(mesh.group(5, &["x"]).unwrap(), vec![1, 5]);
    assert_eq!(mesh.group(5, &["x", "y"]).unwrap(), (0..8).collect::<Vec<_>>());
    assert_eq!(mesh.group(5, &[]).unwrap(), vec![5]);
    assert_eq!(mesh.groups(&["x"]).unwrap(), vec![vec![0, 4], vec![1, 5], vec![2, 6], vec![3, 7]]);
    assert_eq!(mesh.groups(&["y"]).unwrap(), vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7]]);
    assert_eq!(mesh.group_size(&["y", "x"]).unwrap(), 8);
}

// ----- collectives: Alpa's closed-form MLP optima (sharding-and-cost.md §2) -----

/// `AR(B, a)` on an Alpa machine.
fn ar(m: &Machine, bytes: f64, axis: &str) -> f64 {
    m.collective_cost(Collective::AllReduce, bytes, &[axis]).unwrap()
}

#[test]
fn one_axis_optima_of_the_mlp_tests() {
    // Meshes 4×1 and 1×4 with β = [1, 1]: the 4-device axis is `x` or `y`.
    for (rows, cols, axis) in [(4, 1, "x"), (1, 4, "y")] {
        let m = presets::alpa(&[("x", rows), ("y", cols)], &[1.0, 1.0], &[1.0, 1.0], 1 << 30).unwrap();
        // AR(128·128·4, a) = 1 + 2·3/4·65536 = 98305.
        assert_close!(ar(&m, (128 * 128 * 4) as f64, axis), 98305.0);
        // 2 layers, batch 1024, hidden 128, data parallel: 2 · AR(128·128·4, a).
        assert_close!(2.0 * ar(&m, 65536.0, axis), 196610.0);
        // 2 layers, batch 128, hidden 1024, model parallel: AR(128·1024·4, a) = 1 + 1.5·524288.
        assert_close!(ar(&m, (128 * 1024 * 4) as f64, axis), 786433.0);
        // 12 layers: 12 · AR(128·128·4, a) and 11 · AR(128·1024·4, a).
        assert_close!(12.0 * ar(&m, 65536.0, axis), 1179660.0);
        assert_close!(11.0 * ar(&m, 524288.0, axis), 8650763.0);
        // The other axis has one device: nothing moves.
        let other = if axis == "x" { "y" } else { "x" };
        assert_eq!(ar(&m, 65536.0, other), 0.0);
    }
}

#[test]
fn two_axis_optima_of_the_mlp_tests() {
    // 2 layers, batch 1024, hidden 128, β = [1, 0.01]: 2·AR(128·128·4 / m_1, 0) + AR(1024·128·4 / m_0, 1).
    let two_layers = |m0: usize, m1: usize| {
        let m = presets::alpa(&[("x", m0), ("y", m1)], &[1.0, 1.0], &[1.0, 0.01], 1 << 30).unwrap();
        2.0 * ar(&m, 65536.0 / m1 as f64, "x") + ar(&m, 524288.0 / m0 as f64, "y")
    };
    // 4×8: 2·(1 + 1.5·8192) + (1 + 0.01·1.75·131072) = 24578 + 2294.76.
    assert_close!(two_layers(4, 8), 26872.76);
    // 8×4: 2·(1 + 1.75·16384) + (1 + 0.01·1.5·65536) = 57346 + 984.04.
    assert_close!(two_layers(8, 4), 58330.04);
    // 3×4: 2·(1 + 4/3·16384) + (1 + 0.01·1.5·524288/3).
    assert_close!(two_layers(3, 4), 2.0 * (1.0 + 65536.0 / 3.0) + 1.0 + 7864.32 / 3.0);
    // 12 layers on 4×8: 12·AR(8192, 0) + 11·AR(131072, 1).
    let m = presets::alpa(&[("x", 4), ("y", 8)], &[1.0, 1.0], &[1.0, 0.01], 1 << 30).unwrap();
    assert_close!(12.0 * ar(&m, 8192.0, "x") + 11.0 * ar(&m, 131072.0, "y"), 147468.0 + 25242.36);
}

#[test]
fn every_collective_on_the_benchmark_mesh() {
    // 2×4, α = [1, 1], β = [1, 0.01], B = 1024 bytes.
    let m = mlp_benchmark(2, 4).unwrap();
    let cost = |c, axes: &[&str]| m.collective_cost(c, 1024.0, axes).unwrap();
    assert_close!(cost(Collective::AllGather, &["y"]), 1.0 + 0.01 * 0.75 * 1024.0);
    assert_close!(cost(Collective::ReduceScatter, &["x"]), 1.0 + 0.5 * 1024.0);
    assert_close!(cost(Collective::AllReduce, &["y"]), 1.0 + 0.01 * 1.5 * 1024.0);
    assert_close!(cost(Collective::AllToAll, &["y"]), 1.0 + 0.01 * 3.0 / 16.0 * 1024.0 * 1.5);
    assert_close!(cost(Collective::Broadcast, &["x"]), 1.0 + 1024.0);
    assert_close!(cost(Collective::SendRecv, &["y"]), 1.0 + 10.24);
    assert_close!(m.send_recv_cost(1024.0, "x").unwrap(), 1025.0);
    // Over both axes: one ring of 8 on the slower link (β = 1).
    assert_close!(cost(Collective::AllReduce, &["x", "y"]), 1.0 + 1.75 * 1024.0);
    assert_eq!(cost(Collective::AllReduce, &[]), 0.0);
    // Alpa's rounding: truncate, add the tie-breaker.
    assert_close!(Collective::AllReduce.alpa_rounded(98305.4), 98305.01);
    assert_close!(Collective::AllGather.alpa_rounded(8.68), 8.1);
    assert_eq!(
        Collective::ALL.map(Collective::name).join(" "),
        "all-reduce all-gather reduce-scatter all-to-all send-recv broadcast"
    );
}

#[test]
fn mlp_benchmark_meshes() {
    for (rows, cols, beta) in [(2, 4, [1.0, 0.01]), (1, 8, [1.0, 1.0]), (8, 1, [1.0, 1.0])] {
        let m = mlp_benchmark(rows, cols).unwrap();
        assert_eq!(m.mesh().shape(), vec![rows, cols]);
        assert_eq!(m.links().iter().map(Link::beta).collect::<Vec<_>>(), beta);
        assert_eq!(m.links().iter().map(Link::alpha).collect::<Vec<_>>(), [1.0, 1.0]);
        assert_eq!(m.memory_per_device(), Some(1000 << 20));
        assert_eq!(m.time_unit(), TimeUnit::Abstract);
        assert_eq!(m.seconds(1.0), None);
    }
}

// ----- the NPU (npu-machine.md) -----

#[test]
fn npu_device_numbers() {
    let m = presets::npu_default();
    let cfg = m.npu().unwrap();
    assert_eq!(cfg.slices(), 512);
    let d = m.device();
    // 512 slices × 8 lanes × 32 bf16 k per cycle × 2 FLOP; 64 k for i8.
    assert_eq!(d.throughput(OpClass::Matrix, ElemType::Bf16), Some(262144.0));
    assert_eq!(d.throughput(OpClass::Matrix, ElemType::I8), Some(524288.0));
    assert_eq!(d.throughput(OpClass::Vector, ElemType::F32), Some(4096.0));
    assert_eq!(d.throughput(OpClass::Transcendental, ElemType::F32), Some(2048.0));
    // f32 products: 16 k per cycle.
    assert_eq!(d.throughput(OpClass::Matrix, ElemType::F32), Some(131072.0));
    assert_eq!(d.compute_time(OpClass::Vector, ElemType::F32, 8192.0), Some(2.0));
    // HBM is the main memory; DM totals 256 MiB (2 clusters × 256 slices × 512 KiB, as published).
    assert_eq!(d.main_memory().unwrap().name, "hbm");
    assert_eq!(m.memory_per_device(), Some(48 << 30));
    assert_eq!(d.memory("dm").unwrap().total_capacity(), 256 << 20);
    assert_eq!(d.memory("trf").unwrap().capacity, 64 << 10);
    assert_eq!(d.memory("acc").unwrap().capacity, 64 << 10);
    assert_eq!(m.time_unit(), TimeUnit::Cycle { hz: 1e9 });
}

#[test]
fn npu_worked_examples() {
    let c = NpuConfig::default();
    assert_eq!(c.dma_cycles(64, 256, true), 628); // 1: HBM→HBM 16 KiB
    assert_eq!(c.dma_cycles(4096, 4096, false), 66036); // 2: HBM→DM 16 MiB
    assert_eq!(c.dma_cycles(4096, 4096, true), 131572); // 3: DM→DM 16 MiB
    assert_eq!(c.dma_cycles(4, 4096, false), 564); // 4: HBM→DM 16 KiB
    assert_eq!(c.dma_cycles(64, 256, false) + 64 * c.unaligned_read_cycles, 628); // 5: src base 128
    assert_eq!(c.matmul_cycles(32, 32, 8, ElemType::Bf16), 96); // 8
    assert_eq!(c.matmul_cycles(32, 64, 8, ElemType::Bf16), 128); // 9
    assert_eq!(c.matmul_cycles(32, 64, 8, ElemType::I8), 96); // 9
    assert_eq!(c.vector_cycles(256, false), 96); // 10: relu
    assert_eq!(c.vector_cycles(256, true), 128); // 10: exp
    assert_eq!(c.flit_cycles(8192), 64 + 256);
    assert_eq!(c.max_packet_bytes, 4096);
    assert_eq!(c.dm_write_align, 8);
}

#[test]
fn npu_links_are_the_sharding_alpha_and_beta() {
    // §10: latency + bytes / bandwidth on the link, α = 1000 cycles, β = 1/64 cycle per byte.
    let m = presets::npu(NpuConfig::default(), &[("x", 2), ("y", 4)]).unwrap();
    assert_eq!(m.mesh().num_devices(), 8);
    let link = m.link("y").unwrap();
    assert_eq!((link.alpha(), link.bandwidth()), (1000.0, 64.0));
    assert_close!(m.send_recv_cost(16384.0, "x").unwrap(), 1256.0);
    assert_close!(m.seconds(1256.0).unwrap(), 1.256e-6);
    // All-reduce of 1 MiB over the two chips of `x`: 1000 + 2·(1/2)·1 MiB / 64.
    assert_close!(m.collective_cost(Collective::AllReduce, 1048576.0, &["x"]).unwrap(), 17384.0);
    // Overrides reach the link.
    let fast = NpuConfig { link_bytes_per_cycle: 128, link_latency_cycles: 10, ..NpuConfig::default() };
    let m = presets::npu(fast, &[("x", 2)]).unwrap();
    assert_close!(m.send_recv_cost(1280.0, "x").unwrap(), 20.0);
}

// ----- validation -----

#[test]
fn bad_meshes_are_errors() {
    let err = Mesh::new(&[("x", 2), ("y", 0)]).unwrap_err();
    assert_eq!(err, MachineError::Zero { what: "size of mesh axis 'y'".into() });
    assert_eq!(err.to_string(), "size of mesh axis 'y' must be at least 1");
    let err = Mesh::new(&[("x", 2), ("x", 4)]).unwrap_err();
    assert_eq!(err.to_string(), "mesh axis 'x' is given twice");
    assert!(matches!(Mesh::new(&[("", 2)]), Err(MachineError::EmptyName { .. })));
    assert_eq!(Mesh::new(&[("x", usize::MAX), ("y", 2)]), Err(MachineError::TooManyDevices));
    let mesh = Mesh::new(&[("x", 2), ("y", 4)]).unwrap();
    assert_eq!(mesh.coords(8), Err(MachineError::RankOutOfRange { rank: 8, devices: 8 }));
    assert!(matches!(mesh.rank(&[2, 0]), Err(MachineError::BadCoordinates { .. })));
    assert!(matches!(mesh.rank(&[0]), Err(MachineError::BadCoordinates { .. })));
    assert_eq!(mesh.axis_index("z"), Err(MachineError::UnknownAxis("z".into())));
    assert!(matches!(mesh.group(0, &["x", "x"]), Err(MachineError::Duplicate { .. })));
}

#[test]
fn bad_numbers_are_errors() {
    for (latency, bandwidth) in [(1.0, -5.0), (1.0, 0.0), (f64::NAN, 1.0), (-1.0, 1.0), (1.0, f64::INFINITY)] {
        let err = Link::new(latency, bandwidth).unwrap_err();
        assert!(matches!(err, MachineError::BadNumber { .. }), "{latency} {bandwidth}: {err}");
    }
    assert_eq!(Link::new(1.0, -5.0).unwrap_err().to_string(), "link bandwidth must be finite and > 0, not -5");
    assert!(Link::from_alpha_beta(1.0, f64::NAN).is_err());
    assert!(Link::from_alpha_beta(0.0, 0.0).is_ok());
    assert!(Memory::new("hbm", 0, 1, 1.0).is_err());
    assert!(Memory::new("hbm", 1, 1, f64::NAN).is_err());
    let dev = Device::new("d").with_throughput(OpClass::Matrix, ElemType::Bf16, 1.0).unwrap();
    assert!(matches!(
        dev.clone().with_throughput(OpClass::Matrix, ElemType::Bf16, 2.0),
        Err(MachineError::Duplicate { .. })
    ));
    assert!(dev.clone().with_throughput(OpClass::Vector, ElemType::F32, -1.0).is_err());
    let mesh = Mesh::new(&[("x", 2), ("y", 4)]).unwrap();
    let link = Link::new(1.0, 1.0).unwrap();
    let err = Machine::new("m", TimeUnit::Second, dev.clone(), mesh.clone(), vec![link]).unwrap_err();
    assert_eq!(err, MachineError::LinkCount { axes: 2, links: 1 });
    assert!(Machine::new("m", TimeUnit::Cycle { hz: 0.0 }, dev, mesh, vec![link; 2]).is_err());
    let m = mlp_benchmark(2, 4).unwrap();
    assert!(m.collective_cost(Collective::AllReduce, -1.0, &["x"]).is_err());
    assert!(m.collective_cost(Collective::AllReduce, f64::NAN, &["x"]).is_err());
    assert!(m.collective_cost(Collective::AllReduce, 1.0, &["z"]).is_err());
    assert!(presets::alpa(&[("x", 2)], &[1.0, 1.0], &[1.0], 1).is_err());
    let err = presets::npu(NpuConfig { trf_lanes: 0, ..NpuConfig::default() }, &[("x", 1)]).unwrap_err();
    assert_eq!(err.to_string(), "NPU TRF lanes must be at least 1");
    assert!(NpuConfig { clock_hz: f64::NAN, ..NpuConfig::default() }.validate().is_err());
}
