"""Copies an ONNX model's initializers into a GGUF and a safetensors file.

    onnx_weights_to_checkpoints.py MODEL.onnx OUT_PREFIX

Writes OUT_PREFIX.gguf and OUT_PREFIX.safetensors (F32, same names and
row-major shapes) and OUT_PREFIX.in.npz (random inputs for the model).
"""
import sys

import numpy as np
import onnx
from onnx import numpy_helper

from wafer import checkpoints as ck

model = onnx.load(sys.argv[1])
prefix = sys.argv[2]
weights = {i.name: numpy_helper.to_array(i).astype(np.float32)
           for i in model.graph.initializer}
ck.write_gguf_tensors(prefix + ".gguf", [("general.architecture", ck.STRING, "none")],
                      weights)
ck.write_safetensors(prefix + ".safetensors", weights)
rng = np.random.default_rng(1)
inputs = {i.name: rng.standard_normal([d.dim_value for d in i.type.tensor_type.shape.dim])
          .astype(np.float32) for i in model.graph.input if i.name not in weights}
np.savez(prefix + ".in.npz", **inputs)
