#!/usr/bin/python3
"""Emulator speed against ONNX Runtime on the same graph (issue 12's yardstick).

  /usr/bin/python3 tools/bench/emulator_speed.py [--out docs/bench]
      [--bin build/bin] [--grids 48x48,96x96] [--repeat 3]

Exports the stories15m LLaMA decode graph (python/wafer/export_llama.py,
random weights), compiles it once per grid to a bundle (`wafer-run run
--save-bundle`, f16), then, side by side in this process and repeated
(best of --repeat, the machine is shared): ONNX Runtime on the ONNX graph
(test/reference/run_ort.mjs), and `wafer-run run BUNDLE` in the functional
and timing modes. Wall seconds and peak host memory (max RSS, from
wait4) of each; the ratios to ONNX Runtime are what to compare, not the
seconds. The functional run's outputs are checked against ONNX Runtime's
(f16: cosine >= 0.999, same argmax). Memory is compared with issue 12's
target, 1.5x the f16 weights plus the cores' SRAM high-water marks.
Writes OUT/emulator_speed.json, .md and .png.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(SRC, "python"))

from wafer import testing  # noqa: E402
from measure import timed  # noqa: E402


def best(cmd, repeat):
    runs = [timed(cmd) for _ in range(repeat)]
    return min(r[0] for r in runs), max(r[1] for r in runs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(SRC, "docs", "bench"))
    ap.add_argument("--bin", default=os.path.join(SRC, "build", "bin"))
    ap.add_argument("--grids", default="48x48,96x96")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    wafer_run = os.path.join(args.bin, "wafer-run")
    runner = os.path.join(SRC, "test", "reference", "run_ort.mjs")
    work = tempfile.mkdtemp(prefix="wafer-speed-")
    subprocess.run([sys.executable, os.path.join(SRC, "python", "wafer",
                                                 "export_llama.py"),
                    "stories15m", "--out-dir", work], check=True,
                   capture_output=True)
    model = os.path.join(work, "decode.onnx")
    inputs = os.path.join(work, "inputs_decode.npz")
    reference = os.path.join(work, "ort.npz")
    ort_s, ort_mb = best(["node", runner, model, inputs, reference],
                         args.repeat)
    rows = []
    for grid in args.grids.split(","):
        bundle = os.path.join(work, f"{grid}.bundle")
        outputs = os.path.join(work, f"{grid}.npz")
        compile_s, _ = timed([wafer_run, "run", model, "--grid", grid,
                              "--dtype", "f16", "--inputs", inputs,
                              "--mode", "timing", "--save-bundle", bundle])
        functional_s, functional_mb = best(
            [wafer_run, "run", bundle, "--inputs", inputs, "--outputs",
             outputs], args.repeat)
        # Issue 12's memory yardstick: 1.5x the f16 weights (half the f32
        # external data) plus the per-core SRAM high-water marks (bounded
        # by the largest times the cores).
        stats_path = os.path.join(work, f"{grid}.json")
        subprocess.run([wafer_run, "run", bundle, "--inputs", inputs,
                        "--mode", "timing", "--stats", stats_path],
                       check=True, capture_output=True)
        with open(stats_path) as f:
            sram = json.load(f)["max_sram_bytes_per_core"]
        height, width = (int(v) for v in grid.split("x"))
        weights_mb = os.path.getsize(model + ".data") / 2 / 2**20
        target_mb = 1.5 * (weights_mb + sram * height * width / 2**20)
        timing_s, timing_mb = best(
            [wafer_run, "run", bundle, "--inputs", inputs, "--mode",
             "timing"], args.repeat)
        cosine = testing.cosine(outputs, reference)
        same = bool(np.array_equal(
            np.load(outputs)["logits"].argmax(-1),
            np.load(reference)["logits"].argmax(-1)))
        rows.append({"grid": grid, "compile_and_timing_s": compile_s,
                     "functional_s": functional_s,
                     "functional_max_rss_mb": functional_mb,
                     "timing_s": timing_s, "timing_max_rss_mb": timing_mb,
                     "functional_vs_ort": functional_s / ort_s,
                     "memory_target_mb": target_mb,
                     "timing_vs_ort": timing_s / ort_s,
                     "cosine": cosine, "same_argmax": same})
        print(f"{grid}: functional {functional_s:.2f} s "
              f"({functional_s / ort_s:.1f}x ORT, {functional_mb:.0f} MB), "
              f"timing {timing_s:.2f} s ({timing_s / ort_s:.1f}x, "
              f"{timing_mb:.0f} MB), cosine {cosine:.6f}, argmax "
              f"{'same' if same else 'DIFFERENT'}", flush=True)
    result = {"model": "stories15m decode, f16, from a bundle",
              "ort_s": ort_s, "ort_max_rss_mb": ort_mb, "rows": rows}
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "emulator_speed.json"), "w") as f:
        json.dump(result, f, indent=1)
    lines = ["| grid | functional s | x ORT | max RSS MB (target) | timing s "
             "| x ORT | max RSS MB | cosine | argmax |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['grid']} | {r['functional_s']:.2f} | "
                     f"{r['functional_vs_ort']:.2f} | "
                     f"{r['functional_max_rss_mb']:.0f} "
                     f"({r['memory_target_mb']:.0f}) | {r['timing_s']:.2f} "
                     f"| {r['timing_vs_ort']:.1f} | "
                     f"{r['timing_max_rss_mb']:.0f} | {r['cosine']:.6f} | "
                     f"{'same' if r['same_argmax'] else 'different'} |")
    lines.append(f"\nONNX Runtime: {ort_s:.2f} s, {ort_mb:.0f} MB max RSS "
                 f"(node process, best of {args.repeat}).")
    with open(os.path.join(args.out, "emulator_speed.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    plot(result, os.path.join(args.out, "emulator_speed.png"))
    print("\n".join(lines))
    return 0


def plot(result, path):
    """Seconds and peak memory per grid, each mode next to ONNX Runtime."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rows = result["rows"]
    grids = [r["grid"] for r in rows]
    xs = np.arange(len(grids))
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.6))
    for axis, key, unit, ort in ((left, "_s", "wall seconds (best)",
                                  result["ort_s"]),
                                 (right, "_max_rss_mb", "max RSS (MB)",
                                  result["ort_max_rss_mb"])):
        for i, mode in enumerate(("functional", "timing")):
            axis.bar(xs + (i - 0.5) * 0.35, [r[mode + key] for r in rows],
                     0.35, label=mode)
        axis.axhline(ort, color="black", linestyle="--",
                     label="ONNX Runtime")
        axis.set_xticks(xs, grids)
        axis.set_ylabel(unit)
        axis.grid(axis="y", alpha=0.3)
    right.plot(xs, [r["memory_target_mb"] for r in rows], "r_",
               markersize=30, label="memory target")
    left.legend(fontsize=8)
    right.legend(fontsize=8, loc="lower center")
    fig.suptitle("stories15m decode (f16) on the emulator against ONNX Runtime")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    sys.exit(main())
