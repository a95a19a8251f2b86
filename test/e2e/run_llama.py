"""Imports, binds, folds and raises an exported LLaMA graph and checks it.

  run_llama.py BIN_DIR MODEL_DIR GRAPH WORK_DIR

GRAPH is prefill or decode: MODEL_DIR/GRAPH.onnx with inputs
MODEL_DIR/inputs_GRAPH.npz. Prints the raised op counts, checks that no shape
computation survives tfm-fold-shapes (after tfm-bind-position-inputs, for
graphs that take position_ids or attention_mask), and compares `wafer-run eval` of the
imported and of the raised module with ONNX Runtime (test/reference): every
output's max abs error must be at most 1e-4 of its largest magnitude.
Exit code 1 on any failure.
"""
import os
import re
import subprocess
import sys
from collections import Counter

import numpy as np

TOLERANCE = 1e-4
SHAPE_OPS = ("shape", "range", "constant_of_shape", "equal", "trilu")
RAISED = ("embed", "linear", "rms_norm", "rope", "attention", "swiglu")


def run(*args):
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"FAILED: {' '.join(args)}\n{done.stderr.strip()}")
    return done.stdout


def op_counts(path):
    with open(path) as f:
        return Counter(re.findall(r"= tfm\.([a-z_]+)", f.read()))


def compare(label, got_path, ref):
    got = np.load(got_path)
    worst = 0.0
    for name in ref.files:
        if name not in got.files:
            sys.exit(f"FAILED: {label}: output {name} missing")
        if got[name].shape != ref[name].shape:
            sys.exit(f"FAILED: {label}: {name} has shape {got[name].shape}, "
                     f"reference {ref[name].shape}")
        scale = max(float(np.abs(ref[name]).max()), 1e-30)
        error = float(np.abs(got[name] - ref[name]).max()) / scale
        worst = max(worst, error)
        if error > TOLERANCE:
            sys.exit(f"FAILED: {label}: {name} relative error {error:.3e}")
    print(f"{label}: max relative error {worst:.2e} ok")


def main():
    bin_dir, model_dir, graph, work = sys.argv[1:5]
    os.makedirs(work, exist_ok=True)
    model = os.path.join(model_dir, f"{graph}.onnx")
    inputs = os.path.join(model_dir, f"inputs_{graph}.npz")
    shapes = []
    with np.load(inputs) as arrays:
        for name in arrays.files:
            dims = "x".join(str(d) for d in arrays[name].shape)
            shapes += ["--input-shape", f"{name}={dims}"]
    tool = lambda name: os.path.join(bin_dir, name)
    imported = os.path.join(work, f"{graph}.mlir")
    folded = os.path.join(work, f"{graph}.folded.mlir")
    raised = os.path.join(work, f"{graph}.raised.mlir")
    run(tool("wafer-translate"), "--import-onnx", model, *shapes, "-o",
        imported)
    run(tool("wafer-opt"), imported,
        "--pass-pipeline=builtin.module(tfm-bind-position-inputs,"
        "func.func(tfm-fold-shapes))", "-o", folded)
    left = {op: n for op, n in op_counts(folded).items() if op in SHAPE_OPS}
    if left:
        sys.exit(f"FAILED: shape computation left after folding: {left}")
    run(tool("wafer-opt"), folded,
        "--pass-pipeline=builtin.module(func.func(tfm-raise-transformer))",
        "-o", raised)
    counts = op_counts(raised)
    print(f"{graph} raised: " +
          " ".join(f"{op}={counts.get(op, 0)}" for op in RAISED))

    reference = os.path.join(work, f"{graph}.ort.npz")
    runner = os.path.join(os.path.dirname(__file__), "..", "reference",
                          "run_ort.mjs")
    run("node", runner, model, inputs, reference)
    ref = np.load(reference)
    for label, module in (("imported", imported), ("raised", raised)):
        out = os.path.join(work, f"{graph}.{label}.npz")
        run(tool("wafer-run"), "eval", module, "--inputs", inputs,
            "--outputs", out)
        compare(f"{graph} {label}", out, ref)


if __name__ == "__main__":
    main()
