#!/usr/bin/env python3
"""Writes the NumPy fixtures of the NPU examples (examples/npu/*.tap) into examples/npu/data/: each example's
inputs and the output NumPy computes for it. Run it (with NumPy installed) only to change the fixtures;
tests/npu_examples.rs reads the checked-in files and needs no Python.

    python3 scripts/npu-fixtures.py
"""
import os

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "npu", "data")
rng = np.random.default_rng(20261127)


def save(name, array):
    np.save(os.path.join(OUT, name + ".npy"), np.ascontiguousarray(array, dtype=np.float32).reshape(-1))


def bf16(x):
    """x rounded to bfloat16 (to nearest, ties to even) and widened back to float32: what npu.cast does."""
    u = np.asarray(x, dtype=np.float32).view(np.uint32)
    rounded = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000
    return rounded.astype(np.uint32).view(np.float32)


def main():
    os.makedirs(OUT, exist_ok=True)
    # tiled-matmul.tap: C = A @ B with B given as Bt [N, K].
    a = rng.standard_normal((64, 128)).astype(np.float32)
    bt = rng.standard_normal((64, 128)).astype(np.float32)
    save("tiled-matmul-a", a)
    save("tiled-matmul-bt", bt)
    save("tiled-matmul-c", a @ bt.T)
    # matmul-bias-relu.tap: y = relu(bf16(x) @ bf16(Wt).T + b), products and sums in float32.
    x = rng.standard_normal((16, 32)).astype(np.float32)
    wt = rng.standard_normal((16, 32)).astype(np.float32)
    b = rng.standard_normal(16).astype(np.float32)
    save("mbr-x", x)
    save("mbr-wt", wt)
    save("mbr-b", b)
    save("mbr-y", np.maximum(bf16(x) @ bf16(wt).T + b, 0))
    # reduce-slices.tap: y[c] = sum over rows r and i of x[r, 64c + i].
    xs = rng.standard_normal((8, 256)).astype(np.float32)
    save("reduce-x", xs)
    save("reduce-y", xs.reshape(8, 4, 64).sum(axis=(0, 2)))
    # two-chip.tap: out = relu(x) on chip 0, sent to chip 1, plus y there.
    x2 = rng.standard_normal(256).astype(np.float32)
    y2 = rng.standard_normal(256).astype(np.float32)
    save("two-chip-x", x2)
    save("two-chip-y", y2)
    save("two-chip-out", np.maximum(x2, 0) + y2)


if __name__ == "__main__":
    main()
