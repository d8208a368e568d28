#!/usr/bin/env python3
"""NumPy's side of `cargo bench --bench teg`: median seconds of a 1024x1024 f32 matmul and of a 16M-element f32
add (the same sizes the Rust side runs), one line each: `matmul <s>`, `add <s>`. Needs NumPy."""
import time

import numpy as np


def median(f, runs):
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    times.sort()
    return times[len(times) // 2]


rng = np.random.default_rng(1)
a = rng.standard_normal((1024, 1024)).astype(np.float32)
b = rng.standard_normal((1024, 1024)).astype(np.float32)
np.matmul(a, b)
print("matmul", median(lambda: np.matmul(a, b), 11))
x = rng.standard_normal(1 << 24).astype(np.float32)
y = rng.standard_normal(1 << 24).astype(np.float32)
np.add(x, y)
print("add", median(lambda: np.add(x, y), 11))
