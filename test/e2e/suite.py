"""The end-to-end suite's configurations as one list, for tools that run all
of them the same way (tools/refactor_snapshot.py, run_modes.py).

configurations(work) yields (name, model, inputs, options): every case,
grid and algorithm of run_e2e.py, and the tiny (exported into `work`) and
alt LLaMA prefill and decode graphs on the grids, GEMM algorithms,
allreduces, KV policies and dtypes of run_llama_mesh.py (allgather also on
a target with 4x the SRAM, where its panels need it). `options` are
wafer-run run options.
"""
import json
import os
import subprocess
import sys

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(SRC, "python"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def configurations(work):
    """(name, model, inputs, options) for every run to fingerprint."""
    import run_e2e  # the e2e suite's cases and variants
    import run_llama_mesh as llama

    for prefix, routes in run_e2e.FEW_ROUTES.items():
        path = os.path.join(work, f"routes{routes}.json")
        run_e2e.few_routes_targets[prefix] = path
        with open(path, "w") as f:
            json.dump({"base": "wse2", "routes_per_core": routes}, f)
    for case, grids in run_e2e.cases():
        model, inputs = case.write(work)
        for grid in grids:
            for options in run_e2e.variants(case, grid):
                label = " ".join(o for o in options
                                 if not o.startswith(work)) or "default"
                yield (f"{case.name} {grid} {label}", model, inputs,
                       ["--grid", grid] + options)

    big_sram = os.path.join(work, "wse2-sram192k.json")
    with open(big_sram, "w") as f:
        json.dump({"base": "wse2", "sram_bytes": 4 * 49152}, f)
    tiny = os.path.join(work, "tiny")
    subprocess.run([sys.executable, os.path.join(SRC, "python", "wafer",
                                                 "export_llama.py"), "tiny",
                    "--out-dir", tiny], check=True, capture_output=True)
    for name, directory in (("tiny", tiny),
                            ("alt", os.path.join(SRC, "test", "models", "alt"))):
        for graph in ("prefill", "decode"):
            model = os.path.join(directory, f"{graph}.onnx")
            inputs = os.path.join(directory, f"inputs_{graph}.npz")
            for grid in llama.GRIDS:
                for gemm in llama.GEMMS:
                    for allreduce, k in llama.ALLREDUCES:
                        # allgather's panels may need more than 48 KB.
                        targets = ["wse2"] + ([big_sram] if gemm == "allgather"
                                              else [])
                        for target in targets:
                            tname = "wse2" if target == "wse2" else "192k"
                            yield (f"{name} {graph} {grid} {gemm} {allreduce} "
                                   f"k{k} {tname}", model, inputs,
                                   ["--grid", grid, "--gemm", gemm,
                                    "--allreduce", allreduce, "--ktree-k", k,
                                    "--target", target])
                if graph == "decode":
                    yield (f"{name} {graph} {grid} concat", model, inputs,
                           ["--grid", grid, "--kv", "concat"])
            for grid in llama.F16_GRIDS:
                yield (f"{name} {graph} {grid} f16", model, inputs,
                       ["--grid", grid, "--dtype", "f16"])
