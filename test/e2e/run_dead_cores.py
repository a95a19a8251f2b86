"""Runs a LLaMA graph on a fabric with dead cores and links, and checks it.

  run_dead_cores.py BIN_DIR MODEL_DIR GRAPH WORK_DIR GRID DTYPE [ARGS...]

Kills 1% of the cores the HxW grid would occupy at the fabric's corner (at
least one, chosen with a fixed seed) and one link, compiles and runs
MODEL_DIR/GRAPH.onnx with `wafer-run run` on the wse2 target with and
without those defects (extra ARGS go to both runs), and checks that the
outputs are identical, that they match ONNX Runtime (f32: max abs error <=
1e-4 of the largest magnitude; f16: cosine >= 0.999 and the same argmax,
where a different pick counts as a near-tie when the reference's logit for
it is within the run's largest logit error of the reference's best),
that the stats report the placement, and that the timing mode gives the
functional mode's stats on the defective fabric. Prints the cycle cost of
the defects. Exit code 1 on any failure.
"""
import json
import os
import random
import subprocess
import sys

import numpy as np

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(SRC, "python"))

from wafer import testing  # noqa: E402


def run(*args):
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"FAILED: {' '.join(args)}\n{done.stderr.strip()}")
    return done.stdout


def defective_target(path, height, width, seed=1):
    rng = random.Random(seed)
    count = max(1, round(0.01 * height * width))
    cores = rng.sample([(y, x) for y in range(height) for x in range(width)],
                       count)
    link = [rng.randrange(height), rng.randrange(width - 1), "east"]
    with open(path, "w") as f:
        json.dump({"base": "wse2", "dead_cores": sorted(cores),
                   "dead_links": [link]}, f)
    return count


def main():
    bin_dir, model_dir, graph, work, grid, dtype = sys.argv[1:7]
    extra = sys.argv[7:]
    os.makedirs(work, exist_ok=True)
    height, width = map(int, grid.split("x"))
    model = os.path.join(model_dir, f"{graph}.onnx")
    inputs = os.path.join(model_dir, f"inputs_{graph}.npz")
    reference = os.path.join(work, f"{graph}.ort.npz")
    run("node", os.path.join(SRC, "test", "reference", "run_ort.mjs"), model,
        inputs, reference)
    target = os.path.join(work, f"dead-{grid}.json")
    dead = defective_target(target, height, width)

    results = {}
    for label, chosen, mode in (("clean", "wse2", "functional"),
                                ("dead", target, "functional"),
                                ("timing", target, "timing")):
        out = os.path.join(work, f"{graph}-{grid}-{dtype}-{label}.npz")
        stats = os.path.join(work, f"{graph}-{grid}-{dtype}-{label}.json")
        io = ["--inputs", inputs] + (["--outputs", out]
                                     if mode == "functional" else [])
        run(os.path.join(bin_dir, "wafer-run"), "run", model, "--grid", grid,
            "--dtype", dtype, "--target", chosen, "--mode", mode, "--stats",
            stats, *io, *extra)
        with open(stats) as f:
            results[label] = (out, json.load(f))
    # The same stats but for how they were made.
    timing = dict(results["timing"][1], mode=None, run=None)
    timing_agrees = timing == dict(results["dead"][1], mode=None, run=None)

    failures = 0
    clean, dead_run = np.load(results["clean"][0]), np.load(results["dead"][0])
    identical = sorted(clean.files) == sorted(dead_run.files) and all(
        np.array_equal(clean[k], dead_run[k]) for k in clean.files)
    if dtype == "f32":
        error = testing.compare(results["dead"][0], reference)
        check = f"max relative error {error:.2e}"
        ok = error <= 1e-4
    else:
        cosine = testing.cosine(results["dead"][0], reference)
        ref = np.load(reference)
        got, want = dead_run["logits"], ref["logits"]
        error = float(np.abs(got - want).max())
        picked = np.argmax(got, -1)[..., None]
        best = np.take_along_axis(want, np.argmax(want, -1)[..., None], -1)
        gap = (best - np.take_along_axis(want, picked, -1)).ravel()
        ties = int(np.count_nonzero((gap > 0) & (gap <= error)))
        same_argmax = bool(np.all(gap <= error))
        check = (f"cosine {cosine:.6f}, argmax "
                 f"{'same' if same_argmax else 'differs'}" +
                 (f" ({ties} near-tie within the run's logit error "
                  f"{error:.2e})" if ties else ""))
        ok = cosine >= 0.999 and same_argmax
    placement = results["dead"][1].get("fabric_placement")
    cycles = results["clean"][1]["cycles"], results["dead"][1]["cycles"]
    if not identical or not ok or not timing_agrees or not placement or \
            placement["dead_cores"] != dead or placement["dead_links"] != 1:
        failures += 1
    print(f"{graph} {grid} {dtype}: {dead} dead cores and 1 dead link, grid "
          f"spans {placement and placement['rows']}x"
          f"{placement and placement['columns']} fabric cores; outputs "
          f"{'identical' if identical else 'DIFFER'}; {check} "
          f"{'ok' if ok else 'FAIL'}; timing mode "
          f"{'agrees' if timing_agrees else 'DIFFERS'}; cycles {cycles[0]} -> {cycles[1]} "
          f"({100.0 * (cycles[1] - cycles[0]) / cycles[0]:+.2f}%)")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
