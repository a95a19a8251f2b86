"""Imports a big exported LLaMA graph and runs fold + raise, measuring each step.

  big_import.py BIN_DIR MODEL.onnx WORK_DIR INPUT_SHAPE MAX_RSS_MB

Runs `wafer-translate --import-onnx` then `wafer-opt` with tfm-fold-shapes and
tfm-raise-transformer, each as its own process, and prints wall time and peak
resident memory per step (from getrusage of the child) and the raised op
counts. Fails if a step fails or its peak memory exceeds MAX_RSS_MB. Time is
printed, not checked: the machine is shared and noisy.
"""
import os
import re
import subprocess
import sys
import time
from collections import Counter

RAISED = ("embed", "linear", "rms_norm", "rope", "attention", "swiglu")


def main():
    bin_dir, model, work, input_shape, max_rss_mb = sys.argv[1:6]
    os.makedirs(work, exist_ok=True)
    imported = os.path.join(work, "imported.mlir")
    raised = os.path.join(work, "raised.mlir")
    steps = [
        ("import", [os.path.join(bin_dir, "wafer-translate"), "--import-onnx",
                    model, "--input-shape", input_shape, "-o", imported]),
        ("fold+raise", [os.path.join(bin_dir, "wafer-opt"), imported,
                        "--tfm-fold-shapes", "--tfm-raise-transformer",
                        "-o", raised]),
    ]
    for label, args in steps:
        start = time.perf_counter()
        child = subprocess.Popen(args, stderr=subprocess.PIPE, text=True)
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - start
        stderr = child.stderr.read()
        if status != 0:
            sys.exit(f"FAILED: {label}: {' '.join(args)}\n{stderr.strip()}")
        rss_mb = usage.ru_maxrss / 1024  # Linux reports KiB
        print(f"{label}: {seconds:.2f} s, peak {rss_mb:.0f} MB")
        if rss_mb > float(max_rss_mb):
            sys.exit(f"FAILED: {label} peaked at {rss_mb:.0f} MB "
                     f"(limit {max_rss_mb} MB)")
    with open(raised) as f:
        counts = Counter(re.findall(r"= tfm\.([a-z_]+)", f.read()))
    print("raised: " + " ".join(f"{k}={counts[k]}" for k in RAISED))


if __name__ == "__main__":
    main()
