# Configuration for running test/lit under real LLVM lit (the cross-check; `cargo test --test lit` is the
# primary runner and does not read this file). See scripts/lit-crosscheck.sh.
#
#   TAP_OPT=<path>/tap-opt FILECHECK=<FileCheck> python3 <lit.py> -sv test/lit
#
# Tools: `tap-opt` from TAP_OPT (or PATH); `FileCheck` from FILECHECK (or PATH: FileCheck, FileCheck-19/22/14);
# every other `tap-*` binary next to tap-opt (tap-filecheck, tap-run, ...) by its bare name, overridable as
# TAP_<NAME> (e.g. TAP_FILECHECK, TAP_RUN). Substitution keys are word-bounded bare tool names, never %-names.
# Features: `interpreter`; `npu-device` if TAP_HAS_NPU_DEVICE is set; extra ones from TAP_LIT_FEATURES.
# %t lives under TAP_LIT_EXEC_ROOT (default: <repo>/target/lit), like the in-repo runner's.

import os
import shutil

import lit.formats

config.name = "TAP"
config.test_format = lit.formats.ShTest(execute_external=False)  # lit's internal shell provides `not`
config.suffixes = [".tap"]
config.excludes = ["Inputs", "lit.cfg.py"]
config.test_source_root = os.path.dirname(os.path.abspath(__file__))
config.test_exec_root = os.environ.get("TAP_LIT_EXEC_ROOT") or os.path.join(
    config.test_source_root, "..", "..", "target", "lit"
)


def tool_sub(name, path):
    # Word-bounded: not after a word character, '/', '.' or '-', so paths and options that contain the name
    # stay intact, and an expansion (an absolute path) is never expanded again.
    config.substitutions.append((r"(?<![\w/.-])" + name.replace("-", r"\-") + r"(?![\w-])", path))


tap_opt = os.environ.get("TAP_OPT") or shutil.which("tap-opt") or "tap-opt"
bin_dir = os.path.dirname(tap_opt) if os.path.isabs(tap_opt) else None
filecheck = (
    os.environ.get("FILECHECK")
    or shutil.which("FileCheck")
    or shutil.which("FileCheck-19")
    or shutil.which("FileCheck-22")
    or shutil.which("FileCheck-14")
    or "FileCheck"
)

tools = {"tap-opt": tap_opt}
if bin_dir and os.path.isdir(bin_dir):
    for entry in sorted(os.listdir(bin_dir)):
        path = os.path.join(bin_dir, entry)
        if entry.startswith("tap-") and "." not in entry and os.path.isfile(path) and os.access(path, os.X_OK):
            tools.setdefault(entry, path)
for name in list(tools) + ["tap-filecheck", "tap-run"]:
    override = os.environ.get(name.upper().replace("-", "_"))  # TAP_FILECHECK, TAP_RUN, ...
    if override:
        tools[name] = override
for name, path in sorted(tools.items()):
    tool_sub(name, path)
tool_sub("FileCheck", filecheck)

config.environment["FILECHECK_OPTS"] = "--dump-input=fail"
config.available_features.add("interpreter")
if os.environ.get("TAP_HAS_NPU_DEVICE"):
    config.available_features.add("npu-device")
for feature in os.environ.get("TAP_LIT_FEATURES", "").replace(",", " ").split():
    config.available_features.add(feature)

lit_config.note("tap-opt: %s" % tap_opt)
lit_config.note("FileCheck: %s" % filecheck)
