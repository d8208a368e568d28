#!/usr/bin/env python3
"""NumPy's side of `cargo bench --bench teg` and `--bench npu`: the median seconds of each case the Rust side runs (of 11 runs, 101 under a millisecond), at the same
sizes, one line each: `<case> <seconds>`. Compute only: inputs are made once, each run calls and frees. Needs
NumPy. With case names as arguments, runs only those."""
import sys
import time

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view


def median(f):
    """Median of 11 runs, or of 101 for a case under a millisecond (its median moves with the machine's noise)."""
    t = time.perf_counter()
    f()
    runs = 101 if time.perf_counter() - t < 1e-3 else 11
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    times.sort()
    return times[len(times) // 2]


def conv2d(x, k):
    """A 3x3 convolution with padding 1, stride 1: windows of the padded input contracted with the kernels."""
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    windows = sliding_window_view(xp, (3, 3), axis=(2, 3))  # [n, c, h, w, kh, kw]
    return np.tensordot(windows, k, axes=([1, 4, 5], [1, 2, 3])).transpose(0, 3, 1, 2)


rng = np.random.default_rng(1)
f32 = lambda *shape: rng.standard_normal(shape).astype(np.float32)
a512, b512 = f32(512, 512), f32(512, 512)
a, b = f32(1024, 1024), f32(1024, 1024)
img, ker = f32(4, 16, 64, 64), f32(32, 16, 3, 3)
s, bias = f32(1024), f32(1024)
x, y = f32(1 << 24), f32(1 << 24)
cases = {
    "matmul512": lambda: np.matmul(a512, b512),
    "matmul1024": lambda: np.matmul(a, b),
    "conv2d": lambda: conv2d(img, ker),
    "relu_affine": lambda: np.maximum(a * s + bias, np.float32(0)),
    "sum_rows": lambda: a.sum(axis=0),
    "max_cols": lambda: a.max(axis=1),
    "add16m": lambda: np.add(x, y),
}
wanted = sys.argv[1:] or list(cases)
for name in wanted:
    print(name, median(cases[name]))
