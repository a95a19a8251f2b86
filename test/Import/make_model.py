"""Writes a small ONNX model for the importer tests: argv = path, kind."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

path, kind = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(0)
if kind in ("tile", "tile_bad", "tile_huge"):
    # Tile x [2, 3, 4] by [2, 1, 3] (tile_bad: one repeat short; tile_huge:
    # a dimension past 2^40).
    repeats = {"tile": [2, 1, 3], "tile_bad": [2, 1],
               "tile_huge": [1 << 40, 1, 1]}[kind]
    graph = helper.make_graph(
        [helper.make_node("Tile", ["x", "repeats"], ["y"], name="tile_node")],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 3, 12])],
        [numpy_helper.from_array(np.array(repeats, np.int64), "repeats")])
    onnx.save(helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    np.savez(path + ".in.npz", x=x)
    np.savez(path + ".ref.npz", y=np.tile(x, repeats if kind == "tile" else 1))
    sys.exit(0)
if kind in ("opset9", "opset9_softmax_axis", "opset13_slice_short"):
    # Ops whose ONNX definition changed with the opset: Slice takes starts,
    # ends and axes as attributes before opset 10 (inputs after), Softmax
    # flattens at `axis` (default 1) before opset 13.
    opset = 13 if kind == "opset13_slice_short" else 9
    if kind == "opset13_slice_short":
        slice_node = helper.make_node("Slice", ["x", "starts"], ["s"],
                                      name="slice_node")
    else:
        slice_node = helper.make_node("Slice", ["x"], ["s"], name="slice_node",
                                      starts=[1], ends=[3], axes=[2])
    axis = {"opset9_softmax_axis": 1}.get(kind, 2)
    graph = helper.make_graph(
        [slice_node,
         helper.make_node("Softmax", ["s"], ["y"], name="softmax_node",
                          axis=axis)],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3, 2])],
        [numpy_helper.from_array(np.array([1], np.int64), "starts")])
    onnx.save(helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", opset)]), path)
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    s = x[:, :, 1:3].astype(np.float64)
    e = np.exp(s - s.max(axis=2, keepdims=True))
    np.savez(path + ".in.npz", x=x)
    np.savez(path + ".ref.npz", y=e / e.sum(axis=2, keepdims=True))
    sys.exit(0)
if kind == "mixed_types":
    # A float16 input added to a float initializer without a Cast: the
    # checker passes it, ONNX Runtime refuses it (Add's T bound to both).
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "b"], ["y"], name="add_node")],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT16, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT16, [2, 3])],
        [numpy_helper.from_array(np.ones((2, 3), np.float32), "b")])
    onnx.save(helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    sys.exit(0)
if kind == "scaled_embed":
    # A decode step whose embedding is scaled before the first RMSNorm (as
    # Gemma does): the scaled vector is made of host values alone.
    table = rng.standard_normal((16, 32)).astype(np.float32)
    weight = rng.standard_normal(32).astype(np.float32)
    head = rng.standard_normal((32, 16)).astype(np.float32)
    consts = {"table": table, "nw": weight, "head": head,
              "scale": np.array(5.0, np.float32),
              "two": np.array(2.0, np.float32),
              "eps": np.array(1e-5, np.float32)}
    graph = helper.make_graph(
        [helper.make_node("Gather", ["table", "ids"], ["e"], name="embed"),
         helper.make_node("Mul", ["e", "scale"], ["x"], name="scaled"),
         helper.make_node("Pow", ["x", "two"], ["sq"], name="square"),
         helper.make_node("ReduceMean", ["sq"], ["ms"], name="mean", axes=[-1]),
         helper.make_node("Add", ["ms", "eps"], ["mse"], name="plus_eps"),
         helper.make_node("Sqrt", ["mse"], ["rms"], name="root"),
         helper.make_node("Div", ["x", "rms"], ["xn"], name="normed"),
         helper.make_node("Mul", ["xn", "nw"], ["h"], name="weighted"),
         helper.make_node("MatMul", ["h", "head"], ["y"], name="lm_head")],
        "g", [helper.make_tensor_value_info("ids", TensorProto.INT64, [1, 1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 16])],
        [numpy_helper.from_array(v, k) for k, v in consts.items()])
    onnx.save(helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    sys.exit(0)
if kind == "f16":
    # A float16 model: the weight in raw_data, the bias in int32_data (as
    # ONNX keeps float16 bits there), float16 input and output. The
    # reference computes from the float16 values in double.
    x = rng.standard_normal((3, 48)).astype(np.float16)
    w = rng.standard_normal((6, 48)).astype(np.float16)
    b = np.arange(6).astype(np.float16) / 4
    bias = TensorProto(name="bias", data_type=TensorProto.FLOAT16, dims=[6])
    bias.int32_data.extend(b.view(np.uint16).astype(np.int32).tolist())
    graph = helper.make_graph(
        [helper.make_node("Gemm", ["x", "w", "bias"], ["g"], name="gemm_node",
                          transB=1, alpha=0.5),
         helper.make_node("Mul", ["g", "g"], ["y"], name="square")],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT16, [3, 48])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT16, [3, 6])],
        [numpy_helper.from_array(w, "w"), bias])
    onnx.save(helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    g = 0.5 * x.astype(np.float64) @ w.astype(np.float64).T + b
    np.savez(path + ".in.npz", x=x)
    np.savez(path + ".ref.npz", y=g * g)
    sys.exit(0)
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

if kind.startswith("ext_") or kind == "no_ir_version":
    # Variants of the same model that the importer must refuse: w's data
    # moved to external data at a bad location, or no IR version.
    m = onnx.load(path)
    if kind == "no_ir_version":
        m.ir_version = 0
    else:
        init = m.graph.initializer[0]
        data = numpy_helper.to_array(init).tobytes()
        location = {"ext_ok": "w.bin", "ext_missing": "absent.bin",
                    "ext_abs": "/tmp/w.bin", "ext_dotdot": "../w.bin",
                    "ext_symlink": "link.bin", "ext_short": "short.bin"}[kind]
        folder = os.path.dirname(os.path.abspath(path))
        if kind in ("ext_ok", "ext_symlink"):
            with open(os.path.join(folder, "w.bin"), "wb") as f:
                f.write(data)
        if kind == "ext_symlink" and not os.path.lexists(
                os.path.join(folder, "link.bin")):
            os.symlink("w.bin", os.path.join(folder, "link.bin"))
        if kind == "ext_short":
            with open(os.path.join(folder, "short.bin"), "wb") as f:
                f.write(data[:100])
        init.ClearField("raw_data")
        init.data_location = TensorProto.EXTERNAL
        entry = init.external_data.add()
        entry.key, entry.value = "location", location
    onnx.save(m, path)
