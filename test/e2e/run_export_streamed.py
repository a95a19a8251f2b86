"""The exporter's streamed random weights (models over 2 GB), at tiny scale.

  run_export_streamed.py SRC_DIR OUT_DIR

Lowers the exporter's size threshold so that the tiny config takes the
path the 1B and 8B configs take with --weights random: the zeros export,
then random values written into the external data file tensor by tensor.
Checks every weight's values against the distribution the exporter
documents (matrices normal(0, 0.02), RMSNorm weights 1 + 0.1 * normal:
mean and standard deviation within 25%, so at least 64 values each) and
prints one line per check for FileCheck.
"""
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper

src, out = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(src, "python"))
from wafer import export_llama  # noqa: E402

export_llama.ZEROS_AUTO_BYTES = 1
code = export_llama.main(["tiny", "--out-dir", out, "--weights", "random",
                          "--graphs", "decode"])
print(f"export exit {code}")
model = onnx.load(os.path.join(out, "decode.onnx"), load_external_data=False)
external = [t for t in model.graph.initializer
            if t.data_location == onnx.TensorProto.EXTERNAL]
bad = []
for t in external:
    values = numpy_helper.to_array(t, base_dir=out).astype(np.float64)
    mean, std = (1.0, 0.1) if values.ndim == 1 else (0.0, 0.02)
    if values.size < 64:
        continue
    if abs(values.mean() - mean) > 0.25 * std or \
            abs(values.std() - std) > 0.25 * std:
        bad.append(f"{t.name}: mean {values.mean():.4f} std {values.std():.4f}")
print(f"{len(external)} external weights, {len(bad)} off their distribution")
for line in bad:
    print("  " + line)
