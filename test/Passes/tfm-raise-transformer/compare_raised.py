"""Checks that tfm-raise-transformer keeps a module's meaning.

  compare_raised.py MODULE.mlir WORK_DIR WAFER_OPT WAFER_RUN

For every func.func of MODULE with only f32 arguments, fills random inputs,
evaluates the function before and after raising with `wafer-run eval`, and
requires every output to agree within 1e-5 of its largest magnitude (the
raised kernels compute in another order).
"""
import os
import re
import subprocess
import sys

import numpy as np

module, work, wafer_opt, wafer_run = sys.argv[1:5]
os.makedirs(work, exist_ok=True)
text = open(module).read()
funcs = re.findall(r"func\.func @(\w+)\((.*?)\) ->", text)
rng = np.random.default_rng(0)
for name, args in funcs:
    shapes = re.findall(r"%\w+: tensor<([0-9x]+)xf32>", args)
    if len(shapes) != args.count("%"):
        continue
    # One module per function, renamed @main for wafer-run eval.
    body = text[text.index(f"func.func @{name}("):]
    end = body.index("\n}\n") + 3
    single = os.path.join(work, f"{name}.mlir")
    with open(single, "w") as f:
        f.write(body[:end].replace(f"@{name}(", "@main(", 1))
    raised = os.path.join(work, f"{name}.raised.mlir")
    subprocess.run([wafer_opt, single, "--pass-pipeline=builtin.module("
                    "func.func(tfm-raise-transformer))", "-o", raised],
                   check=True)
    inputs = {f"input{i}": rng.standard_normal(
        [int(d) for d in s.split("x")]).astype(np.float32)
        for i, s in enumerate(shapes)}
    np.savez(os.path.join(work, f"{name}.in.npz"), **inputs)
    results = []
    for path in (single, raised):
        out = path + ".out.npz"
        subprocess.run([wafer_run, "eval", path, "--inputs",
                        os.path.join(work, f"{name}.in.npz"), "--outputs",
                        out], check=True, capture_output=True)
        results.append(np.load(out))
    for key in results[0].files:
        a, b = results[0][key], results[1][key]
        error = np.abs(a - b).max() / max(np.abs(a).max(), 1e-30)
        if not error <= 1e-5:
            sys.exit(f"{name}: raised output {key} differs by {error:.2e}")
    print(f"{name}: raised and unraised agree")
