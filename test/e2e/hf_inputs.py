"""Helpers of test/e2e/hf-inputs.test.

    hf_inputs.py same GENERATE_JSON_OUT ORT_JSON
        `wafer-run generate --json` output's generated tokens must equal
        generate_ort.mjs's list
    hf_inputs.py bad MODEL_DIR WORK_DIR
        writes WORK_DIR/padded.npz (the prefill's inputs with a padding 0 in
        attention_mask), WORK_DIR/shifted.npz (the decode's with
        position_ids one past the past) and WORK_DIR/chunk.npz (the
        decode's with three new tokens)
    hf_inputs.py close OUT.npz REFERENCE.npz
        every output within 1e-4 of its reference's largest magnitude
        (wafer.testing.compare: both files hold the same names and shapes)
"""
import json
import os
import sys

import numpy as np

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(SRC, "python"))

from wafer import testing  # noqa: E402


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
    past = arrays["attention_mask"].shape[1] - 1
    arrays["input_ids"] = np.array([[1, 2, 3]], dtype=np.int64)
    arrays["position_ids"] = np.arange(past, past + 3, dtype=np.int64)[None]
    arrays["attention_mask"] = np.ones((1, past + 3), dtype=np.int64)
    np.savez(os.path.join(work, "chunk.npz"), **arrays)


def close(out_path, ref_path):
    worst = testing.compare(out_path, ref_path)
    if not worst <= 1e-4:
        sys.exit(f"relative error {worst:.3e}")
    print(f"{len(testing.load_npz(ref_path))} outputs within 1e-4 of ONNX "
          f"Runtime's (worst {worst:.2e})")

if __name__ == "__main__":
    {"same": same, "bad": bad, "close": close}[sys.argv[1]](*sys.argv[2:])
