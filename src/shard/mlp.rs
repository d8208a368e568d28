//! The benchmark problem: the MLP training step of Alpa's `test_solver_mlp.py` (`sharding-and-cost.md` §2) as a
//! [`Problem`]: parameters `x[batch, d0]`, `y[batch, dL]`, weights `W_i[d(i-1), d(i)]`; forward
//! `h_i = h_(i-1) · W_i`; loss gradient `g = (h_L − y) · c` with `c` a scalar constant; backward, for `i = L..1`,
//! `gW_i = h_(i-1)ᵀ · g` (summing the batch), `W_i' = W_i − gW_i` written back over `W_i`, and `g = g · W_iᵀ` while
//! `i > 1`. f32, compute free and every contraction split over the whole mesh (as Alpa's intra-op cost and strategies). The same graph as a TEG file is what `teg-auto-shard`
//! reads; this builder gives the search core the problem without the IR, for tests and benchmarks.

use super::problem::{identity, Op, Problem, Tensor, TensorId};
use crate::zspace::{Ipf, ZAffineMap};

type Dims = Vec<(String, u64)>;

/// The `layers`-layer training step with batch `batch`, input width `input`, hidden width `hidden` and output
/// width `output`.
pub fn training_step(layers: usize, batch: u64, input: u64, hidden: u64, output: u64) -> Problem {
    let mut g = Graph::default();
    let width = |i: usize| {
        if i == 0 {
            input
        } else if i == layers {
            output
        } else {
            hidden
        }
    };
    let d = |i: usize| (format!("d{i}"), width(i));
    let b = || ("batch".to_string(), batch);
    let x = g.source("x", vec![b(), d(0)]);
    let y = g.source("y", vec![b(), d(layers)]);
    let weights: Vec<TensorId> = (1..=layers).map(|i| g.source(&format!("W{i}"), vec![d(i - 1), d(i)])).collect();
    let mut h = vec![x];
    for i in 1..=layers {
        let next = g.contract(&format!("h{i}"), h[i - 1], weights[i - 1], vec![b(), d(i)]);
        h.push(next);
    }
    let loss = g.elementwise("loss", &[h[layers], y]);
    let c = g.source("c", Vec::new());
    let mut grad = g.elementwise("g", &[loss, c]);
    for i in (1..=layers).rev() {
        let gw = g.contract(&format!("gW{i}"), h[i - 1], grad, vec![d(i - 1), d(i)]);
        let updated = g.elementwise(&format!("W{i}'"), &[weights[i - 1], gw]);
        g.tensors[updated.0 as usize].persistent = true;
        g.aliases.push((updated, weights[i - 1]));
        if i > 1 {
            grad = g.contract(&format!("g{}", i - 1), grad, weights[i - 1], vec![b(), d(i - 1)]);
        }
    }
    Problem::new(g.tensors, g.ops, g.aliases).expect("the MLP graph is well formed")
}

#[derive(Default)]
struct Graph {
    tensors: Vec<Tensor>,
    dims: Vec<Dims>,
    ops: Vec<Op>,
    aliases: Vec<(TensorId, TensorId)>,
}

impl Graph {
    fn tensor(&mut self, name: &str, dims: Dims, persistent: bool) -> TensorId {
        let shape = dims.iter().map(|d| d.1).collect();
        self.tensors.push(Tensor { name: name.to_string(), shape, elem_bytes: 4, persistent });
        self.dims.push(dims);
        TensorId(self.tensors.len() as u32 - 1)
    }

    fn source(&mut self, name: &str, dims: Dims) -> TensorId {
        let shape: Vec<u64> = dims.iter().map(|d| d.1).collect();
        let t = self.tensor(name, dims, true);
        self.ops.push(Op::source(name, t, &shape));
        t
    }

    /// `out[dims] = Σ a · b` over the dimensions of both not in `dims` (einsum by names).
    fn contract(&mut self, name: &str, a: TensorId, b: TensorId, dims: Dims) -> TensorId {
        let mut index = dims.clone();
        let summed: Dims = self.dims[a.0 as usize]
            .iter()
            .filter(|d| self.dims[b.0 as usize].contains(d) && !dims.contains(d))
            .cloned()
            .collect();
        index.extend(summed);
        let reduced = (dims.len()..index.len()).collect();
        let inputs = vec![(a, self.by_name(a, &index)), (b, self.by_name(b, &index))];
        let out = self.tensor(name, dims.clone(), false);
        let output = Some((out, self.by_name(out, &index)));
        self.ops.push(Op { split_all: true, ..Op::new(name, index, inputs, output, reduced) });
        out
    }

    /// An elementwise op over the first input's dimensions; other inputs broadcast by name.
    fn elementwise(&mut self, name: &str, inputs: &[TensorId]) -> TensorId {
        let dims = self.dims[inputs[0].0 as usize].clone();
        let shape: Vec<u64> = dims.iter().map(|d| d.1).collect();
        let ins = inputs.iter().map(|&t| (t, self.by_name(t, &dims))).collect();
        let out = self.tensor(name, dims.clone(), false);
        self.ops.push(Op::new(name, dims, ins, Some((out, identity(&shape))), Vec::new()));
        out
    }

    /// The IPF reading tensor `t` by dimension name over `index`.
    fn by_name(&self, t: TensorId, index: &Dims) -> Ipf {
        let dims = &self.dims[t.0 as usize];
        let rows = dims.iter().map(|d| index.iter().map(|i| i64::from(i.0 == d.0)).collect()).collect();
        let map = ZAffineMap::new(index.len(), rows, vec![0; dims.len()]).expect("one row per tensor dimension");
        Ipf::new(map, vec![1; dims.len()]).expect("one extent per row")
    }
}
