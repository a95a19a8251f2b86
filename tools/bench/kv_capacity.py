#!/usr/bin/python3
"""KV cache capacity, shift vs concat, on whole decode graphs (paper Table 5).

  /usr/bin/python3 tools/bench/kv_capacity.py [--out docs/bench]
      [--wafer-run build/bin/wafer-run] [--dtype f16]

Exports the tiny and stories15m LLaMA decode graphs (python/wafer/
export_llama.py, random weights, past of 8 tokens), compiles and runs each
on several grids with `--kv shift` and `--kv concat` through `wafer-run run`,
one after the other in this process, and reads `kv_capacity_tokens` (the
decode tokens the caches can still take before some core's SRAM overflows)
and the cycles of the step from the statistics. Both policies must give the
same logits (checked: max abs difference). Writes OUT/kv.json, OUT/kv.png
and OUT/kv.md.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS = {"tiny": ["4x4", "8x8", "16x16", "32x32"],
          "stories15m": ["48x48", "64x64", "96x96"]}


def run(wafer_run, model, inputs, grid, kv, dtype, workdir):
    stats = os.path.join(workdir, "stats.json")
    outputs = os.path.join(workdir, f"out_{kv}.npz")
    done = subprocess.run([wafer_run, "run", model, "--grid", grid, "--kv",
                           kv, "--dtype", dtype, "--inputs", inputs,
                           "--outputs", outputs, "--stats", stats],
                          capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"FAILED: {model} {grid} {kv}: {done.stderr.strip()}")
    with open(stats) as f:
        data = json.load(f)
    with np.load(outputs) as out:
        logits = out["logits"].copy()
    return data, logits


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.join(SRC, "docs", "bench"))
    parser.add_argument("--wafer-run",
                        default=os.path.join(SRC, "build", "bin", "wafer-run"))
    parser.add_argument("--dtype", default="f16")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as workdir:
        for name, grids in MODELS.items():
            out_dir = os.path.join(workdir, name)
            subprocess.run([sys.executable,
                            os.path.join(SRC, "python", "wafer",
                                         "export_llama.py"),
                            name, "--out-dir", out_dir, "--graphs", "decode"],
                           check=True, capture_output=True)
            model = os.path.join(out_dir, "decode.onnx")
            inputs = os.path.join(out_dir, "inputs_decode.npz")
            for grid in grids:
                shift, shift_logits = run(args.wafer_run, model, inputs, grid,
                                          "shift", args.dtype, workdir)
                concat, concat_logits = run(args.wafer_run, model, inputs,
                                            grid, "concat", args.dtype,
                                            workdir)
                row = {
                    "model": name, "grid": grid,
                    "height": int(grid.split("x")[0]),
                    "shift_tokens": shift["kv_capacity_tokens"],
                    "concat_tokens": concat["kv_capacity_tokens"],
                    "shift_cycles": shift["cycles"],
                    "concat_cycles": concat["cycles"],
                    "max_sram_bytes_per_core": shift["max_sram_bytes_per_core"],
                    "logits_max_abs_difference": float(
                        np.abs(shift_logits - concat_logits).max()),
                }
                row["ratio"] = row["shift_tokens"] / max(row["concat_tokens"], 1)
                rows.append(row)
                print(f"{name} {grid}: shift {row['shift_tokens']} tokens, "
                      f"concat {row['concat_tokens']} ({row['ratio']:.1f}x, "
                      f"grid height {row['height']}); step cycles shift "
                      f"{row['shift_cycles']} concat {row['concat_cycles']}",
                      flush=True)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "kv.json"), "w") as f:
        json.dump({"dtype": args.dtype, "target": "wse2", "rows": rows}, f,
                  indent=2)
    with open(os.path.join(args.out, "kv.md"), "w") as f:
        f.write("| model | grid | shift tokens | concat tokens | shift / concat "
                "| grid height | step cycles shift / concat |\n")
        f.write("|---|---|---|---|---|---|---|\n")
        for r in rows:
            f.write(f"| {r['model']} | {r['grid']} | {r['shift_tokens']} | "
                    f"{r['concat_tokens']} | {r['ratio']:.1f}x | {r['height']} "
                    f"| {r['shift_cycles']} / {r['concat_cycles']} |\n")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6, 4))
    for name in MODELS:
        sel = [r for r in rows if r["model"] == name]
        ax.plot([r["height"] for r in sel], [r["ratio"] for r in sel], "o-",
                label=name)
    heights = [r["height"] for r in rows]
    ax.plot([min(heights), max(heights)], [min(heights), max(heights)], "k--",
            label="grid height")
    ax.set_xlabel("grid height (rows of cores)")
    ax.set_ylabel("KV capacity, shift / concat")
    ax.set_title(f"KV cache capacity ratio ({args.dtype}, wse2 cores)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(args.out, "kv.png"), dpi=120)


if __name__ == "__main__":
    main()
