"""Writes OUT/big.onnx: y = x @ W with W [N, N] float32 in external data
that is never written (a sparse file of zeros), so a model larger than a
bundle can hold costs no disk and no time to make."""
import os
import sys

import onnx
from onnx import TensorProto, helper

out, n = sys.argv[1], int(sys.argv[2])
os.makedirs(out, exist_ok=True)
data = os.path.join(out, "big.onnx.data")
with open(data, "wb") as f:
    f.truncate(n * n * 4)
w = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[n, n])
w.data_location = TensorProto.EXTERNAL
for key, value in (("location", "big.onnx.data"), ("offset", "0"),
                   ("length", str(n * n * 4))):
    entry = w.external_data.add()
    entry.key, entry.value = key, value
graph = helper.make_graph(
    [helper.make_node("MatMul", ["x", "w"], ["y"])], "big",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, n])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, n])], [w])
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
          os.path.join(out, "big.onnx"))
