"""Checks `--gemm auto` against the four algorithms it chooses among.

  run_gemm_auto.py BIN_DIR MATMUL.onnx PREFILL.onnx WORK_DIR

MATMUL.onnx is one matmul (testing.py), PREFILL.onnx a LLaMA prefill with a
dynamic `seq`.

For each model and grid of the cases, runs `wafer-run run --mode analytic`
with every --gemm algorithm and with auto. auto must give the least total of
the algorithms whose plan fits the SRAM and the routes per core (the cost
model prices whole plans, so its choice must be the cheapest by the same
estimates the analytic mode adds up) and its ops must name an algorithm
that gives that total. One case runs on a target with 10 routes per core,
where the cheapest plan's routes do not fit; one leaves K to the
compiler. Prints one line per case, a
FAIL line for each miss; exit code 1 on any.
"""
import json
import os
import subprocess
import sys

ALGORITHMS = ("meshgemm", "cannon", "summa", "allgather")


def analytic(wafer_run, model, grid, gemm, stats, extra):
    done = subprocess.run([wafer_run, "run", model, "--grid", grid, "--gemm",
                           gemm, "--mode", "analytic", "--stats", stats,
                           *extra], capture_output=True, text=True)
    if done.returncode != 0:
        if gemm != "auto" and ("mesh-check-memory" in done.stderr or
                               "mesh-allocate-routes" in done.stderr):
            return None, set()
        sys.exit(f"FAILED: {model} {grid} {gemm}: {done.stderr.strip()}")
    with open(stats) as f:
        s = json.load(f)
    chosen = {op["algorithm"] for op in s["ops"] if op["kind"] == "gemm"}
    return s["cycles"], chosen


def main():
    bin_dir, matmul, prefill, work = sys.argv[1:5]
    wafer_run = os.path.join(bin_dir, "wafer-run")
    stats = os.path.join(work, "stats.json")
    cases = [(matmul, grid, [])
             for grid in ("5x7", "2x2", "8x8", "4x12", "1x6")]
    cases += [(prefill, grid,
               ["--dim-param", f"seq={seq}"])
              for grid, seq in (("4x12", 16), ("6x10", 64), ("3x5", 8))]
    few_routes = os.path.join(work, "routes10.json")
    with open(few_routes, "w") as f:
        json.dump({"base": "wse2", "name": "routes10",
                   "routes_per_core": 10}, f)
    cases.append((prefill, "4x12",
                  ["--dim-param", "seq=16", "--target", few_routes]))
    # K left to mesh-choose-ktree: each candidate is priced with the K it
    # would get.
    cases.append((prefill, "10x6",
                  ["--dim-param", "seq=16", "--ktree-k", "0"]))
    failures = 0
    for model, grid, extra in cases:
        cycles = {g: analytic(wafer_run, model, grid, g, stats, extra)[0]
                  for g in ALGORITHMS}
        auto, chosen = analytic(wafer_run, model, grid, "auto", stats, extra)
        fitting = [c for c in cycles.values() if c is not None]
        if not fitting:
            sys.exit(f"FAILED: no algorithm fits {model} on {grid}")
        least = min(fitting)
        cheapest = {g for g, c in cycles.items() if c == least}
        ok = auto == least and len(chosen) == 1 and chosen <= cheapest
        failures += not ok
        print(f"{'ok' if ok else 'FAIL'}: {os.path.basename(model)} "
              f"{' '.join(os.path.basename(a) for a in extra)} on {grid}: auto {auto} cycles with "
              f"{','.join(sorted(chosen))}; "
              + ", ".join(f"{g} {'does not fit' if c is None else c}"
                          for g, c in cycles.items()))
    print(f"{len(cases) - failures}/{len(cases)} cases: auto is the cheapest")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
