#!/usr/bin/python3
"""Distributed GEMM and GEMV algorithms side by side on the mesh emulator.

  /usr/bin/python3 tools/bench/algorithms.py [--suite gemm|gemv|all]
      [--grids 16,32,64,128] [--sizes ...] [--dtype f16] [--threads 2]
      [--out docs/bench] [--wafer-run build/bin/wafer-run]

gemm: C[S, S] = A[S, S] x W[S, S] with --gemm meshgemm | cannon | summa |
allgather
(paper Figure 9). gemv: y[1, S] = x[1, S] x W[S, S] with --allreduce
ktree (K = 2, 3) | pipeline | ring (paper Figure 10). Every configuration
runs through `wafer-run run` on the same model and inputs, one after the
other in this process, and is checked against numpy (cosine similarity).
Cycles are the emulator's model of the target (wse2 by default), split into
the kernels' compute cycles and the rest (communication that compute did not
hide). Writes OUT/<suite>.json, OUT/<suite>.png and OUT/<suite>.md (a
table); wall seconds are recorded but only ratios of cycles are compared.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(SRC, "python"))
from wafer import testing  # noqa: E402

SUITES = {
    "gemm": {
        "sizes": [512, 1024, 2048],
        "variants": [("meshgemm", ["--gemm", "meshgemm"]),
                     ("cannon", ["--gemm", "cannon"]),
                     ("summa", ["--gemm", "summa"]),
                     ("allgather", ["--gemm", "allgather"])],
        "baseline": "meshgemm",
    },
    "gemv": {
        "sizes": [1024, 2048, 4096],
        "variants": [("ktree2", ["--allreduce", "ktree", "--ktree-k", "2"]),
                     ("ktree3", ["--allreduce", "ktree", "--ktree-k", "3"]),
                     ("pipeline", ["--allreduce", "pipeline"]),
                     ("ring", ["--allreduce", "ring"])],
        "baseline": "ktree2",
    },
}


def build(suite, size, workdir):
    """The model, its inputs and the numpy reference output."""
    case = (testing.matmul(size, size, size, seed=size) if suite == "gemm"
            else testing.gemv(size, size, seed=size))
    model, inputs = case.write(workdir)
    import onnx
    from onnx import numpy_helper
    weights = {t.name: numpy_helper.to_array(t)
               for t in onnx.load(model).graph.initializer}
    x = next(iter(testing.load_npz(inputs).values())).astype(np.float64)
    w = next(iter(weights.values())).astype(np.float64)
    return model, inputs, x @ w


def run_one(args, model, inputs, grid, options, workdir):
    stats, outputs = (os.path.join(workdir, n) for n in ("s.json", "o.npz"))
    start = time.time()
    done = subprocess.run(
        [args.wafer_run, "run", model, "--grid", f"{grid}x{grid}",
         "--dtype", args.dtype, "--threads", str(args.threads),
         "--inputs", inputs, "--outputs", outputs, "--stats", stats] + options,
        capture_output=True, text=True)
    seconds = time.time() - start
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1]}, seconds
    with open(stats) as f:
        s = json.load(f)
    out = next(iter(testing.load_npz(outputs).values())).astype(np.float64)
    return {"cycles": s["cycles"], "compute_cycles": s["ops"][0]["compute_cycles"],
            "max_sram_bytes_per_core": s["max_sram_bytes_per_core"],
            "max_routes_per_core": s["max_routes_per_core"], "out": out}, seconds


def plot(suite, results, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    sizes = sorted({r["size"] for r in results})
    names = [v[0] for v in SUITES[suite]["variants"]]
    fig, axes = plt.subplots(1, len(sizes), figsize=(5 * len(sizes), 4),
                             squeeze=False)
    for ax, size in zip(axes[0], sizes):
        rows = [r for r in results if r["size"] == size and "cycles" in r]
        grids = sorted({r["grid"] for r in rows})
        width = 0.8 / len(names)
        for i, name in enumerate(names):
            pick = {r["grid"]: r for r in rows if r["algorithm"] == name}
            xs = [g + (i - (len(names) - 1) / 2) * width for g in range(len(grids))]
            compute = [pick[g]["compute_cycles"] if g in pick else 0 for g in grids]
            rest = [pick[g]["cycles"] - pick[g]["compute_cycles"] if g in pick else 0
                    for g in grids]
            bars = ax.bar(xs, compute, width, label=f"{name} compute")
            ax.bar(xs, rest, width, bottom=compute, color=bars[0].get_facecolor(),
                   alpha=0.4, hatch="//", label=f"{name} communication")
        ax.set_xticks(range(len(grids)), [f"{g}x{g}" for g in grids])
        ax.set_title(f"{suite.upper()} {size}")
        ax.set_ylabel("cycles (log)")
        ax.set_yscale("log")
        lowest = min((r["compute_cycles"] for r in rows), default=1)
        ax.set_ylim(bottom=max(lowest / 2, 1))
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--suite", choices=["gemm", "gemv", "all"], default="all")
    ap.add_argument("--grids", default="16,32,64,128")
    ap.add_argument("--sizes", help="comma-separated; default per suite")
    ap.add_argument("--dtype", default="f16")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", default=os.path.join(SRC, "docs", "bench"))
    ap.add_argument("--wafer-run", default=os.path.join(SRC, "build", "bin",
                                                         "wafer-run"))
    ap.add_argument("--plot-only", action="store_true",
                    help="redraw OUT/<suite>.png and .md from OUT/<suite>.json")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    if args.plot_only:
        for suite in (["gemm", "gemv"] if args.suite == "all" else [args.suite]):
            with open(os.path.join(args.out, f"{suite}.json")) as f:
                results = json.load(f)["results"]
            plot(suite, results, os.path.join(args.out, f"{suite}.png"))
            write_table(suite, SUITES[suite], results,
                        os.path.join(args.out, f"{suite}.md"))
        return
    grids = [int(g) for g in args.grids.split(",")]
    for suite in (["gemm", "gemv"] if args.suite == "all" else [args.suite]):
        spec = SUITES[suite]
        sizes = ([int(s) for s in args.sizes.split(",")] if args.sizes
                 else spec["sizes"])
        results = []
        with tempfile.TemporaryDirectory(prefix="wafer-bench-") as workdir:
            for size in sizes:
                model, inputs, ref = build(suite, size, workdir)
                for grid in grids:
                    for name, options in spec["variants"]:
                        r, seconds = run_one(args, model, inputs, grid, options,
                                             workdir)
                        row = {"suite": suite, "size": size, "grid": grid,
                               "algorithm": name, "dtype": args.dtype,
                               "wall_seconds": round(seconds, 2)}
                        if "error" in r:
                            row["error"] = r["error"]
                            print(f"{suite} {size:5} {grid:3}x{grid:<3} {name:9} "
                                  f"{r['error']}", flush=True)
                        else:
                            out = r.pop("out").ravel()
                            row.update(r)
                            row["cosine"] = float(out @ ref.ravel() / (
                                np.linalg.norm(out) * np.linalg.norm(ref)))
                            print(f"{suite} {size:5} {grid:3}x{grid:<3} {name:9} "
                                  f"{row['cycles']:>9} cycles "
                                  f"({row['compute_cycles']} compute) cosine "
                                  f"{row['cosine']:.6f} {seconds:.1f} s",
                                  flush=True)
                        results.append(row)
        with open(os.path.join(args.out, f"{suite}.json"), "w") as f:
            json.dump({"dtype": args.dtype, "target": "wse2", "results": results},
                      f, indent=1)
        plot(suite, results, os.path.join(args.out, f"{suite}.png"))
        write_table(suite, spec, results, os.path.join(args.out, f"{suite}.md"))


def write_table(suite, spec, results, path):
    """Cycles per algorithm and each baseline's ratio to WaferLLM's."""
    names = [v[0] for v in spec["variants"]]
    base = spec["baseline"]
    lines = ["| size | grid | " + " | ".join(names) + " | "
             + " | ".join(f"{n}/{base}" for n in names if n != base) + " |",
             "|---" * (2 + 2 * len(names) - 1) + "|"]
    keys = sorted({(r["size"], r["grid"]) for r in results})
    for size, grid in keys:
        pick = {r["algorithm"]: r for r in results
                if r["size"] == size and r["grid"] == grid}
        cells = [str(pick[n]["cycles"]) if "cycles" in pick.get(n, {})
                 else "does not fit" for n in names]
        ratios = []
        for n in names:
            if n == base:
                continue
            ok = "cycles" in pick.get(n, {}) and "cycles" in pick.get(base, {})
            ratios.append(f"{pick[n]['cycles'] / pick[base]['cycles']:.2f}"
                          if ok else "-")
        lines.append(f"| {size} | {grid}x{grid} | " + " | ".join(cells) + " | "
                     + " | ".join(ratios) + " |")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
