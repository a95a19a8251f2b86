#!/usr/bin/python3
"""The analytic mode against the timing mode, up to a whole wafer.

  /usr/bin/python3 tools/bench/analytic_mode.py [--out docs/bench]
      [--bin build/bin] [--grids 48x48,96x96,192x192,660x660]
      [--prefill-grids 8x8,16x16,32x32,9x5,11x6,7x6,11x5,7x5]

Exports the stories15m LLaMA decode graph and the tiny prefill graph
(python/wafer/export_llama.py, zero weights: neither mode reads them),
compiles each once per grid to a bundle without weights (`wafer-run run
--mode timing --save-bundle`), then runs the bundle side by side in this
process in `--mode timing` (the emulator, event by event) and `--mode
analytic` (the ops' closed-form estimates added up). Records both modes'
cycles, the analytic error, and each run's wall seconds and peak host
memory (max RSS, from wait4; the machine is shared, so compare ratios).
Writes OUT/analytic_mode.json and OUT/analytic_mode.md.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

from measure import timed, wall

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_mode(wafer_run, bundle, mode, stats):
    """(seconds, max RSS in MB, cycles) of the bundle in one mode."""
    seconds, rss = timed([wafer_run, "run", bundle, "--mode", mode, "--quiet",
                          "--stats", stats])
    with open(stats) as f:
        return seconds, rss, json.load(f)["cycles"]


def measure(work, wafer_run, grids, prefill_grids):
    """One row per model and grid: both modes' cycles, seconds and memory."""
    exporter = os.path.join(SRC, "python", "wafer", "export_llama.py")
    models = {}
    for config, graph in (("stories15m", "decode"), ("tiny", "prefill")):
        out = os.path.join(work, config)
        subprocess.run([sys.executable, exporter, config, "--out-dir", out,
                        "--weights", "zeros", "--graphs", graph],
                       check=True, capture_output=True)
        models[config] = os.path.join(out, f"{graph}.onnx")
    cases = [("stories15m decode f16", models["stories15m"], grid,
              ["--dim-param", "past=8", "--dtype", "f16"])
             for grid in grids]
    cases += [("tiny prefill f32", models["tiny"], grid,
               ["--dim-param", "seq=16"])
              for grid in prefill_grids]
    rows = []
    for name, model, grid, options in cases:
        bundle = os.path.join(work, "run.wafb")
        compile_seconds, _ = wall(
            [wafer_run, "run", model, "--grid", grid, "--mode", "analytic",
             "--quiet", "--save-bundle", bundle] + options)
        row = {"model": name, "grid": grid,
               "compile_seconds": round(compile_seconds, 2)}
        for mode in ("timing", "analytic"):
            seconds, rss, cycles = run_mode(
                wafer_run, bundle, mode, os.path.join(work, f"{mode}.json"))
            row[mode] = {"cycles": cycles, "seconds": round(seconds, 3),
                         "max_rss_mb": round(rss, 1)}
        row["analytic_error"] = round(
            row["analytic"]["cycles"] / row["timing"]["cycles"] - 1, 4)
        print(json.dumps(row), flush=True)
        rows.append(row)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(SRC, "docs", "bench"))
    ap.add_argument("--bin", default=os.path.join(SRC, "build", "bin"))
    ap.add_argument("--grids", default="48x48,96x96,192x192,660x660")
    ap.add_argument("--prefill-grids",
                    default="8x8,16x16,32x32,9x5,11x6,7x6,11x5,7x5")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="wafer-analytic-") as work:
        rows = measure(work, os.path.join(args.bin, "wafer-run"),
                       args.grids.split(","), args.prefill_grids.split(","))
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "analytic_mode.json"), "w") as f:
        json.dump({"runs": rows}, f, indent=2)
    with open(os.path.join(args.out, "analytic_mode.md"), "w") as f:
        f.write("| model | grid | timing cycles | analytic cycles | error | "
                "timing s | analytic s | timing MB | analytic MB |\n")
        f.write("|---|---|---|---|---|---|---|---|---|\n")
        for r in rows:
            t, a = r["timing"], r["analytic"]
            f.write(f"| {r['model']} | {r['grid']} | {t['cycles']} | "
                    f"{a['cycles']} | {r['analytic_error']:+.2%} | "
                    f"{t['seconds']} | {a['seconds']} | {t['max_rss_mb']} | "
                    f"{a['max_rss_mb']} |\n")


if __name__ == "__main__":
    main()
