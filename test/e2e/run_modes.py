#!/usr/bin/python3
"""The timing mode against the functional mode on the whole e2e suite.

    run_modes.py BIN_DIR [--filter S]

For every configuration of suite.py: `wafer-run run` in the functional mode
(saving the bundle), then the bundle in `--mode timing` (the inputs only
tell it the prompt length, for tokens/s); the stats must be
equal in every field but "mode" (cycles total and per op, compute cycles,
words, messages, link words, SRAM and routes). A configuration that fails
must fail the same way in both modes. Prints one line per mismatch and a
summary; exit code 1 on any mismatch.
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
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="wafer-modes-")
    wafer_run = os.path.join(args.bin_dir, "wafer-run")
    runs = failures = cycles = 0
    try:
        for name, model, inputs, options in configurations(work):
            if args.filter not in name:
                continue
            runs += 1
            bundle = os.path.join(work, "run.bundle")
            stats = {m: os.path.join(work, f"{m}.json")
                     for m in ("functional", "timing")}
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
            timing = subprocess.run(
                [wafer_run, "run", bundle, "--mode", "timing", "--inputs",
                 inputs, "--stats", stats["timing"]],
                capture_output=True, text=True)
            if timing.returncode != 0:
                failures += 1
                print(f"FAIL {name}: timing mode: {timing.stderr.strip()}")
                continue
            loaded = {}
            for mode, path in stats.items():
                with open(path) as f:
                    loaded[mode] = json.load(f)
                loaded[mode].pop("mode")
            if loaded["functional"] != loaded["timing"]:
                failures += 1
                keys = [k for k in loaded["functional"]
                        if loaded["functional"][k] != loaded["timing"].get(k)]
                print(f"FAIL {name}: stats differ in {', '.join(keys)}")
                continue
            cycles += loaded["timing"]["cycles"]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{runs - failures}/{runs} configurations: timing stats equal "
          f"functional ({cycles} cycles in all)")
    return 1 if failures or runs == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
