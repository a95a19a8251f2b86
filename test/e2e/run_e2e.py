#!/usr/bin/python3
"""End-to-end numerics: wafer-run against ONNX Runtime.

For each case x grid: build the ONNX model (python/wafer/testing.py) in a
temporary directory, run `wafer-run run`, run ONNX Runtime through
test/reference/run_ort.mjs, and compare (max abs error relative to the
reference's largest magnitude, tolerance 1e-4).  Prints one line per run and
exits 1 on any failure.

    /usr/bin/python3 test/e2e/run_e2e.py [--wafer-run PATH] [--node PATH]
                                         [--filter SUBSTRING] [--keep DIR]

wafer-run defaults to $WAFER_RUN, else build/bin/wafer-run in the source tree.
test/reference/node_modules must exist (`npm install --ignore-scripts` there;
tools/setup.sh does it).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(SRC, "python"))

from wafer import testing  # noqa: E402

TOLERANCE = 1e-4
F16_COSINE = 0.999  # f16 runs: smallest cosine similarity to the reference
F16_GRIDS = ("5x7", "6x6", "8x8")
# Targets with too few routes per core for the K-trees, which are then
# relayed hop by hop (mesh-allocate-routes): 4 for one GEMV, 8 for a chain
# (its GEMVs reduce along both axes). Written into the work directory.
FEW_ROUTES = {"gemv_chain": 8, "gemv": 4}
few_routes_targets = {}
TIMEOUT = 300  # seconds, per wafer-run invocation

# (case builder, grids).  Shapes that divide the grids and shapes that don't.
DIVIDING = ["4x4", "8x8", "16x16"]
ALL_GRIDS = ["3x3", "4x4", "5x7", "8x8", "16x16"]


def cases():
    return [
        # GEMM whose sizes divide the 4x4, 8x8 and 16x16 grids.
        (testing.matmul(48, 64, 32, seed=1), DIVIDING),
        # GEMM whose sizes divide no grid; 5x7 is the acceptance case.
        (testing.matmul(37, 50, 29, seed=2), ALL_GRIDS),
        # Both operands runtime inputs.
        (testing.matmul_inputs(48, 64, 32, seed=3), ["8x8"]),
        (testing.matmul_inputs(37, 50, 29, seed=4), ["5x7"]),
        # GEMV that divides, and the 1x300x200 acceptance case on 6x6.
        (testing.gemv(64, 48, seed=5), DIVIDING),
        (testing.gemv(300, 200, seed=6), ["6x6"] + ALL_GRIDS),
        # Chained GEMVs alternate orientation instead of relayouting.
        (testing.gemv_chain(64, 48, 40, 24, seed=12), ["5x7", "8x8", "1x6"]),
        # Gemm with transB, bias C, alpha and beta.
        (testing.gemm(37, 50, 29, alpha=0.5, beta=2.0, trans_b=True,
                      bias="row", seed=7), ["5x7", "4x4"]),
        (testing.gemm(48, 64, 32, alpha=1.5, beta=-0.75, trans_b=True,
                      bias="full", seed=8), ["8x8"]),
        (testing.gemm(37, 50, 29, alpha=0.5, beta=2.0, trans_b=False,
                      bias=None, seed=11), ["3x3"]),
        # Add/Mul with broadcast bias and scale.
        (testing.add_mul(37, 50, 29, seed=9), ["5x7", "4x4"]),
        (testing.elementwise(20, 30, seed=10), ["3x3"]),
    ]


def variants(case, grid):
    """The algorithm options to run a case with: every GEMM algorithm for a
    GEMM, every allreduce for a GEMV."""
    f16 = [["--dtype", "f16"]] if grid in F16_GRIDS else []
    if case.name.startswith("gemv"):
        return [["--allreduce", "ktree", "--ktree-k", "2"],
                ["--allreduce", "ktree", "--ktree-k", "3"],
                ["--allreduce", "ktree", "--ktree-k", "0"],
                ["--allreduce", "pipeline"], ["--allreduce", "ring"],
                ["--allreduce", "ktree", "--target", next(
                    path for prefix, path in few_routes_targets.items()
                    if case.name.startswith(prefix))]] + f16
    if case.name.startswith(("matmul", "gemm")):
        return [["--gemm", g]
                for g in ("meshgemm", "cannon", "summa", "allgather")] + f16
    return [[]] + f16


def variant_name(options):
    if set(options) & set(few_routes_targets.values()):
        return "few-routes"
    if options[-2:] == ["--ktree-k", "0"]:
        return "ktree-auto"
    return "-".join(o for o in options if not o.startswith("--")) or "default"


def run(cmd, timeout=TIMEOUT):
    """(returncode, combined output); returncode None on timeout."""
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=timeout)
        return p.returncode, p.stdout
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        return None, out + f"\ntimed out after {timeout} s"


def last_lines(text, n=5):
    lines = [l for l in text.strip().splitlines() if l.strip()]
    return "\n".join("    | " + l for l in lines[-n:])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--wafer-run", default=os.environ.get(
        "WAFER_RUN", os.path.join(SRC, "build", "bin", "wafer-run")))
    ap.add_argument("--node", default=os.environ.get("NODE", "node"))
    ap.add_argument("--reference-dir", default=os.path.join(SRC, "test", "reference"))
    ap.add_argument("--filter", default="", help="run only cases whose name "
                    "or grid contains this")
    ap.add_argument("--keep", help="write the files into this directory "
                    "instead of a temporary one")
    args = ap.parse_args()

    run_ort = os.path.join(args.reference_dir, "run_ort.mjs")
    modules = os.path.join(args.reference_dir, "node_modules", "onnxruntime-node")
    if not os.path.isdir(modules):
        print(f"error: {modules} is missing: run 'npm install --ignore-scripts' "
              f"in {args.reference_dir} (tools/setup.sh does it)")
        return 1
    if shutil.which(args.node) is None:
        print(f"error: node ('{args.node}') not found")
        return 1
    if not os.access(args.wafer_run, os.X_OK):
        print(f"error: wafer-run not found at {args.wafer_run} (pass --wafer-run)")
        return 1

    workdir = args.keep or tempfile.mkdtemp(prefix="wafer-e2e-")
    os.makedirs(workdir, exist_ok=True)
    for prefix, routes in FEW_ROUTES.items():
        few_routes_targets[prefix] = os.path.join(workdir, f"routes{routes}.json")
        with open(few_routes_targets[prefix], "w") as f:
            json.dump({"base": "wse2", "routes_per_core": routes}, f)
    failures, total = [], 0
    start = time.time()
    try:
        for case, grids in cases():
            grids = [g for g in grids
                     if not args.filter or args.filter in case.name
                     or args.filter == g]
            if not grids:
                continue
            model, inputs = case.write(workdir)
            ref = os.path.join(workdir, case.name + ".ref.npz")
            code, out = run([args.node, run_ort, model, inputs, ref])
            if code != 0:
                for grid in grids:
                    total += 1
                    failures.append(f"{case.name} {grid}")
                    print(f"FAIL  {case.name:28} {grid:6} ONNX Runtime failed\n"
                          + last_lines(out))
                continue
            for grid, options in [(g, o) for g in grids
                                  for o in variants(case, g)]:
                total += 1
                label = f"{case.name:24} {grid:6} {variant_name(options):10}"
                stem = os.path.join(workdir, f"{case.name}.{grid}")
                outputs, stats = stem + ".out.npz", stem + ".stats.json"
                t0 = time.time()
                code, out = run([args.wafer_run, "run", model, "--grid", grid,
                                 "--inputs", inputs, "--outputs", outputs,
                                 "--stats", stats] + options)
                secs = time.time() - t0
                if code != 0:
                    failures.append(label)
                    what = "timed out" if code is None else f"exit {code}"
                    print(f"FAIL  {label} wafer-run {what}\n" + last_lines(out))
                    continue
                try:
                    with open(stats) as f:
                        cycles = json.load(f)["cycles"]
                    if "f16" in options:
                        cos = testing.cosine(outputs, ref)
                        ok, check = cos >= F16_COSINE, f"cosine {cos:.7f}"
                    else:
                        rel = testing.compare(outputs, ref)
                        ok, check = rel <= TOLERANCE, f"rel err {rel:.2e}"
                except Exception as e:  # bad files are failures, not crashes
                    failures.append(label)
                    print(f"FAIL  {label} {e}")
                    continue
                if not ok:
                    failures.append(label)
                print(f"{'PASS' if ok else 'FAIL'}  {label} "
                      f"cycles {cycles:>9}  {check}  ({secs:.2f} s)",
                      flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)

    print(f"{total - len(failures)}/{total} passed in {time.time() - start:.1f} s"
          f" (tolerance {TOLERANCE:g}; f16: cosine >= {F16_COSINE})")
    if failures:
        print("failed: " + ", ".join(failures))
        return 1
    if total == 0:
        print("error: no case matched")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
