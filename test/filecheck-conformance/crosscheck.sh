#!/usr/bin/env bash
# Cross-checks the FileCheck conformance corpus against a reference FileCheck.
#
# usage: crosscheck.sh REAL_FILECHECK OUR_FILECHECK [--stderr]
#
# For every case NAME (NAME.chk, NAME.in, NAME.args, NAME.exit) both binaries run as
#   BIN NAME.chk --input-file NAME.in $(cat NAME.args)
# from this directory. The reference must exit with NAME.exit, or with NAME.llvm-exit when that
# file exists (a documented, intentional divergence: e.g. `\d` is rejected by tap-filecheck but
# silently treated as the letter `d` by LLVM). Ours must exit with NAME.exit. Any other
# exit-code difference fails the script. With --stderr, stderr texts are compared too
# (informational: reported, not a failure).
set -u
if [ $# -lt 2 ]; then
  echo "usage: $0 REAL_FILECHECK OUR_FILECHECK [--stderr]" >&2
  exit 2
fi
real=$1
ours=$2
cmp_stderr=${3:-}
abspath() { case $1 in /*) echo "$1" ;; */*) echo "$PWD/$1" ;; *) command -v "$1" ;; esac; }
real=$(abspath "$real")
ours=$(abspath "$ours")
cd "$(dirname "$0")" || exit 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
total=0 failed=0 divergent=0 same_stderr=0
for chk in *.chk; do
  name=${chk%.chk}
  total=$((total + 1))
  # shellcheck disable=SC2046
  args=$(cat "$name.args")
  # shellcheck disable=SC2086
  "$real" "$name.chk" --input-file "$name.in" $args </dev/null >/dev/null 2>"$tmp/real.err"
  real_rc=$?
  # shellcheck disable=SC2086
  "$ours" "$name.chk" --input-file "$name.in" $args </dev/null >/dev/null 2>"$tmp/ours.err"
  ours_rc=$?
  want=$(tr -d '[:space:]' <"$name.exit")
  want_real=$want
  if [ -f "$name.llvm-exit" ]; then
    want_real=$(tr -d '[:space:]' <"$name.llvm-exit")
    divergent=$((divergent + 1))
  fi
  status=
  if [ "$real_rc" != "$want_real" ]; then status="reference exited $real_rc, corpus expects $want_real; "; fi
  if [ "$ours_rc" != "$want" ]; then status="${status}ours exited $ours_rc, corpus expects $want"; fi
  if [ -n "$status" ]; then
    status="FAIL ($status)"
    failed=$((failed + 1))
    echo "$name: $status"
  fi
  if [ "$cmp_stderr" = --stderr ]; then
    if cmp -s "$tmp/real.err" "$tmp/ours.err"; then
      same_stderr=$((same_stderr + 1))
    else
      echo "$name: stderr differs"
      diff "$tmp/real.err" "$tmp/ours.err" | sed 's/^/    /' | head -20
    fi
  fi
done
echo "crosscheck: $total cases, $failed failed, $divergent intentional divergences"
if [ "$cmp_stderr" = --stderr ]; then echo "crosscheck: identical stderr in $same_stderr/$total cases"; fi
[ "$failed" -eq 0 ]
