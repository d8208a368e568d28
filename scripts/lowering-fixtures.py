"""Inputs of the lowering's lit tests (test/lit/lowering/Inputs): small arrays of exactly representable values, so
that the lowered kernels and the reference evaluator agree bit for bit. Run: python3 scripts/lowering-fixtures.py"""

import os

import numpy as np

OUT = os.path.join(os.path.dirname(__file__), "..", "test", "lit", "lowering", "Inputs")


def save(name, array):
    np.save(os.path.join(OUT, name + ".npy"), array)


os.makedirs(OUT, exist_ok=True)
save("x-5x3-f32", (np.arange(15, dtype=np.float32).reshape(5, 3) - 7) / 2)
save("y-3-f32", np.array([1, -2, 0.5], dtype=np.float32))
save("a-4x100-i32", (np.arange(400, dtype=np.int32).reshape(4, 100) * 7919 % 201) - 100)
save("b-4x1-i32", np.array([[3], [-1], [0], [12]], dtype=np.int32))
rng = np.random.default_rng(16)
for name, shape in [("mlp-x-5x12", (5, 12)), ("mlp-w1-12x20", (12, 20)), ("mlp-b1-20", (20,)), ("mlp-w2-20x3", (20, 3))]:
    save(name + "-f32", rng.integers(-3, 4, shape).astype(np.float32))
save("b-2x3-i1", np.array([[True, False, True], [False, False, True]]))
save("conv-x-1x2x5x6-f32", rng.integers(-3, 4, (1, 2, 5, 6)).astype(np.float32))
save("conv-k-3x2x3x2-f32", rng.integers(-2, 3, (3, 2, 3, 2)).astype(np.float32))
save("shard-x-4x4-f32", np.arange(-8, 8, dtype=np.float32).reshape(4, 4))
save("shard-w-4x2-f32", np.arange(-4, 4, dtype=np.float32).reshape(4, 2))
save("host-x-3x5-f32", np.arange(15, dtype=np.float32).reshape(3, 5) / 4)
save("host-d-3x5-f64", np.arange(15, dtype=np.float64).reshape(3, 5) / 8)
save("shard-img-1x3x12x10-f32", rng.integers(-3, 4, (1, 3, 12, 10)).astype(np.float32))
save("shard-k-5x3x3x3-f32", rng.integers(-2, 3, (5, 3, 3, 3)).astype(np.float32))
# i8 matmul operands (as i32; the graph casts them): products whose sums wrap around i8.
save("i8-x-5x12-i32", (np.arange(60, dtype=np.int32).reshape(5, 12) * 37 % 255) - 127)
save("i8-w-12x7-i32", (np.arange(84, dtype=np.int32).reshape(12, 7) * 53 % 255) - 127)
