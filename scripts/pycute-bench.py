"""Times pycute (nvidia-cutlass's Python CuTe) on the layout-algebra cases of benches/layout.rs.

Reads one case per line on stdin: `op<TAB>a<TAB>b`, layouts in CuTe notation (b empty for unary ops, an integer
bound for complement). Prints `op<TAB>median microseconds per call` per case (or `op<TAB>error`).
"""
import re
import sys
import timeit

import pycute


def parse_tuple(text):
    text = text.replace(" ", "")
    value, rest = _parse(text, 0)
    assert rest == len(text), text
    return value


def _parse(s, i):
    if s[i] == "(":
        items, i = [], i + 1
        while s[i] != ")":
            item, i = _parse(s, i)
            items.append(item)
            if s[i] == ",":
                i += 1
        return tuple(items), i + 1
    m = re.match(r"-?\d+", s[i:])
    return int(m.group(0)), i + len(m.group(0))


def layout(text):
    shape, stride = text.split(":")
    return pycute.Layout(parse_tuple(shape), parse_tuple(stride))


def main():
    for line in sys.stdin:
        op, a, b = line.rstrip("\n").split("\t")
        la = layout(a)
        lb = None if b == "" or op == "complement" else layout(b)
        fn = {
            "compose": lambda: pycute.composition(la, lb),
            "complement": lambda: pycute.complement(la, int(b)),
            "coalesce": lambda: pycute.coalesce(la),
            "right_inverse": lambda: pycute.right_inverse(la),
            "left_inverse": lambda: pycute.left_inverse(la),
            "logical_divide": lambda: pycute.logical_divide(la, lb),
            "logical_product": lambda: pycute.logical_product(la, lb),
        }[op]
        try:
            runs = timeit.repeat(fn, number=200, repeat=15)
        except Exception:  # pycute rejects some inputs with an assertion
            print(f"{op}\terror")
            continue
        runs.sort()
        print(f"{op}\t{runs[len(runs) // 2] / 200 * 1e6:.3f}")


if __name__ == "__main__":
    main()
