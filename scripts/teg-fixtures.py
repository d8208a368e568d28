#!/usr/bin/env python3
"""Writes the NumPy fixtures of tests/teg_fixtures.rs into tests/data/teg/: for each case, its inputs and the
result NumPy computes for the op's definition. Run it (with NumPy installed) only to change the fixtures; the
test reads the checked-in files and needs no Python.

    python3 scripts/teg-fixtures.py
"""
import math
import os

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "teg")
rng = np.random.default_rng(20261123)


def save(name, array):
    np.save(os.path.join(OUT, name + ".npy"), array)


def main():
    os.makedirs(OUT, exist_ok=True)
    a = rng.standard_normal((3, 5)).astype(np.float32)
    b = rng.standard_normal((3, 5)).astype(np.float32)
    pos = (rng.random((3, 5)) + 0.1).astype(np.float32)
    save("a", a)
    save("b", b)
    save("pos", pos)
    save("add", a + b)
    save("sub", a - b)
    save("mul", a * b)
    save("div", a / b)
    save("max", np.maximum(a, b))
    save("min", np.minimum(a, b))
    save("abs", np.abs(a))
    save("neg", -a)
    save("exp", np.exp(a))
    save("log", np.log(pos))
    save("sqrt", np.sqrt(pos))
    save("tanh", np.tanh(a))
    save("relu", np.maximum(a, np.float32(0)))
    erf = np.vectorize(math.erf)
    save("gelu", (0.5 * a.astype(np.float64) * (1 + erf(a.astype(np.float64) / math.sqrt(2)))).astype(np.float32))
    save("clip", np.clip(a, np.float32(-0.5), np.float32(0.5)))
    save("clip_min", np.clip(a, np.float32(-0.5), None))
    save("clip_max", np.clip(a, None, np.float32(0.5)))
    a64 = a.astype(np.float64)
    save("gelu_tanh", (0.5 * a64 * (1 + np.tanh(math.sqrt(2 / math.pi) * (a64 + 0.044715 * a64**3)))).astype(np.float32))
    save("lt", a < b)
    save("where", np.where(a < b, a, b))
    save("cast_i32", a.astype(np.int32))
    save("cast_f16", a.astype(np.float16))
    a16, b16 = a.astype(np.float16), b.astype(np.float16)
    save("a16", a16)
    save("b16", b16)
    save("add16", a16 + b16)
    save("mul16", a16 * b16)
    ai = rng.integers(-50, 50, (3, 5), dtype=np.int32)
    bi = rng.integers(1, 9, (3, 5), dtype=np.int32)
    save("ai", ai)
    save("bi", bi)
    save("divi", (np.trunc(ai / bi)).astype(np.int32))
    # Reductions over the second dimension (w) and both.
    save("sum_w", a.sum(axis=1))
    save("mean_w", a.mean(axis=1))
    save("max_h", a.max(axis=0))
    save("min_all", np.array(a.min(), dtype=np.float32))
    save("prod_h", a.prod(axis=0))
    # Views.
    save("permute", a.T.copy())
    save("reverse", a[:, ::-1].copy())
    save("slice", a[:, 1:5:2].copy())
    save("slice_down", a[:, 4::-2].copy())
    save("slice_back", a[:, 3:0:-1].copy())
    save("select", a[:, 2].copy())
    save("select_last", a[-1, :].copy())
    save("concat", np.concatenate([a, b], axis=0))
    save("interleave", np.stack([a, b], axis=2).reshape(3, 10))
    save("repeat", np.concatenate([a, a, a], axis=1))
    save("pad_reflect", np.pad(a, ((0, 0), (2, 1)), mode="reflect"))
    save("pad_wrap", np.pad(a, ((1, 2), (0, 0)), mode="wrap"))
    save("pad_reflect_wide", np.pad(a, ((0, 0), (9, 11)), mode="reflect"))
    save("pad_wrap_wide", np.pad(a, ((7, 4), (0, 0)), mode="wrap"))
    save("pad_constant", np.pad(a, ((0, 0), (1, 1)), mode="constant", constant_values=np.float32(7.5)))
    # Block operators.
    x = rng.standard_normal((16, 24)).astype(np.float32)
    w = rng.standard_normal((24, 8)).astype(np.float32)
    bias = rng.standard_normal(8).astype(np.float32)
    save("x", x)
    save("w", w)
    save("bias", bias)
    save("matmul", x @ w)
    save("linear", x @ w + bias)
    save("prod", x[:, :, None] * w[None, :, :])
    img = rng.standard_normal((2, 3, 9, 8)).astype(np.float32)
    ker = rng.standard_normal((4, 3, 3, 2)).astype(np.float32)
    save("img", img)
    save("ker", ker)
    save("conv", conv2d(img, ker, (2, 1), (1, 2), (1, 1)))
    # Broadcasting by name: a row [w] and a column [h, w=1] against [h, w], and two tensors that both stretch.
    row = rng.standard_normal(5).astype(np.float32)
    col = rng.standard_normal((3, 1)).astype(np.float32)
    save("row", row)
    save("col", col)
    for name, f in [("add", np.add), ("sub", np.subtract), ("mul", np.multiply), ("div", np.divide),
                    ("max", np.maximum), ("min", np.minimum)]:
        save(name + "_row", f(a, row))
    save("add_col", a + col)
    save("lt_row", a < row)
    save("where_row", np.where(a < row, a, row))
    save("broadcast_row", np.broadcast_to(row, (3, 5)).copy())
    save("broadcast_col", np.broadcast_to(col, (2, 3, 5)).copy())
    p3 = rng.standard_normal((4, 1, 5)).astype(np.float32)
    q3 = rng.standard_normal((4, 3, 1)).astype(np.float32)
    save("p3", p3)
    save("q3", q3)
    save("mul_both", p3 * q3)
    rowi = rng.integers(1, 9, 5, dtype=np.int32)
    save("rowi", rowi)
    save("divi_row", np.trunc(ai / rowi).astype(np.int32))
    # Masked reductions: only the marked cells take part; a result cell with none is the default.
    mask = a > 0.5
    mask[1, :] = False
    save("mask", mask)
    save("masked_min_w", np.where(mask.any(1), np.where(mask, a, np.inf).min(1), -1).astype(np.float32))
    save("masked_sum_h", np.where(mask, a, 0).sum(0).astype(np.float32))
    cnt = mask.sum(0)
    mean_h = np.where(mask, a.astype(np.float64), 0).sum(0) / np.maximum(cnt, 1)
    save("masked_mean_h", np.where(cnt > 0, mean_h, 7).astype(np.float32))
    rows = rng.random(3) > 0.4
    rows[0] = True
    save("rowmask", rows)
    save("masked_max_rows", np.where(rows[:, None], a, -np.inf).max(0))
    # Contractions by name (einsum): x^T · g over the batch, batched, permuted, two summed dimensions, an outer
    # product, and integers.
    g = rng.standard_normal((16, 8)).astype(np.float32)
    save("g", g)
    save("xt_g", (x.astype(np.float64).T @ g.astype(np.float64)).astype(np.float32))
    xb = rng.standard_normal((3, 4, 5)).astype(np.float32)
    wb = rng.standard_normal((3, 5, 6)).astype(np.float32)
    save("xb", xb)
    save("wb", wb)
    save("batched", np.einsum("bmk,bkn->bmn", xb.astype(np.float64), wb.astype(np.float64)).astype(np.float32))
    save("batched_nbm", np.einsum("bmk,bkn->nbm", xb.astype(np.float64), wb.astype(np.float64)).astype(np.float32))
    x2 = rng.standard_normal((4, 3, 5)).astype(np.float32)
    w2 = rng.standard_normal((5, 3, 2)).astype(np.float32)
    save("x2", x2)
    save("w2", w2)
    save("two_summed", np.einsum("mab,ban->mn", x2.astype(np.float64), w2.astype(np.float64)).astype(np.float32))
    save("outer", np.einsum("m,n->mn", row, bias))
    save("int_contract", np.einsum("hw,hw->w", ai.astype(np.int64), bi.astype(np.int64)).astype(np.int32))
    save("masked_max_i", np.where(mask.any(0), np.where(mask, ai, np.iinfo(np.int32).min).max(0), -1).astype(np.int32))


def conv2d(x, k, s, d, p):
    n, c, h, w = x.shape
    o, _, kh, kw = k.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])))
    oh = (h + 2 * p[0] - (kh - 1) * d[0] - 1) // s[0] + 1
    ow = (w + 2 * p[1] - (kw - 1) * d[1] - 1) // s[1] + 1
    y = np.zeros((n, o, oh, ow))
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, :, i * d[0] : i * d[0] + s[0] * (oh - 1) + 1 : s[0], j * d[1] : j * d[1] + s[1] * (ow - 1) + 1 : s[1]]
            y += np.einsum("nchw,oc->nohw", patch, k[:, :, i, j].astype(np.float64))
    return y.astype(np.float32)


if __name__ == "__main__":
    main()
