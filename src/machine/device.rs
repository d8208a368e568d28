//! One device of a mesh: its compute throughput per op class and element type, and its memories.
//!
//! The sharding cost model needs a device's speed to weigh compute against communication and its memory capacity
//! to bound peak memory per device; the NPU cycle model needs the same device in more detail ([`super::npu`]
//! builds a [`Device`] from its configuration, so both read one set of numbers). Rates are per time unit of the
//! machine ([`super::TimeUnit`]): per second for a device described in seconds, per cycle for the NPU.

use super::error::{positive, MachineError};

/// What kind of work a throughput figure is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OpClass {
    /// Contractions on the matrix unit (matmul, convolution): counted in FLOPs, a multiply-add being 2.
    Matrix,
    /// Elementwise and reduction work on the vector unit: counted in elements.
    Vector,
    /// Transcendental elementwise functions (`exp`, `tanh`, ...), often slower than plain vector work.
    Transcendental,
}

/// An element type, as far as throughput depends on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ElemType {
    /// 32-bit float.
    F32,
    /// bfloat16.
    Bf16,
    /// IEEE half.
    F16,
    /// 8-bit float (e4m3).
    F8,
    /// 8-bit integer.
    I8,
    /// 32-bit integer.
    I32,
}

impl ElemType {
    /// The size of one element in bytes.
    pub fn bytes(self) -> u64 {
        match self {
            ElemType::F8 | ElemType::I8 => 1,
            ElemType::Bf16 | ElemType::F16 => 2,
            ElemType::F32 | ElemType::I32 => 4,
        }
    }
}

/// A rate of work: `ops` of class `class` on elements of type `elem`, per time unit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Throughput {
    /// The kind of work.
    pub class: OpClass,
    /// The element type.
    pub elem: ElemType,
    /// Operations per time unit (FLOPs for [`OpClass::Matrix`], elements otherwise).
    pub rate: f64,
}

/// A memory of a device: off-chip (HBM) or on-chip (scratchpads, register files).
#[derive(Debug, Clone, PartialEq)]
pub struct Memory {
    /// Its name (`hbm`, `dm`, ...): unique within a device.
    pub name: String,
    /// Capacity of one instance, in bytes.
    pub capacity: u64,
    /// How many instances the device has (1 for HBM; one per slice for a per-slice scratchpad).
    pub instances: u64,
    /// Bandwidth of one instance, bytes per time unit.
    pub bandwidth: f64,
}

impl Memory {
    /// A memory with `instances` copies of `capacity` bytes, each moving `bandwidth` bytes per time unit.
    pub fn new(name: &str, capacity: u64, instances: u64, bandwidth: f64) -> Result<Memory, MachineError> {
        if name.is_empty() {
            return Err(MachineError::EmptyName { what: "memory" });
        }
        if capacity == 0 {
            return Err(MachineError::Zero { what: format!("capacity of memory '{name}'") });
        }
        if instances == 0 {
            return Err(MachineError::Zero { what: format!("instances of memory '{name}'") });
        }
        let bandwidth = positive(format!("bandwidth of memory '{name}'"), bandwidth)?;
        Ok(Memory { name: name.to_string(), capacity, instances, bandwidth })
    }

    /// The capacity of all instances together.
    pub fn total_capacity(&self) -> u64 {
        self.capacity.saturating_mul(self.instances)
    }
}

/// A device: a kind name, throughputs and memories. The first memory added is the device's main memory (the one
/// sharding's per-device memory budget refers to).
#[derive(Debug, Clone, PartialEq)]
pub struct Device {
    kind: String,
    throughputs: Vec<Throughput>,
    memories: Vec<Memory>,
}

impl Device {
    /// A device of this kind with no throughputs and no memories yet.
    pub fn new(kind: &str) -> Device {
        Device { kind: kind.to_string(), throughputs: Vec::new(), memories: Vec::new() }
    }

    /// Adds a throughput; errors on a non-positive or non-finite rate, or a second rate for the same class and type.
    pub fn with_throughput(mut self, class: OpClass, elem: ElemType, rate: f64) -> Result<Device, MachineError> {
        let rate = positive(format!("{class:?} throughput for {elem:?}"), rate)?;
        if self.throughput(class, elem).is_some() {
            return Err(MachineError::Duplicate { what: "throughput", name: format!("{class:?} {elem:?}") });
        }
        self.throughputs.push(Throughput { class, elem, rate });
        Ok(self)
    }

    /// Adds a memory; errors on a second memory of the same name.
    pub fn with_memory(mut self, memory: Memory) -> Result<Device, MachineError> {
        if self.memory(&memory.name).is_some() {
            return Err(MachineError::Duplicate { what: "memory", name: memory.name });
        }
        self.memories.push(memory);
        Ok(self)
    }

    /// The device kind (`rngd-lite`, `alpa-mlp`, ...).
    pub fn kind(&self) -> &str {
        &self.kind
    }

    /// Every throughput figure.
    pub fn throughputs(&self) -> &[Throughput] {
        &self.throughputs
    }

    /// The rate of `class` work on `elem` elements, if the device has one.
    pub fn throughput(&self, class: OpClass, elem: ElemType) -> Option<f64> {
        self.throughputs.iter().find(|t| t.class == class && t.elem == elem).map(|t| t.rate)
    }

    /// The time `ops` operations of `class` on `elem` take at full rate, if the device has a rate for them.
    pub fn compute_time(&self, class: OpClass, elem: ElemType, ops: f64) -> Option<f64> {
        self.throughput(class, elem).map(|rate| ops / rate)
    }

    /// Every memory, main memory first.
    pub fn memories(&self) -> &[Memory] {
        &self.memories
    }

    /// The memory called `name`.
    pub fn memory(&self, name: &str) -> Option<&Memory> {
        self.memories.iter().find(|m| m.name == name)
    }

    /// The main memory (the first added): what a per-device memory budget counts against.
    pub fn main_memory(&self) -> Option<&Memory> {
        self.memories.first()
    }
}
