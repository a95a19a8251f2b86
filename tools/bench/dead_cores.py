#!/usr/bin/python3
"""The cycle cost of dead cores: grids placed around fabric defects.

  /usr/bin/python3 tools/bench/dead_cores.py [--out docs/bench]
      [--wafer-run build/bin/wafer-run] [--seeds 3]

Exports the tiny and stories15m LLaMA graphs (python/wafer/export_llama.py,
random weights) and runs each configuration below with `wafer-run run` on
the wse2 target, clean and with a fraction of the grid's cores dead (chosen
uniformly among the H x W cores at the fabric's corner, one seed per
repetition), one after the other in this process. The compiler places the
grid around the defects (every dead core takes its fabric row and column),
so the outputs do not change (checked: identical logits in the functional
mode) and the cost is the longer paths. The cycles come from the timing
mode, which gives the functional mode's cycles exactly
(test/e2e/dead-cores.test checks it on defective fabrics too). Writes
OUT/dead_cores.json, OUT/dead_cores.png and OUT/dead_cores.md.
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile

import numpy as np

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# (model, graph, grid, dtype): the smallest square grids stories15m fits in
# f16, and the tiny model on a grid of the same order as its sizes.
CONFIGS = [("tiny", "decode", "16x16", "f32"),
           ("tiny", "prefill", "16x16", "f32"),
           ("stories15m", "decode", "36x36", "f16"),
           ("stories15m", "prefill", "48x48", "f16")]
FRACTIONS = [0.0, 0.005, 0.01, 0.02, 0.05]


def wafer_run(binary, model, inputs, grid, dtype, target, mode, workdir):
    stats = os.path.join(workdir, "stats.json")
    outputs = os.path.join(workdir, "out.npz")
    args = [binary, "run", model, "--grid", grid, "--dtype", dtype,
            "--target", target, "--mode", mode, "--inputs", inputs,
            "--stats", stats]
    if mode == "functional":
        args += ["--outputs", outputs]
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"FAILED: {' '.join(args)}\n{done.stderr.strip()}")
    with open(stats) as f:
        data = json.load(f)
    logits = None
    if mode == "functional":
        with np.load(outputs) as out:
            logits = out["logits"].copy()
    return data, logits


def defect_target(path, height, width, fraction, seed):
    count = round(fraction * height * width)
    rng = random.Random(seed)
    cores = rng.sample([(y, x) for y in range(height) for x in range(width)],
                       count)
    with open(path, "w") as f:
        json.dump({"base": "wse2", "dead_cores": sorted(cores)}, f)
    return count


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.join(SRC, "docs", "bench"))
    parser.add_argument("--wafer-run",
                        default=os.path.join(SRC, "build", "bin", "wafer-run"))
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as workdir:
        exported = set()
        for model, graph, grid, dtype in CONFIGS:
            model_dir = os.path.join(workdir, model)
            if model not in exported:
                subprocess.run([sys.executable,
                                os.path.join(SRC, "python", "wafer",
                                             "export_llama.py"),
                                model, "--out-dir", model_dir],
                               check=True, capture_output=True)
                exported.add(model)
            onnx = os.path.join(model_dir, f"{graph}.onnx")
            inputs = os.path.join(model_dir, f"inputs_{graph}.npz")
            height, width = map(int, grid.split("x"))
            clean, clean_logits = wafer_run(args.wafer_run, onnx, inputs, grid,
                                            dtype, "wse2", "functional",
                                            workdir)
            for fraction in FRACTIONS[1:]:
                for seed in range(args.seeds):
                    target = os.path.join(workdir, "dead.json")
                    count = defect_target(target, height, width, fraction,
                                          seed)
                    if count == 0:
                        continue
                    # The functional run once per fraction (the numbers
                    # cannot depend on the seed's placement).
                    mode = "functional" if seed == 0 else "timing"
                    stats, logits = wafer_run(args.wafer_run, onnx, inputs,
                                              grid, dtype, target, mode,
                                              workdir)
                    if logits is not None and not np.array_equal(
                            logits, clean_logits):
                        sys.exit(f"FAILED: {model} {graph} {grid}: logits "
                                 f"differ with {count} dead cores")
                    placement = stats["fabric_placement"]
                    row = {"model": model, "graph": graph, "grid": grid,
                           "dtype": dtype, "fraction": fraction,
                           "seed": seed, "dead_cores": count,
                           "span": [placement["rows"], placement["columns"]],
                           "clean_cycles": clean["cycles"],
                           "cycles": stats["cycles"],
                           "cost": stats["cycles"] / clean["cycles"] - 1}
                    rows.append(row)
                    print(f"{model} {graph} {grid} {dtype}: {count} dead "
                          f"({100 * fraction:.1f}%), seed {seed}: span "
                          f"{row['span'][0]}x{row['span'][1]}, cycles "
                          f"{clean['cycles']} -> {stats['cycles']} "
                          f"({100 * row['cost']:+.2f}%)", flush=True)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "dead_cores.json"), "w") as f:
        json.dump(rows, f, indent=1)
    write_table(rows, os.path.join(args.out, "dead_cores.md"))
    plot(rows, os.path.join(args.out, "dead_cores.png"))


def summary(rows):
    """(model, graph, grid, dtype, fraction) -> rows of its seeds."""
    groups = {}
    for r in rows:
        key = (r["model"], r["graph"], r["grid"], r["dtype"], r["fraction"])
        groups.setdefault(key, []).append(r)
    return groups


def write_table(rows, path):
    lines = ["| model | graph | grid | dtype | dead | dead cores | fabric span "
             "(HxW) | clean cycles | cycles (min..max over seeds) | cost |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for (model, graph, grid, dtype, fraction), group in summary(rows).items():
        cycles = [r["cycles"] for r in group]
        costs = [r["cost"] for r in group]
        spans = sorted({f"{r['span'][0]}x{r['span'][1]}" for r in group})
        lines.append(
            f"| {model} | {graph} | {grid} | {dtype} | {100 * fraction:.1f}% | "
            f"{group[0]['dead_cores']} | {', '.join(spans)} | "
            f"{group[0]['clean_cycles']} | {min(cycles)}..{max(cycles)} | "
            f"{100 * min(costs):+.1f}%..{100 * max(costs):+.1f}% |")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def plot(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4))
    series = {}
    for (model, graph, grid, dtype, fraction), group in summary(rows).items():
        mean = sum(r["cost"] for r in group) / len(group)
        series.setdefault(f"{model} {graph} {grid} {dtype}", []).append(
            (100 * fraction, 100 * mean))
    for label, points in series.items():
        xs, ys = zip(*sorted(points))
        ax.plot(xs, ys, marker="o", label=label)
    ax.set_xlabel("dead cores (% of the grid's cores)")
    ax.set_ylabel("extra cycles (%, mean over seeds)")
    ax.set_title("Grids placed around dead cores (wse2)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    main()
