#!/usr/bin/env bash
# Cross-checks the lit tests and the in-repo FileCheck against real LLVM tools.
#
#   scripts/lit-crosscheck.sh
#
# 1. builds the binaries (`cargo build --bins`, honouring CARGO_TARGET_DIR);
# 2. finds real lit and FileCheck (Debian's llvm-19-tools: /usr/lib/llvm-19/build/utils/lit/lit.py and
#    FileCheck-19; else llvm-22 ones, or `lit` and `FileCheck` on PATH when they are version 19 or newer: the
#    expected messages are modern FileCheck's, which LLVM 14 words differently). If they are missing and
#    apt-get can be used, installs llvm-19-tools; if that fails too, prints "lit-crosscheck: skipped: ..."
#    and exits 0;
# 3. runs (a) test/lit under real lit with real FileCheck, (b) test/lit under real lit with our
#    tap-filecheck as FileCheck, and (c) test/filecheck-conformance/crosscheck.sh REAL OURS if it exists.
#
# Exits non-zero if any of (a), (b), (c) fails. Extra lit arguments can be passed in LIT_ARGS, e.g.
# LIT_ARGS="--filter filecheck/". The primary test signal stays `cargo test` (tests/lit.rs), which needs
# none of these tools.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
target_dir=${CARGO_TARGET_DIR:-$repo/target}
case $target_dir in /*) ;; *) target_dir=$repo/$target_dir ;; esac

echo "lit-crosscheck: building binaries (target dir $target_dir)"
cargo build --bins
tap_opt=$target_dir/debug/tap-opt
our_filecheck=$target_dir/debug/tap-filecheck
for bin in "$tap_opt" "$our_filecheck"; do
  if [ ! -x "$bin" ]; then
    echo "lit-crosscheck: error: $bin was not built" >&2
    exit 1
  fi
done

lit_cmd=()
real_filecheck=
# Whether FileCheck `$1` is LLVM 19 or newer (older ones word their messages differently).
modern() {
  local major
  major=$("$1" --version 2>/dev/null | sed -n 's/.*LLVM version \([0-9]*\).*/\1/p' | head -n 1)
  [ -n "$major" ] && [ "$major" -ge 19 ]
}

find_tools() {
  lit_cmd=()
  real_filecheck=
  local v
  for v in 19 22; do
    if [ -f "/usr/lib/llvm-$v/build/utils/lit/lit.py" ]; then
      lit_cmd=(python3 "/usr/lib/llvm-$v/build/utils/lit/lit.py")
      break
    fi
  done
  if [ ${#lit_cmd[@]} -eq 0 ]; then
    for v in lit-22 lit; do
      if command -v "$v" >/dev/null 2>&1; then
        lit_cmd=("$(command -v "$v")")
        break
      fi
    done
  fi
  for v in FileCheck-19 FileCheck-22 /usr/lib/llvm-19/bin/FileCheck /usr/lib/llvm-22/bin/FileCheck FileCheck; do
    if command -v "$v" >/dev/null 2>&1 && modern "$v"; then
      real_filecheck=$(command -v "$v")
      break
    fi
  done
  [ ${#lit_cmd[@]} -gt 0 ] && [ -n "$real_filecheck" ] && command -v python3 >/dev/null 2>&1
}

if ! find_tools; then
  sudo=
  if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo=sudo
  fi
  if command -v apt-get >/dev/null 2>&1 && { [ "$(id -u)" -eq 0 ] || [ -n "$sudo" ]; }; then
    echo "lit-crosscheck: installing llvm-19-tools"
    if ! { $sudo apt-get update -qq && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
      --no-install-recommends llvm-19-tools python3; } >/dev/null; then
      echo "lit-crosscheck: apt-get install llvm-19-tools failed"
    fi
  fi
  if ! find_tools; then
    echo "lit-crosscheck: skipped: real lit and FileCheck not found (install llvm-19-tools)"
    exit 0
  fi
fi
echo "lit-crosscheck: lit: ${lit_cmd[*]}"
echo "lit-crosscheck: real FileCheck: $real_filecheck"
echo "lit-crosscheck: our FileCheck: $our_filecheck"

read -r -a lit_args <<<"${LIT_ARGS:-}"
failures=()

run_lit() { # NAME FILECHECK EXEC_ROOT
  echo
  echo "lit-crosscheck: ($1) test/lit under real lit, FileCheck = $2"
  if TAP_OPT=$tap_opt FILECHECK=$2 TAP_LIT_EXEC_ROOT=$3 \
    "${lit_cmd[@]}" -sv "${lit_args[@]}" "$repo/test/lit"; then
    echo "lit-crosscheck: ($1) ok"
  else
    echo "lit-crosscheck: ($1) FAILED"
    failures+=("($1) $4")
  fi
}

run_lit a "$real_filecheck" "$target_dir/lit-crosscheck/real-filecheck" "real lit + real FileCheck"
run_lit b "$our_filecheck" "$target_dir/lit-crosscheck/tap-filecheck" "real lit + tap-filecheck"

conformance=$repo/test/filecheck-conformance/crosscheck.sh
if [ -f "$conformance" ]; then
  echo
  echo "lit-crosscheck: (c) FileCheck conformance corpus, real vs ours"
  if bash "$conformance" "$real_filecheck" "$our_filecheck"; then
    echo "lit-crosscheck: (c) ok"
  else
    echo "lit-crosscheck: (c) FAILED"
    failures+=("(c) conformance corpus")
  fi
else
  echo "lit-crosscheck: (c) skipped: $conformance does not exist"
fi

echo
if [ ${#failures[@]} -gt 0 ]; then
  echo "lit-crosscheck: FAILED: ${failures[*]}"
  exit 1
fi
echo "lit-crosscheck: all cross-checks passed"
