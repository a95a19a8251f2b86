#!/usr/bin/python3
"""Fingerprints what the compiler and emulator produce, to prove a refactor
changed nothing.

    tools/refactor_snapshot.py record OUT.json [--bin build/bin] [--filter S]
    tools/refactor_snapshot.py compare BEFORE.json AFTER.json

`record` compiles and runs the end-to-end suite's configurations: every case,
grid and algorithm of test/e2e/run_e2e.py, and the tiny and alt LLaMA prefill
and decode graphs on the grids, GEMM algorithms, allreduces, KV policies and
dtypes of test/e2e/run_llama_mesh.py. For each run it stores the SHA-256 of
the program bundle (`wafer-run run --save-bundle`), of the bundle's text dump
(`wafer-translate --dump-bundle`, the lowered per-role programs; its target
line apart), of the
output arrays (their names, dtypes, shapes and values, not the .npz file's
bytes) and of the stats JSON (cycles total and per op), plus the
cycles for reading. A run that fails records its error line instead, so a
refactor must also fail the same way.

`compare` prints every run whose fingerprints differ and exits 1 if any do.
Use it around a refactor: record before, rebuild, record after, compare.
Needs Debian's python (numpy, onnx, torch) for the models; no ONNX Runtime.
"""

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(SRC, "python"))
sys.path.insert(0, os.path.join(SRC, "test", "e2e"))

from suite import configurations  # noqa: E402


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def arrays_sha(path):
    """The arrays of an .npz (names, dtypes, shapes, values), not its zip
    container's bytes, so that a change of the npz writer is no change of
    the outputs."""
    import numpy as np
    digest = hashlib.sha256()
    with np.load(path) as archive:
        for name in sorted(archive.files):
            a = archive[name]
            digest.update(f"{name} {a.dtype.str} {a.shape}\n".encode())
            digest.update(np.ascontiguousarray(a).tobytes())
    return digest.hexdigest()


def record(args):
    work = tempfile.mkdtemp(prefix="wafer-snapshot-")
    run_bin = os.path.join(args.bin, "wafer-run")
    translate = os.path.join(args.bin, "wafer-translate")
    runs = {}
    for name, model, inputs, options in configurations(work):
        if args.filter and args.filter not in name:
            continue
        bundle = os.path.join(work, "run.bundle")
        outputs = os.path.join(work, "run.out.npz")
        stats = os.path.join(work, "run.stats.json")
        for path in (bundle, outputs, stats):
            if os.path.exists(path):
                os.remove(path)
        done = subprocess.run([run_bin, "run", model, "--inputs", inputs,
                               "--outputs", outputs, "--stats", stats,
                               "--save-bundle", bundle] + options,
                              capture_output=True, text=True)
        if done.returncode != 0:
            error = done.stderr.strip().replace(work, "WORK")
            runs[name] = {"error": error}
            print(f"{name}: {error}", flush=True)
            continue
        dump = subprocess.run([translate, "--dump-bundle", bundle],
                              capture_output=True, check=True).stdout
        with open(stats) as f:
            cycles = json.load(f)["cycles"]
        # The target line apart, so that a change of the target's text form
        # shows as such and not as a different program.
        lines = dump.splitlines(keepends=True)
        target = b"".join(l for l in lines if l.startswith(b"target "))
        program = b"".join(l for l in lines if not l.startswith(b"target "))
        runs[name] = {"bundle": sha(bundle),
                      "program": hashlib.sha256(program).hexdigest(),
                      "target": hashlib.sha256(target).hexdigest(),
                      "outputs": arrays_sha(outputs), "stats": sha(stats),
                      "cycles": cycles}
        print(f"{name}: {cycles} cycles", flush=True)
    shutil.rmtree(work, ignore_errors=True)
    with open(args.out, "w") as f:
        json.dump(runs, f, indent=1, sort_keys=True)
    print(f"{len(runs)} runs recorded in {args.out}")
    return 0


def compare(args):
    with open(args.before) as f:
        before = json.load(f)
    with open(args.after) as f:
        after = json.load(f)
    differ = 0
    for name in sorted(set(before) | set(after)):
        a, b = before.get(name), after.get(name)
        if a == b:
            continue
        differ += 1
        if a is None or b is None:
            print(f"{name}: only in {'after' if a is None else 'before'}")
            continue
        keys = [k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
        print(f"{name}: differs in {', '.join(keys)}"
              + (f" (cycles {a.get('cycles')} -> {b.get('cycles')})"
                 if "cycles" in keys else ""))
    print(f"{len(before)} runs before, {len(after)} after, {differ} differ")
    return 1 if differ else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record")
    rec.add_argument("out")
    rec.add_argument("--bin", default=os.path.join(SRC, "build", "bin"))
    rec.add_argument("--filter", default="")
    cmp = sub.add_parser("compare")
    cmp.add_argument("before")
    cmp.add_argument("after")
    args = ap.parse_args()
    return record(args) if args.command == "record" else compare(args)


if __name__ == "__main__":
    sys.exit(main())
