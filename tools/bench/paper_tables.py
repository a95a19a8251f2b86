#!/usr/bin/python3
"""WaferLLM's published figures next to the model's (issue 11's yardstick).

  /usr/bin/python3 tools/bench/paper_tables.py [--out docs/bench]
      [--bin build/bin] [--tables 6,9,10,4,3]

Table 6 (MeshGEMV [1,16K]x[16K,16K] and [1,32K]x[32K,32K] on WSE-2),
Figure 9 (GEMM [N,N]x[N,N], N = 2K, 4K, 8K, with MeshGEMM, SUMMA and
Cannon on 360x360 to 720x720) and Figure 10 (GEMV [1,N]x[N,N] with the
K-tree allreduce against the pipeline allreduce, Cerebras' GEMV, on the
same grids; the figures are plots the paper's text does not tabulate, so
these rows have no paper column),
Table 4 (decode with a 4096-token context on 420x420, 540x540, 660x660 of
LLaMA3-8B, LLaMA2-13B, CodeLLaMA-34B and QWen2-72B: the exporter's shapes,
QWen2 with q/k/v biases) and Table 3 (LLaMA3-8B prefill of 4096 tokens on
480x480, 600x600, 720x720), f16 on the wse2 target, each in the analytic
mode (the ops' estimates, within 5% of the timing mode on the e2e suite).
The LLaMA graphs come from the exporter with zero weights (neither mode
reads them). A decode runs with every layer resident where its f16
weights spread over the grid fit the SRAM and the plan fits; otherwise,
and for prefill, with `--layers 1`: one decoder layer resident, the
model's time extrapolated from it, as the paper did for its larger models
(a column says which). A configuration that does not compile records its
one-line error. Writes OUT/paper_tables.json and OUT/paper_tables.md.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# The paper's figures (waferllm-osdi25, section 7): milliseconds per GEMV,
# tokens per second per request.
TABLE6 = {16384: 0.0012, 32768: 0.00203}
# Table 4 per model (exporter config, the paper's name): 420x420, 540x540,
# 660x660; Table 3: 480x480, 600x600, 720x720.
TABLE4 = {
    ("llama3-8b", "LLaMA3-8B"): {"420x420": 2699.9, "540x540": 2501.5,
                                 "660x660": 2243.3},
    ("llama2-13b", "LLaMA2-13B"): {"420x420": 2039.2, "540x540": 1899.4,
                                   "660x660": 1739.8},
    ("codellama-34b", "CodeLLaMA-34B"): {"420x420": 1450.8, "540x540": 1407.7,
                                         "660x660": 1359.2},
    ("qwen2-72b", "QWen2-72B"): {"420x420": 839.7, "540x540": 824.3,
                                 "660x660": 787.1},
}
TABLE3 = {
    ("llama3-8b", "LLaMA3-8B"): {"480x480": 20320.6, "600x600": 25037.2,
                                 "720x720": 27686.5},
}
SRAM_BYTES = 49152  # per core on wse2


def weight_bytes_per_core(config, grid):
    """f16 weights spread evenly over the grid's cores: above the SRAM,
    no plan can keep every layer resident."""
    sys.path.insert(0, os.path.join(SRC, "python"))
    from wafer.export_llama import CONFIGS
    h, w = (int(v) for v in grid.split("x"))
    return 2 * CONFIGS[config].n_params() / (h * w)


def gemv_model(size, path, rows=1):
    """y[rows, N] = x[rows, N] W[N, N] with W as zero external data (a
    sparse file: nothing is written but the header)."""
    from onnx import TensorProto, helper
    data = os.path.basename(path) + ".data"
    weight = TensorProto(name="w", data_type=TensorProto.FLOAT,
                         dims=[size, size])
    weight.data_location = TensorProto.EXTERNAL
    for key, value in (("location", data), ("offset", "0"),
                       ("length", str(size * size * 4))):
        entry = weight.external_data.add()
        entry.key, entry.value = key, value
    with open(os.path.join(os.path.dirname(path), data), "wb") as f:
        f.truncate(size * size * 4)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])], "gemv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [rows, size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [rows, size])],
        [weight])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with open(path, "wb") as f:
        f.write(model.SerializeToString())


def run(wafer_run, model, grid, extra, work):
    """The analytic run's stats, or its one-line error; and wall seconds."""
    stats = os.path.join(work, "stats.json")
    cmd = [wafer_run, "run", model, "--grid", grid, "--dtype", "f16",
           "--mode", "analytic", "--stats", stats] + extra
    start = time.perf_counter()
    result = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if result.returncode != 0:
        error = result.stderr.strip().splitlines()[-1]
        return {"error": error.replace(work + os.sep, "")}, seconds
    with open(stats) as f:
        return json.load(f), seconds


def op_row(wafer_run, model, grid, extra, work, table, what, paper):
    """One MatMul's analytic time in ms (paper: its figure, or None)."""
    stats, seconds = run(wafer_run, model, grid, extra, work)
    row = {"table": table, "what": what, "grid": grid, "paper": paper,
           "unit": "ms", "wall_s": seconds}
    if "error" in stats:
        row["error"] = stats["error"]
    else:
        row["model"] = stats["seconds"] * 1e3
        row["cycles"] = stats["cycles"]
    print(json.dumps(row), flush=True)
    return row


def export(config, graph, work):
    out = os.path.join(work, f"{config}-{graph}")
    if not os.path.exists(os.path.join(out, f"{graph}.onnx")):
        subprocess.run([sys.executable,
                        os.path.join(SRC, "python", "wafer", "export_llama.py"),
                        config, "--out-dir", out, "--weights", "zeros",
                        "--graphs", graph], check=True, capture_output=True)
    return os.path.join(out, f"{graph}.onnx")


def llama_row(wafer_run, model, config, name, graph, table, grid, paper,
              dims, tokens, work):
    """Every layer resident where the weights can fit (decode) and the
    plan does, else one layer extrapolated."""
    row = {"table": table, "what": f"{name} {graph}", "grid": grid,
           "paper": paper, "unit": "tokens/s", "wall_s": 0.0}
    per_core = weight_bytes_per_core(config, grid)
    if graph == "decode" and per_core <= SRAM_BYTES:
        stats, seconds = run(wafer_run, model, grid, dims, work)
        row["wall_s"] = seconds
        if "error" not in stats:
            row["model"] = tokens / stats["seconds"]
            row["cycles"] = stats["cycles"]
            row["sram_bytes_per_core"] = stats["max_sram_bytes_per_core"]
            return row
        row["all_layers_error"] = stats["error"]
    else:
        row["all_layers_error"] = (f"{per_core:.0f} bytes of f16 weights "
                                   f"per core, SRAM {SRAM_BYTES}")
    stats, seconds = run(wafer_run, model, grid, dims + ["--layers", "1"],
                         work)
    row["wall_s"] += seconds
    row["layers"] = "1, extrapolated"
    if "error" in stats:
        row["error"] = stats["error"]
    else:
        row["model"] = tokens / stats["extrapolated_seconds"]
        row["cycles"] = stats["extrapolated_cycles"]
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(SRC, "docs", "bench"))
    ap.add_argument("--bin", default=os.path.join(SRC, "build", "bin"))
    ap.add_argument("--tables", default="6,9,10,4,3")
    ap.add_argument("--work", help="keep the exported graphs here and reuse "
                    "them (default: a temporary directory)")
    args = ap.parse_args()
    wafer_run = os.path.join(args.bin, "wafer-run")
    tables = args.tables.split(",")
    rows = []
    with tempfile.TemporaryDirectory(prefix="wafer-paper-") as scratch:
        work = args.work or scratch
        os.makedirs(work, exist_ok=True)
        if "6" in tables:
            for size, paper_ms in TABLE6.items():
                model = os.path.join(work, f"gemv{size}.onnx")
                gemv_model(size, model)
                for side in (360, 480, 600, 720):
                    rows.append(op_row(wafer_run, model, f"{side}x{side}",
                                       [], work, "6",
                                       f"MeshGEMV [1,{size // 1024}K]",
                                       paper_ms))
        # Figures 9 and 10: each algorithm at the paper's grid sizes.
        for figure, rows_of, sizes, flag, algorithms in (
                ("9", lambda n: n, (2048, 4096, 8192), "--gemm",
                 ("meshgemm", "summa", "cannon")),
                ("10", lambda n: 1, (16384, 32768), "--allreduce",
                 ("ktree", "pipeline"))):
            if figure not in tables:
                continue
            for size in sizes:
                model = os.path.join(work, f"fig{figure}-{size}.onnx")
                gemv_model(size, model, rows_of(size))
                k = f"{size // 1024}K"
                shape = f"[{rows_of(size)},{k}]x[{k},{k}]"
                for side in (360, 480, 600, 720):
                    for algorithm in algorithms:
                        rows.append(op_row(wafer_run, model, f"{side}x{side}",
                                           [flag, algorithm], work,
                                           f"Figure {figure}",
                                           f"{shape} {algorithm}", None))
        # Tokens a run yields: a decode step one, the prefill its prompt.
        for table, graph, models, dims, tokens in (
                ("4", "decode", TABLE4, ["--dim-param", "past=4095"], 1),
                ("3", "prefill", TABLE3, ["--dim-param", "seq=4096"], 4096)):
            if table not in tables:
                continue
            for (config, name), figures in models.items():
                model = export(config, graph, work)
                for grid, paper in figures.items():
                    rows.append(llama_row(wafer_run, model, config, name,
                                          graph, table, grid, paper, dims,
                                          tokens, work))
                    print(json.dumps(rows[-1]), flush=True)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "paper_tables.json"), "w") as f:
        json.dump({"target": "wse2", "dtype": "f16", "mode": "analytic",
                   "rows": rows}, f, indent=1)
    lines = ["| table | what | grid | paper | model | model / paper | mode "
             "| wall s |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        unit = r["unit"]
        mode = "analytic" + (", 1 layer extrapolated" if "layers" in r
                             else ", all layers" if r["unit"] == "tokens/s"
                             else "")
        if "error" in r:
            model, ratio = f"does not compile: {r['error']}", "-"
        else:
            model = (f"{r['model']:.5f} {unit}" if unit == "ms"
                     else f"{r['model']:.1f} {unit}")
            ratio = ("-" if r["paper"] is None
                     else f"{r['model'] / r['paper']:.2f}")
        paper = "-" if r["paper"] is None else f"{r['paper']} {unit}"
        lines.append(f"| {r['table']} | {r['what']} | {r['grid']} | "
                     f"{paper} | {model} | {ratio} | {mode} | "
                     f"{r['wall_s']:.1f} |")
    with open(os.path.join(args.out, "paper_tables.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
