#!/usr/bin/python3
"""A billion-parameter decode step checked against ONNX Runtime (issue 12).

  /usr/bin/python3 tools/bench/billion_check.py [--out docs/bench]
      [--bin build/bin] [--config llama3.2-1b] [--work DIR]

Exports the exporter's llama3.2-1b decode graph with random weights
(python/wafer/export_llama.py, seed 1, written tensor by tensor into the
external data file), finds the smallest square wse2 grid its f16 plan fits
(the one-line error of a grid too small names it), and runs, one after the
other in this process: ONNX Runtime on the graph (test/reference/run_ort.mjs)
and `wafer-run run` in the functional mode on that grid (f16, the
emulator computing every core's numbers). Wall seconds and peak host memory
(max RSS, from wait4) of each, whole processes (loading the weights
included). The logits are compared: cosine (accepted at >= 0.999) and the
argmax. Writes OUT/billion_check.json, .md and .png.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(SRC, "python"))

from wafer import testing  # noqa: E402
from measure import timed  # noqa: E402


def smallest_grid(wafer_run, model, dims):
    """The side of the smallest square grid the plan fits, from the error
    of a grid that is too small (or 8 when it fits 8x8)."""
    proc = subprocess.run([wafer_run, "run", model, "--grid", "8x8",
                           "--dtype", "f16", "--mode", "analytic"] + dims,
                          capture_output=True, text=True)
    if proc.returncode == 0:
        return 8
    found = re.search(r"smallest square grid it fits is (\d+)x\1",
                      proc.stderr)
    if not found:
        sys.exit(f"no grid found: {proc.stderr.strip()}")
    return int(found.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(SRC, "docs", "bench"))
    ap.add_argument("--bin", default=os.path.join(SRC, "build", "bin"))
    ap.add_argument("--config", default="llama3.2-1b")
    ap.add_argument("--work", help="keep the export here (default: a "
                    "temporary directory, about 6 GB)")
    args = ap.parse_args()
    wafer_run = os.path.join(args.bin, "wafer-run")
    work = args.work or tempfile.mkdtemp(prefix="wafer-billion-")
    model = os.path.join(work, "decode.onnx")
    inputs = os.path.join(work, "inputs_decode.npz")
    if not os.path.exists(model):
        subprocess.run([sys.executable,
                        os.path.join(SRC, "python", "wafer", "export_llama.py"),
                        args.config, "--out-dir", work, "--weights", "random",
                        "--seed", "1", "--graphs", "decode"], check=True,
                       capture_output=True)
    past = np.load(inputs)["past.0.key"].shape[2]
    dims = ["--dim-param", f"past={past}"]
    side = smallest_grid(wafer_run, model, dims)
    grid = f"{side}x{side}"
    reference = os.path.join(work, "ort.npz")
    ort_s, ort_mb = timed(["node", os.path.join(SRC, "test", "reference",
                                                "run_ort.mjs"),
                           model, inputs, reference])
    outputs = os.path.join(work, "wafer.npz")
    stats_path = os.path.join(work, "stats.json")
    wafer_s, wafer_mb = timed([wafer_run, "run", model, "--grid", grid,
                               "--dtype", "f16", "--inputs", inputs,
                               "--outputs", outputs, "--stats", stats_path,
                               "--threads", "2"])
    with open(stats_path) as f:
        stats = json.load(f)
    ours = np.load(outputs)["logits"].astype(np.float64).ravel()
    ref = np.load(reference)["logits"].astype(np.float64).ravel()
    result = {
        "config": args.config, "grid": grid, "cores": side * side,
        "dtype": "f16", "past": int(past),
        "ort_s": ort_s, "ort_max_rss_mb": ort_mb,
        "wafer_functional_s": wafer_s, "wafer_max_rss_mb": wafer_mb,
        "wall_ratio": wafer_s / ort_s,
        "cosine": testing.cosine(outputs, reference),
        "same_argmax": bool(ours.argmax() == ref.argmax()),
        "max_abs_error": float(np.abs(ours - ref).max()),
        "max_abs_logit": float(np.abs(ref).max()),
        "cycles": stats["cycles"],
        "max_sram_bytes_per_core": stats["max_sram_bytes_per_core"],
    }
    result["accepted"] = result["cosine"] >= 0.999 and result["same_argmax"]
    print(json.dumps(result, indent=1))
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "billion_check.json"), "w") as f:
        json.dump(result, f, indent=1)
    lines = [
        "| model | grid | cosine | same argmax | max abs error (largest "
        "logit) | ORT s | wafer s | ratio | ORT MB | wafer MB |",
        "|---|---|---|---|---|---|---|---|---|---|",
        f"| {args.config} decode (past {past}), f16 | {grid} | "
        f"{result['cosine']:.6f} | {result['same_argmax']} | "
        f"{result['max_abs_error']:.4f} ({result['max_abs_logit']:.3f}) | "
        f"{ort_s:.1f} | {wafer_s:.1f} | {wafer_s / ort_s:.1f} | "
        f"{ort_mb:.0f} | {wafer_mb:.0f} |"]
    with open(os.path.join(args.out, "billion_check.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    plot(result, ref, ours, os.path.join(args.out, "billion_check.png"))
    print("\n".join(lines))
    return 0 if result["accepted"] else 1


def plot(result, ref, got, path):
    """The emulator's logits (`got`) against ONNX Runtime's (`ref`), and the
    two runs' seconds and memory."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.6))
    left.scatter(ref, got, s=1)
    left.set_xlabel("ONNX Runtime logit")
    left.set_ylabel("wafer logit (f16 emulator)")
    left.set_title(f"cosine {result['cosine']:.6f}")
    left.grid(alpha=0.3)
    names = ["ORT s", "wafer s", "ORT GB", "wafer GB"]
    values = [result["ort_s"], result["wafer_functional_s"],
              result["ort_max_rss_mb"] / 1024,
              result["wafer_max_rss_mb"] / 1024]
    right.bar(names, values, color=["gray", "tab:blue"] * 2)
    right.set_title(f"{result['config']} decode on {result['grid']}")
    right.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    sys.exit(main())
