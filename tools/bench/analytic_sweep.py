#!/usr/bin/python3
"""The analytic mode against the timing mode over many small grids.

  /usr/bin/python3 tools/bench/analytic_sweep.py [--out docs/bench]
      [--bin build/bin] [--baseline OTHER/bin] [--sample N [--seed S]]

Runs the tiny and alt LLaMA graphs (test/models), prefill (8 tokens) with
MeshGEMM, Cannon and SUMMA and decode (past 8), in f32 and f16, on 22 grid
shapes (non-square ones, where GEMMs leave the cores far apart, most of
them), each in `--mode timing` and `--mode analytic`; with --baseline, also
that build's analytic mode, side by side. With --sample N: N configurations
drawn (seeded) from a wider space instead: also allgather, every allreduce
(K-tree with K = 1 to 4, pipeline, ring), the wse3 and wse2-calibrated
targets, both KV policies, prompts of 5 to 16 tokens and 34 grid shapes.

A configuration that does not compile (SRAM, routes) is left out; one that
a build's analytic mode fails while the timing mode runs it is reported
and left out. Writes OUT/analytic_sweep.json (every configuration) and
OUT/analytic_sweep.md (the error distribution and the largest errors), or
OUT/analytic_sweep_sample.{json,md} with --sample.
"""
import argparse
import itertools
import json
import os
import random
import subprocess
import tempfile

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GRIDS = ["2x3", "3x2", "3x5", "5x3", "4x4", "4x7", "5x7", "7x5", "6x4", "6x7",
         "7x4", "5x9", "9x5", "6x10", "10x6", "11x6", "8x8", "2x7", "7x2",
         "3x8", "12x4", "16x16"]
PREFILL_GEMMS = ["meshgemm", "cannon", "summa"]
WIDE_GRIDS = GRIDS + ["1x8", "8x1", "2x16", "16x2", "3x30", "30x3", "13x7",
                      "7x13", "15x4", "4x15", "9x9", "12x12"]


def cycles(bin_dir, model, options, mode, stats):
    """The run's cycles, or None when it does not compile."""
    proc = subprocess.run([os.path.join(bin_dir, "wafer-run"), "run", model,
                           "--mode", mode, "--quiet", "--stats", stats] +
                          options, capture_output=True, text=True)
    if proc.returncode != 0:
        return None
    with open(stats) as f:
        return json.load(f)["cycles"]


def configurations():
    for model, graph, grid, gemm, dtype in itertools.product(
            ("tiny", "alt"), ("prefill", "decode"), GRIDS, PREFILL_GEMMS,
            ("f32", "f16")):
        if graph == "decode" and gemm != "meshgemm":
            continue  # decode runs GEMVs: no GEMM algorithm to vary
        dim = "seq=8" if graph == "prefill" else "past=8"
        yield (f"{model} {graph} {grid} {gemm} {dtype}",
               os.path.join(SRC, "test", "models", model, f"{graph}.onnx"),
               ["--dim-param", dim, "--grid", grid, "--gemm", gemm,
                "--dtype", dtype])


def sampled(count, seed):
    """`count` configurations drawn from the wider space."""
    rng = random.Random(seed)
    allreduces = [["--allreduce", "ktree", "--ktree-k", str(k)]
                  for k in range(1, 5)] + [["--allreduce", "pipeline"],
                                           ["--allreduce", "ring"]]
    for _ in range(count):
        model, graph = rng.choice(("tiny", "alt")), rng.choice(("prefill",
                                                                "decode"))
        grid, dtype = rng.choice(WIDE_GRIDS), rng.choice(("f32", "f16"))
        target = rng.choice(("wse2", "wse3", "wse2-calibrated"))
        options = ["--grid", grid, "--dtype", dtype, "--target", target]
        options += rng.choice(allreduces)
        if graph == "prefill":
            options += ["--dim-param", f"seq={rng.randint(5, 16)}", "--gemm",
                        rng.choice(PREFILL_GEMMS + ["allgather"])]
        else:
            options += ["--dim-param", "past=8", "--kv",
                        rng.choice(("shift", "concat"))]
        yield (f"{model} {graph} " + " ".join(options),
               os.path.join(SRC, "test", "models", model, f"{graph}.onnx"),
               options)


def summary(rows, key):
    """Counts of |analytic / timing - 1| by band, the mean and the worst."""
    errors = [abs(r[key] / r["timing"] - 1) for r in rows]
    return {"configurations": len(errors),
            "mean": round(sum(errors) / len(errors), 5),
            "worst": round(max(errors), 5),
            "within_1pct": sum(e <= 0.01 for e in errors),
            "1_to_3pct": sum(0.01 < e <= 0.03 for e in errors),
            "3_to_5pct": sum(0.03 < e <= 0.05 for e in errors),
            "above_5pct": sum(e > 0.05 for e in errors)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(SRC, "docs", "bench"))
    ap.add_argument("--bin", default=os.path.join(SRC, "build", "bin"))
    ap.add_argument("--baseline", help="another build's bin directory")
    ap.add_argument("--sample", type=int,
                    help="draw this many configurations from a wider space")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    runs = sampled(args.sample, args.seed) if args.sample else configurations()
    stem = "analytic_sweep_sample" if args.sample else "analytic_sweep"
    builds = {"analytic": args.bin}
    if args.baseline:
        builds["baseline"] = args.baseline
    rows = []
    with tempfile.TemporaryDirectory(prefix="wafer-sweep-") as work:
        stats = os.path.join(work, "stats.json")
        for name, model, options in runs:
            timing = cycles(args.bin, model, options, "timing", stats)
            if timing is None:
                continue
            row = {"configuration": name, "timing": timing}
            for key, bin_dir in builds.items():
                row[key] = cycles(bin_dir, model, options, "analytic", stats)
            if None in row.values():
                print(f"FAILED in the analytic mode only: {name}", flush=True)
                continue
            print(json.dumps(row), flush=True)
            rows.append(row)
    result = {"runs": rows,
              "summary": {key: summary(rows, key) for key in builds}}
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, stem + ".json"), "w") as f:
        json.dump(result, f, indent=1)
    with open(os.path.join(args.out, stem + ".md"), "w") as f:
        f.write("| build | configurations | mean error | worst | <= 1% | "
                "1-3% | 3-5% | > 5% |\n|---|---|---|---|---|---|---|---|\n")
        for key, s in result["summary"].items():
            f.write(f"| {key} | {s['configurations']} | {s['mean']:.2%} | "
                    f"{s['worst']:.2%} | {s['within_1pct']} | "
                    f"{s['1_to_3pct']} | {s['3_to_5pct']} | "
                    f"{s['above_5pct']} |\n")
        f.write("\n| configuration | timing | " +
                " | ".join(builds) + " |\n|---|---|" +
                "---|" * len(builds) + "\n")
        worst = sorted(rows, key=lambda r: -max(
            abs(r[k] / r["timing"] - 1) for k in builds))[:12]
        for r in worst:
            cells = [f"{r[k]} ({r[k] / r['timing'] - 1:+.2%})" for k in builds]
            f.write(f"| {r['configuration']} | {r['timing']} | " +
                    " | ".join(cells) + " |\n")


if __name__ == "__main__":
    main()
