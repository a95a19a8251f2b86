#!/usr/bin/python3
"""The timing and analytic modes against the functional mode on the whole
e2e suite.

    run_modes.py BIN_DIR [--filter S] [--analytic-tolerance F]

For every configuration of suite.py: `wafer-run run` in the functional mode
(saving the bundle), then the bundle in `--mode timing` (the inputs only
tell it the prompt length, for tokens/s); the stats must be
equal in every field but "mode" and "run", which say how they were made
(cycles total and per op, compute cycles, words, messages, link words,
SRAM and routes). A configuration that fails
must fail the same way in both modes. Then the bundle in `--mode analytic`:
its total cycles (the ops' closed-form estimates added up) must be within
the tolerance (default 5%) of the timing mode's; the summary says how many
are within 5%, the mean and worst errors, and lists those above 5%. Prints one line per
mismatch and a summary; exit code 1 on any mismatch.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from suite import configurations  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bin_dir")
    ap.add_argument("--filter", default="")
    ap.add_argument("--analytic-tolerance", type=float, default=0.05)
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="wafer-modes-")
    wafer_run = os.path.join(args.bin_dir, "wafer-run")
    runs = failures = cycles = 0
    errors = []  # (|analytic / timing - 1|, configuration)
    try:
        for name, model, inputs, options in configurations(work):
            if args.filter not in name:
                continue
            runs += 1
            bundle = os.path.join(work, "run.bundle")
            stats = {m: os.path.join(work, f"{m}.json")
                     for m in ("functional", "timing", "analytic")}
            functional = subprocess.run(
                [wafer_run, "run", model, "--inputs", inputs, "--stats",
                 stats["functional"], "--save-bundle", bundle] + options,
                capture_output=True, text=True)
            if functional.returncode != 0:
                # The same compile error whatever the mode.
                timing = subprocess.run(
                    [wafer_run, "run", model, "--inputs", inputs, "--mode",
                     "timing"] + options, capture_output=True, text=True)
                if timing.returncode == 0 or timing.stderr != functional.stderr:
                    failures += 1
                    print(f"FAIL {name}: functional fails, timing gives "
                          f"{timing.stderr.strip() or 'success'}")
                continue
            # The functional mode's bundle without data, then as estimates.
            error = None
            for mode in ("timing", "analytic"):
                result = subprocess.run(
                    [wafer_run, "run", bundle, "--mode", mode, "--inputs",
                     inputs, "--stats", stats[mode]],
                    capture_output=True, text=True)
                if result.returncode != 0:
                    error = f"{mode} mode: {result.stderr.strip()}"
                    break
            if error:
                failures += 1
                print(f"FAIL {name}: {error}")
                continue
            loaded = {}
            for mode, path in stats.items():
                with open(path) as f:
                    loaded[mode] = json.load(f)
                loaded[mode].pop("mode")
                loaded[mode].pop("run")
            if loaded["functional"] != loaded["timing"]:
                failures += 1
                keys = [k for k in loaded["functional"]
                        if loaded["functional"][k] != loaded["timing"].get(k)]
                print(f"FAIL {name}: stats differ in {', '.join(keys)}")
                continue
            cycles += loaded["timing"]["cycles"]
            error = loaded["analytic"]["cycles"] / loaded["timing"]["cycles"] - 1
            errors.append((abs(error), name))
            if abs(error) > args.analytic_tolerance:
                failures += 1
                print(f"FAIL {name}: analytic {loaded['analytic']['cycles']} "
                      f"cycles, timing {loaded['timing']['cycles']} "
                      f"({error:+.1%})")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{runs - failures}/{runs} configurations: timing stats equal "
          f"functional ({cycles} cycles in all), analytic cycles within "
          f"{args.analytic_tolerance:.0%} of timing")
    if errors:
        worst = max(errors)
        mean = sum(e for e, _ in errors) / len(errors)
        close = sum(e <= 0.05 for e, _ in errors)
        print(f"analytic against timing: {close}/{len(errors)} within 5%, "
              f"mean error {mean:.2%}, worst {worst[0]:.2%} ({worst[1]})")
        for error, name in sorted(errors, reverse=True):
            if error > 0.05:
                print(f"  above 5%: {name} ({error:.2%})")
    return 1 if failures or runs == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
