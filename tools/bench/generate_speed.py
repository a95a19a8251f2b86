#!/usr/bin/python3
"""Text generation on the emulator against ONNX Runtime, side by side.

  /usr/bin/python3 tools/bench/generate_speed.py [--out docs/bench]
      [--bin build/bin] [--config stories15m] [--grid 48x48] [--tokens 16]

Writes the config's model (random weights, seed 1) as an f16 GGUF with its
ONNX twin (python -m wafer.checkpoints --onnx-dir), then in this process:
ONNX Runtime's greedy generation (test/reference/generate_ort.mjs: prefill,
then the decode graph per token with the KV caches fed back) and `wafer-run
generate` (prefill and decode on GRID in f16, the caches kept in SRAM) of
--tokens new tokens from the same prompt ids. The tokens must be equal.
Records wall seconds of each and their ratio (the machine is shared:
compare ratios, not seconds), and the modeled time to first token and per
output token. Writes OUT/generate_speed.json and OUT/generate_speed.md.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

from measure import wall

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROMPT = "1,450,3974,2501,263,931,727,29892"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(SRC, "docs", "bench"))
    ap.add_argument("--bin", default=os.path.join(SRC, "build", "bin"))
    ap.add_argument("--config", default="stories15m")
    ap.add_argument("--grid", default="48x48")
    ap.add_argument("--tokens", type=int, default=16)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as work:
        gguf, onnx_dir = os.path.join(work, "m.gguf"), os.path.join(work, "onnx")
        env = dict(os.environ, PYTHONPATH=os.path.join(SRC, "python"))
        subprocess.run(["/usr/bin/python3", "-W", "ignore", "-m", "wafer.checkpoints",
                        "--config", args.config, "--seed", "1", "--format", "gguf",
                        "--dtype", "f16", "--out", gguf, "--onnx-dir", onnx_dir],
                       check=True, env=env, capture_output=True)
        ort_s, ort_out = wall(["node", os.path.join(SRC, "test", "reference",
                                                     "generate_ort.mjs"),
                               onnx_dir, PROMPT, str(args.tokens)])
        stats = os.path.join(work, "stats.json")
        wafer_s, wafer_out = wall([os.path.join(args.bin, "wafer-run"), "generate",
                                   gguf, "--tokens", PROMPT, "--max-new-tokens",
                                   str(args.tokens), "--grid", args.grid,
                                   "--dtype", "f16", "--threads", "2", "--json",
                                   "--stats", stats])
        ort_tokens = json.loads(ort_out)
        result = json.loads(wafer_out.splitlines()[-1])
        if result["generated_tokens"] != ort_tokens:
            sys.exit(f"tokens differ: wafer {result['generated_tokens']} "
                     f"ONNX Runtime {ort_tokens}")
        s = result["stats"]
        record = {
            "config": args.config, "grid": args.grid, "dtype": "f16",
            "prompt_tokens": len(PROMPT.split(",")), "new_tokens": args.tokens,
            "tokens_equal": True, "ort_seconds": ort_s,
            "wafer_generate_seconds": wafer_s, "ratio": wafer_s / ort_s,
            "modeled_time_to_first_token_s": s["time_to_first_token_s"],
            "modeled_time_per_output_token_s": s.get("time_per_output_token_s"),
            "modeled_tokens_per_second": s.get("tokens_per_second"),
            "decode_step_cycles": s["decode_step_cycles"],
        }
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "generate_speed.json"), "w") as f:
        json.dump(record, f, indent=2)
    md = (f"| model | grid | new tokens | ONNX Runtime s | wafer-run generate s | "
          f"ratio | modeled TTFT s | modeled s/token |\n|---|---|---:|---:|---:|---:|---:|---:|\n"
          f"| {args.config} f16 | {args.grid} | {args.tokens} | {ort_s:.2f} | "
          f"{wafer_s:.2f} | {wafer_s / ort_s:.1f} | "
          f"{record['modeled_time_to_first_token_s']:.3e} | "
          f"{record['modeled_time_per_output_token_s']:.3e} |\n")
    with open(os.path.join(args.out, "generate_speed.md"), "w") as f:
        f.write(md)
    print(md, end="")


if __name__ == "__main__":
    main()
