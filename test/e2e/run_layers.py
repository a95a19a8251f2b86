"""Checks `wafer-run run --layers N` on an exported LLaMA.

  run_layers.py BIN_DIR MODEL_DIR CONFIG N WORK_DIR

MODEL_DIR holds the exporter's graphs of CONFIG (seed 0). The reference is
built independently of wafer's tfm-keep-layers: the exporter's torch module
with the same weights, cut to its first N layers in torch, exported again and
run by ONNX Runtime (test/reference). For prefill and decode on each grid of
GRIDS, `wafer-run run GRAPH.onnx --layers N` (decode with --dim-param
past=...) must give the reference's outputs (logits and the first N layers'
KV caches, no others) within 1e-4 of each output's largest magnitude, and
its extrapolated cycles (stats JSON) must be within 1.5% of the whole model's
run (the layers are alike, so the extrapolation should be close). Prints one
line per run; exit code 1 on any failure.
"""
import dataclasses
import json
import os
import subprocess
import sys

import numpy as np

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(SRC, "python"))

from wafer import export_llama, testing  # noqa: E402

TOLERANCE = 1e-4
CYCLES_TOLERANCE = 0.015
GRIDS = ("6x10", "8x8")


def run(*args):
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"FAILED: {' '.join(args)}\n{done.stderr.strip()}")
    return done.stdout


def main():
    bin_dir, model_dir, config_name, layers, work = sys.argv[1:6]
    layers = int(layers)
    os.makedirs(work, exist_ok=True)
    config = export_llama.load_config(config_name)
    model = export_llama.build_model(config, "random", 0)
    model.model.layers = model.model.layers[:layers]
    cut = dataclasses.replace(config, n_layers=layers)
    model.config = cut
    runner = os.path.join(SRC, "test", "reference", "run_ort.mjs")
    wafer_run = os.path.join(bin_dir, "wafer-run")
    failures = 0
    for graph in ("prefill", "decode"):
        inputs = os.path.join(model_dir, f"inputs_{graph}.npz")
        arrays = testing.load_npz(inputs)
        kept = {n: arrays[n] for n in export_llama.input_names(cut, graph)}
        cut_inputs = os.path.join(work, f"inputs_{graph}.npz")
        np.savez(cut_inputs, **kept)
        path, _ = export_llama.export_graph(model, cut, graph, work, kept,
                                            "random", "never")
        reference = os.path.join(work, f"{graph}.ort.npz")
        run("node", runner, path, cut_inputs, reference)
        shape = ["--dim-param", f"past={arrays['past.0.key'].shape[2]}"] \
            if graph == "decode" else []
        for grid in GRIDS:
            out = os.path.join(work, f"{graph}.{grid}.npz")
            stats = os.path.join(work, f"{graph}.{grid}.json")
            whole = os.path.join(work, f"{graph}.{grid}.whole.json")
            model_path = os.path.join(model_dir, f"{graph}.onnx")
            run(wafer_run, "run", model_path, "--grid", grid, "--layers",
                str(layers), *shape, "--inputs", inputs, "--outputs", out,
                "--stats", stats)
            run(wafer_run, "run", model_path, "--grid", grid, *shape,
                "--inputs", inputs, "--stats", whole, "--mode", "timing")
            try:
                error = testing.compare(out, reference)
            except ValueError as e:
                error = float("inf")
                print(f"FAILED: {graph} {grid}: {e}")
            with open(stats) as f:
                got = json.load(f)
            with open(whole) as f:
                want = json.load(f)["cycles"]
            drift = abs(got["extrapolated_cycles"] - want) / want
            ok = (error <= TOLERANCE and drift <= CYCLES_TOLERANCE
                  and got["extrapolated"] is True and got["layers"] == layers
                  and got["model_layers"] == config.n_layers)
            failures += not ok
            print(f"{'' if ok else 'FAILED: '}{graph} {grid} layers {layers} "
                  f"of {got['model_layers']}: error {error:.2e}, "
                  f"{got['layer_cycles']:.0f} cycles per layer, extrapolated "
                  f"{got['extrapolated_cycles']:.0f} cycles, whole model "
                  f"{want} ({100 * drift:.2f}%)")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
