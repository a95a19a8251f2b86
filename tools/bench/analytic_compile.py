#!/usr/bin/python3
"""How long the analytic mode takes on the paper's largest grids, for two
builds side by side.

  /usr/bin/python3 tools/bench/analytic_compile.py --work DIR
      [--bin build/bin] [--baseline OTHER/bin] [--repeats 3] [--out docs/bench]

The analytic mode runs nothing, so its time is the compile: import, fold,
raise, plan, lower (with the per-core clock) and the bundle. Runs the
LLaMA3-8B-shaped decode step on 660x660 (f16, past 4095) and the
4096-token prefill on 720x720 (f16) in `--mode analytic`, alternating the
two builds `--repeats` times (the machine is shared: compare the ratio of
the medians), and records whether both builds give the same cycles. The graphs are
the exporter's with zero weights, exported into DIR once (the prefill's
external data is 32 GB; tools/bench/paper_tables.py uses the same DIR).
Writes OUT/analytic_compile.json and OUT/analytic_compile.md.
"""
import argparse
import json
import os
import statistics
import tempfile

from measure import export_zeros, timed

CASES = [
    ("LLaMA3-8B decode, past 4095", "llama3-8b", "decode", "660x660",
     ["--dim-param", "past=4095"]),
    ("LLaMA3-8B prefill, 4096 tokens", "llama3-8b", "prefill", "720x720",
     ["--dim-param", "seq=4096"]),
]


def run(wafer_run, model, grid, options, stats):
    """(seconds, max RSS in MB, cycles) of one analytic run."""
    seconds, rss = timed([wafer_run, "run", model, "--grid", grid, "--dtype",
                          "f16", "--mode", "analytic", "--quiet", "--stats",
                          stats] + options)
    with open(stats) as f:
        return seconds, rss, json.load(f)["cycles"]


def main():
    src = os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", required=True)
    parser.add_argument("--bin", default=os.path.join(src, "build", "bin"))
    parser.add_argument("--baseline", help="another build's bin directory")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=os.path.join(src, "docs", "bench"))
    args = parser.parse_args()
    builds = {"this build": args.bin}
    if args.baseline:
        builds["baseline"] = args.baseline
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        stats = os.path.join(scratch, "stats.json")
        for name, config, graph, grid, options in CASES:
            model = export_zeros(config, graph,
                                 os.path.join(args.work, f"{config}-{graph}"))
            seconds = {build: [] for build in builds}
            rss, cycles = {}, {}
            for _ in range(args.repeats):
                for build, directory in builds.items():
                    s, r, c = run(os.path.join(directory, "wafer-run"), model,
                                  grid, options, stats)
                    seconds[build].append(s)
                    rss[build] = max(rss.get(build, 0.0), r)
                    cycles[build] = c
            row = {"case": name, "grid": grid, "cycles": cycles,
                   "seconds": seconds, "max_rss_mb": rss,
                   "median_s": {b: statistics.median(s)
                                for b, s in seconds.items()}}
            if args.baseline:
                row["same_cycles"] = len(set(cycles.values())) == 1
                row["speedup"] = (row["median_s"]["baseline"] /
                                  row["median_s"]["this build"])
            print(json.dumps(row), flush=True)
            rows.append(row)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "analytic_compile.json"), "w") as f:
        json.dump({"repeats": args.repeats, "rows": rows}, f, indent=1)
        f.write("\n")
    with open(os.path.join(args.out, "analytic_compile.md"), "w") as f:
        f.write("| case | grid | cycles | this build, median s | "
                "baseline, median s | speedup | max RSS MB |\n"
                "|---|---|---|---|---|---|---|\n")
        for row in rows:
            base = row["median_s"].get("baseline")
            baseline = "-" if base is None else f"{base:.2f}"
            speedup = "-" if base is None else f"{row['speedup']:.2f}x"
            memory = " / ".join(f"{row['max_rss_mb'][b]:.0f}" for b in builds)
            f.write(f"| {row['case']} | {row['grid']} | "
                    f"{row['cycles']['this build']:,} | "
                    f"{row['median_s']['this build']:.2f} | {baseline} | "
                    f"{speedup} | {memory} |\n")


if __name__ == "__main__":
    main()
