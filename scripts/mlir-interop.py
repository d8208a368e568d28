#!/usr/bin/env python3
"""MLIR interop check: for every valid chunk of the lit corpus and the examples,
  1. what `tap-opt --print-op-generic` prints is accepted by `mlir-opt-22 --allow-unregistered-dialect`, and
  2. what `mlir-opt-22 --mlir-print-op-generic` prints (with and without --mlir-print-debuginfo) is read by
     `tap-opt`, giving the same IR (the same generic print, locations aside).
Usage: mlir-interop.py TAP_OPT MLIR_OPT
"""
import pathlib, subprocess, sys, tempfile

def run(cmd, stdin=None):
    return subprocess.run(cmd, input=stdin, capture_output=True, text=True)

def chunks(path):
    text = path.read_text()
    return text.split("\n// -----\n")

def main():
    tap, mlir = sys.argv[1], sys.argv[2]
    root = pathlib.Path(__file__).resolve().parent.parent
    files = sorted(list((root / "test/lit").rglob("*.tap")) + list((root / "examples").rglob("*.tap")))
    checked = failures = 0
    for path in files:
        for i, chunk in enumerate(chunks(path)):
            flags = ["--allow-unregistered-dialect"]
            ours = run([tap, *flags, "--print-op-generic", "-"], chunk)
            if ours.returncode != 0:
                continue  # an invalid input on purpose
            where = f"{path.relative_to(root)}#{i}"
            accepted = run([mlir, "--allow-unregistered-dialect", "-"], ours.stdout)
            if accepted.returncode != 0:
                failures += 1
                print(f"FAIL {where}: mlir-opt-22 rejects tap-opt's generic output:\n{accepted.stderr}")
                continue
            for extra in ([], ["--mlir-print-debuginfo"]):
                theirs = run([mlir, "--allow-unregistered-dialect", "--mlir-print-op-generic", *extra, "-"], ours.stdout)
                back = run([tap, *flags, "--print-op-generic", "-"], theirs.stdout)
                if back.returncode != 0 or back.stdout != ours.stdout:
                    failures += 1
                    print(f"FAIL {where} ({' '.join(extra) or 'no debuginfo'}): tap-opt reads mlir-opt's output differently")
                    print(back.stderr or "".join(f"  ours:   {a}\n  theirs: {b}\n" for a, b in zip(ours.stdout.splitlines(), back.stdout.splitlines()) if a != b)[:2000])
            checked += 1
    print(f"MLIR interop: {checked} chunks checked in both directions, {failures} failures")
    return 1 if failures or checked == 0 else 0

if __name__ == "__main__":
    sys.exit(main())
