"""Writes a small ONNX model for the importer tests: argv = path, kind."""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

path, kind = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(0)
w = numpy_helper.from_array(rng.standard_normal((6, 48)).astype(np.float32), "w")
if kind == "typed":
    # The typed-field form: values in float_data instead of raw_data.
    w = helper.make_tensor("w", TensorProto.FLOAT, [6, 48],
                           rng.standard_normal(288).astype(np.float32).tolist())
bias = numpy_helper.from_array(np.arange(6, dtype=np.float32), "bias")
nodes = [
    helper.make_node("Gemm", ["x", "w", "bias"], ["g"], name="gemm_node",
                     transB=1, alpha=0.5),
    helper.make_node("Mul", ["g", "g"], ["y"], name="square"),
]
if kind == "floor":
    nodes.append(helper.make_node("Floor", ["y"], ["r"], name="act"))
out = "r" if kind == "floor" else "y"
graph = helper.make_graph(
    nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 48])],
    [helper.make_tensor_value_info(out, TensorProto.FLOAT, [3, 6])], [w, bias])
if kind == "dynamic":
    graph.input[0].type.tensor_type.shape.dim[0].dim_param = "batch"
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
          path)
