"""Helpers of test/e2e/hf-inputs.test.

    hf_inputs.py same GENERATE_JSON_OUT ORT_JSON
        `wafer-run generate --json` output's generated tokens must equal
        generate_ort.mjs's list
    hf_inputs.py bad MODEL_DIR WORK_DIR
        writes WORK_DIR/padded.npz (the prefill's inputs with a padding 0 in
        attention_mask) and WORK_DIR/shifted.npz (the decode's with
        position_ids one past the past)
"""
import json
import os
import sys

import numpy as np


def same(out_path, ort_path):
    lines = open(out_path, encoding="utf-8").read().splitlines()
    got = json.loads(lines[-1])["generated_tokens"]
    want = json.load(open(ort_path))
    if got != want:
        sys.exit(f"generated {got}\n ONNX Runtime {want}")
    print(f"{len(got)} tokens equal ONNX Runtime's")


def bad(model_dir, work):
    arrays = dict(np.load(os.path.join(model_dir, "inputs_prefill.npz")))
    arrays["attention_mask"][0, 2] = 0
    np.savez(os.path.join(work, "padded.npz"), **arrays)
    arrays = dict(np.load(os.path.join(model_dir, "inputs_decode.npz")))
    arrays["position_ids"] += 1
    np.savez(os.path.join(work, "shifted.npz"), **arrays)


if __name__ == "__main__":
    {"same": same, "bad": bad}[sys.argv[1]](*sys.argv[2:])
