//! A sharding problem: tensors with shapes and element sizes, and ops in a topological order, each an index
//! space with one IPF per tensor it reads and one for the tensor it writes, the index dimensions it reduces, and
//! its cost per index point. Sources are ops that read nothing; a tensor written back over an input (an updated
//! weight) names it as its alias, so a plan pays to bring it back to that input's spec.

use super::spec::Plan;
use super::{err, ShardError};
use crate::zspace::Ipf;

/// A tensor's position in [`Problem::tensors`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TensorId(pub u32);

/// An op's position in [`Problem::ops`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OpIndex(pub u32);

/// A tensor.
#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    /// Its name, for reports.
    pub name: String,
    /// Its extent per dimension.
    pub shape: Vec<u64>,
    /// Bytes per element.
    pub elem_bytes: u64,
    /// Whether it stays in memory for the whole program (parameters, and values observed at the end).
    pub persistent: bool,
}

impl Tensor {
    /// Its size in bytes (saturating).
    pub fn bytes(&self) -> u64 {
        self.shape.iter().fold(self.elem_bytes, |b, &n| b.saturating_mul(n))
    }
}

/// An op.
#[derive(Clone, Debug, PartialEq)]
pub struct Op {
    /// Its name, for reports.
    pub name: String,
    /// The index space: `(name, extent)` per dimension.
    pub index: Vec<(String, u64)>,
    /// The tensors it reads, each through its IPF.
    pub inputs: Vec<(TensorId, Ipf)>,
    /// The tensor it writes, through its IPF (none for a sink).
    pub output: Option<(TensorId, Ipf)>,
    /// The index dimensions it reduces: splitting one leaves partial results to combine.
    pub reduced: Vec<usize>,
    /// Time per index point on one device, in the machine's unit (0: compute is free, as in Alpa's model).
    pub work_per_point: f64,
    /// A plan the user pinned: the only one the op may take.
    pub pinned: Option<Plan>,
    /// Whether the op may be split at all (an op without a signature runs whole, on replicated inputs).
    pub shardable: bool,
    /// Whether every plan must split it over every mesh axis (of more than one device), when some plan can: Alpa's
    /// assumption that heavy ops are always spread over the whole mesh, which its benchmark needs since compute is
    /// free there.
    pub split_all: bool,
}

impl Op {
    /// A source: writes `tensor` of rank `rank` from nothing; its index space is the tensor's.
    pub fn source(name: &str, tensor: TensorId, shape: &[u64]) -> Op {
        let index = shape.iter().enumerate().map(|(i, &n)| (format!("d{i}"), n)).collect();
        Op::new(name, index, Vec::new(), Some((tensor, identity(shape))), Vec::new())
    }

    /// An op reading `inputs` and writing `output` over `index`, reducing `reduced`; free compute, shardable.
    pub fn new(
        name: &str,
        index: Vec<(String, u64)>,
        inputs: Vec<(TensorId, Ipf)>,
        output: Option<(TensorId, Ipf)>,
        reduced: Vec<usize>,
    ) -> Op {
        Op {
            name: name.to_string(),
            index,
            inputs,
            output,
            reduced,
            work_per_point: 0.0,
            pinned: None,
            shardable: true,
            split_all: false,
        }
    }

    /// The extents of the index space.
    pub fn extents(&self) -> Vec<u64> {
        self.index.iter().map(|d| d.1).collect()
    }

    /// The number of index points (saturating).
    pub fn points(&self) -> f64 {
        self.index.iter().map(|d| d.1 as f64).product()
    }
}

/// The IPF reading a tensor of `shape` cell by cell over an index space of the same shape.
pub fn identity(shape: &[u64]) -> Ipf {
    let rank = shape.len();
    let rows = (0..rank).map(|j| (0..rank).map(|i| i64::from(i == j)).collect()).collect();
    let map = crate::zspace::ZAffineMap::new(rank, rows, vec![0; rank]).expect("a square identity map");
    Ipf::new(map, vec![1; rank]).expect("one extent per row")
}

/// A checked problem: tensors, ops in a topological order, aliases, and who produces and consumes what.
#[derive(Clone, Debug)]
pub struct Problem {
    tensors: Vec<Tensor>,
    ops: Vec<Op>,
    aliases: Vec<(TensorId, TensorId)>,
    producer: Vec<Option<OpIndex>>,
    consumers: Vec<Vec<(OpIndex, usize)>>,
}

impl Problem {
    /// A problem, checked: every id in range, every IPF of the right ranks, one producer per tensor before its
    /// consumers, reductions in range, aliases between tensors of one shape (`(updated, original)`).
    pub fn new(tensors: Vec<Tensor>, ops: Vec<Op>, aliases: Vec<(TensorId, TensorId)>) -> Result<Problem, ShardError> {
        let mut producer = vec![None; tensors.len()];
        let mut consumers = vec![Vec::new(); tensors.len()];
        for (k, op) in ops.iter().enumerate() {
            let at = OpIndex(k as u32);
            for (slot, (t, ipf)) in op.inputs.iter().enumerate() {
                check_access(&tensors, op, *t, ipf)?;
                if producer[t.0 as usize].is_none() {
                    return err(format!("op '{}' reads tensor {} before any op writes it", op.name, t.0));
                }
                consumers[t.0 as usize].push((at, slot));
            }
            if let Some((t, ipf)) = &op.output {
                check_access(&tensors, op, *t, ipf)?;
                if producer[t.0 as usize].replace(at).is_some() {
                    return err(format!(
                        "op '{}' writes tensor '{}', which another op writes",
                        op.name,
                        name(&tensors, *t)
                    ));
                }
            }
            if let Some(&d) = op.reduced.iter().find(|&&d| d >= op.index.len()) {
                return err(format!("op '{}' reduces index dimension {d} of {}", op.name, op.index.len()));
            }
            if let Some(plan) = &op.pinned {
                if plan.rank() != op.index.len() {
                    return err(format!(
                        "op '{}' is pinned to a plan of rank {}, not {}",
                        op.name,
                        plan.rank(),
                        op.index.len()
                    ));
                }
            }
        }
        for &(updated, original) in &aliases {
            let (Some(u), Some(o)) = (tensors.get(updated.0 as usize), tensors.get(original.0 as usize)) else {
                return err("an alias names a tensor that does not exist");
            };
            if u.shape != o.shape || u.elem_bytes != o.elem_bytes {
                return err(format!("'{}' aliases '{}' of another shape or element size", u.name, o.name));
            }
        }
        Ok(Problem { tensors, ops, aliases, producer, consumers })
    }

    /// The tensors.
    pub fn tensors(&self) -> &[Tensor] {
        &self.tensors
    }

    /// One tensor.
    pub fn tensor(&self, t: TensorId) -> &Tensor {
        &self.tensors[t.0 as usize]
    }

    /// The ops, in a topological order.
    pub fn ops(&self) -> &[Op] {
        &self.ops
    }

    /// One op.
    pub fn op(&self, k: OpIndex) -> &Op {
        &self.ops[k.0 as usize]
    }

    /// `(updated, original)` pairs: the updated tensor is written back over the original.
    pub fn aliases(&self) -> &[(TensorId, TensorId)] {
        &self.aliases
    }

    /// The op writing `t`.
    pub fn producer(&self, t: TensorId) -> Option<OpIndex> {
        self.producer[t.0 as usize]
    }

    /// The ops reading `t`, with the input slot.
    pub fn consumers(&self, t: TensorId) -> &[(OpIndex, usize)] {
        &self.consumers[t.0 as usize]
    }
}

fn name(tensors: &[Tensor], t: TensorId) -> &str {
    tensors.get(t.0 as usize).map_or("?", |t| &t.name)
}

fn check_access(tensors: &[Tensor], op: &Op, t: TensorId, ipf: &Ipf) -> Result<(), ShardError> {
    let Some(tensor) = tensors.get(t.0 as usize) else {
        return err(format!("op '{}' names tensor {}, past the {} tensors", op.name, t.0, tensors.len()));
    };
    if ipf.map().inputs() != op.index.len() || ipf.map().outputs() != tensor.shape.len() {
        return err(format!(
            "op '{}' reads '{}' (rank {}) through an IPF of {} inputs and {} outputs over {} index dimensions",
            op.name,
            tensor.name,
            tensor.shape.len(),
            ipf.map().inputs(),
            ipf.map().outputs(),
            op.index.len()
        ));
    }
    Ok(())
}
