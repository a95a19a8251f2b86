"""The bad-input corpus: makes each bad input (ONNX files, npz, MLIR text,
bundles, target JSON, options) in a work folder, runs the tool on it, and
checks what a user sees: exit code 1, exactly one line on stderr starting
`error:` (or MLIR's `file:line:col: error:`) that contains the expected
words, no signal, no hang (30 s). A few extreme but valid inputs must
instead succeed quietly.

    run_bad_inputs.py --bin BUILD/bin --src SOURCE --work DIR [-k NAME]

Cases in runtime/ territory that do not pass yet are listed in
EXPECTED_FAIL with the reason; they are run and reported, but do not fail
the test (and an expected failure that passes is reported so the list is
kept honest).
"""
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import zipfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# name -> why it is still expected to fail (owner: runtime/).
EXPECTED_FAIL = {
    "run_threads_huge_bundle": "none expected; kept if the runtime changes",
}
EXPECTED_FAIL.pop("run_threads_huge_bundle")

LINE = re.compile(r"^(error: |[^\n]*:\d+:\d+: error: )[^\n]*\n$")


class Corpus:
    def __init__(self, bin_dir, src, work):
        self.bin, self.src, self.work = bin_dir, src, work
        self.cases = []

    def path(self, name):
        return os.path.join(self.work, name)

    def tool(self, name):
        return os.path.join(self.bin, name)

    def bad(self, name, argv, *expect):
        """A case that must fail with one line containing `expect`."""
        self.cases.append((name, argv, expect, False))

    def good(self, name, argv):
        """An extreme but valid input: exit 0, nothing on stderr."""
        self.cases.append((name, argv, (), True))

    def run(self, only=None):
        failures, unexpected_passes, count = [], [], 0
        for name, argv, expect, should_pass in self.cases:
            if only and only not in name:
                continue
            count += 1
            problem = check(argv, expect, should_pass)
            if name in EXPECTED_FAIL:
                if problem:
                    print(f"XFAIL {name}: {problem} ({EXPECTED_FAIL[name]})")
                else:
                    unexpected_passes.append(name)
                    print(f"XPASS {name}: remove it from EXPECTED_FAIL")
            elif problem:
                failures.append(name)
                print(f"FAIL {name}: {problem}\n  $ {' '.join(argv)}")
            else:
                print(f"ok {name}")
        print(f"{count} cases, {len(failures)} failed, "
              f"{len(unexpected_passes)} unexpectedly passed, "
              f"{sum(1 for n, *_ in self.cases if n in EXPECTED_FAIL)} "
              f"expected to fail")
        return not failures and not unexpected_passes


SHOW = False


def check(argv, expect, should_pass):
    try:
        result = subprocess.run(argv, capture_output=True, timeout=30,
                                stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return "hangs (no exit within 30 s)"
    err = result.stderr.decode("utf-8", "backslashreplace")
    if result.returncode < 0:
        return f"killed by {signal.Signals(-result.returncode).name}: {err[:200]!r}"
    if should_pass:
        if result.returncode != 0 or err:
            return f"exit {result.returncode}, stderr {err[:300]!r}"
        return None
    if result.returncode != 1:
        return f"exit code {result.returncode}, stderr {err[:300]!r}"
    if not LINE.match(err):
        return f"not one `error:` line: {err[:300]!r}"
    for word in expect:
        if word not in err:
            return f"{word!r} not in {err.strip()!r}"
    if any(ord(c) < 32 and c != "\n" for c in err):
        return f"unescaped control bytes in {err!r}"
    if SHOW:
        print("   ", err.strip())
    return None


def save(model, path, opset=17):
    onnx.save(model, path)


def gemm_model(path, trans_b=1, opset=17, shape=(3, 48), drop_shape=False,
               dynamic=False, external=None):
    """x[3,48] @ w[6,48]^T: the importer tests' shape of model."""
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(
        rng.standard_normal((6, 48)).astype(np.float32), "w")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))
    if drop_shape:
        x.type.tensor_type.ClearField("shape")
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [shape[0], 6])
    if dynamic:
        x.type.tensor_type.shape.dim[0].dim_param = "batch"
        y.type.tensor_type.shape.dim[0].dim_param = "batch"
    graph = helper.make_graph(
        [helper.make_node("Gemm", ["x", "w"], ["y"], name="gemm",
                          transB=trans_b)],
        "g", [x], [y], [w])
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    if external is not None:
        init = model.graph.initializer[0]
        init.ClearField("raw_data")
        init.data_location = TensorProto.EXTERNAL
        for key, value in external.items():
            entry = init.external_data.add()
            entry.key, entry.value = key, value
    onnx.save(model, path)


def int_div_model(path):
    """y = a / b on int64 inputs: a zero divisor has no value."""
    graph = helper.make_graph(
        [helper.make_node("Div", ["a", "b"], ["y"], name="div")], "g",
        [helper.make_tensor_value_info("a", TensorProto.INT64, [2]),
         helper.make_tensor_value_info("b", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("y", TensorProto.INT64, [2])])
    onnx.save(helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def overflow_model(path, inputs):
    """x[1,8] @ ones[8,4] with x four times 3e38 then four times -3e38: the
    host evaluator sums in double (0), a grid's partial sums overflow to inf
    and -inf, whose sum is NaN."""
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
        [numpy_helper.from_array(np.ones((8, 4), np.float32), "w")])
    onnx.save(helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    np.savez(inputs, x=np.array([[3e38] * 4 + [-3e38] * 4], np.float32))


def constant_inputs_model(path, op_type, values, elem):
    """One `op_type` node of Constant inputs (values the importer knows, as
    a shape or a length must be)."""
    names = [f"c{i}" for i in range(len(values))]
    consts = [helper.make_node("Constant", [], [n], name=n,
                               value=numpy_helper.from_array(v))
              for n, v in zip(names, values)]
    graph = helper.make_graph(
        consts + [helper.make_node(op_type, names, ["y"], name="op")], "g",
        [], [helper.make_tensor_value_info("y", elem, None)])
    save(helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17)]), path)


def build(c):
    w, onnx_in = c.path, None
    opt, tr, run = c.tool("wafer-opt"), c.tool("wafer-translate"), c.tool(
        "wafer-run")
    tiny = os.path.join(c.src, "test", "models", "tiny")
    decode, prefill = (os.path.join(tiny, "decode.onnx"),
                       os.path.join(tiny, "prefill.onnx"))
    inputs_decode = os.path.join(tiny, "inputs_decode.npz")
    imp = [tr, "--import-onnx"]

    # --- ONNX files -------------------------------------------------------
    gemm_model(w("ok.onnx"))
    np.savez(w("ok.npz"), x=np.ones((3, 48), np.float32))
    c.bad("onnx_missing", imp + [w("absent.onnx")], "absent.onnx",
          "cannot open")
    os.makedirs(w("dir.onnx"), exist_ok=True)
    c.bad("onnx_directory", imp + [w("dir.onnx")], "dir.onnx", "directory")
    open(w("empty.onnx"), "wb").close()
    c.bad("onnx_empty", imp + [w("empty.onnx")], "empty.onnx",
          "not a valid ONNX model")
    with open(w("text.onnx"), "w") as f:
        f.write("hello, not a model\n")
    c.bad("onnx_text", imp + [w("text.onnx")], "not a valid ONNX model")
    data = open(w("ok.onnx"), "rb").read()
    open(w("truncated.onnx"), "wb").write(data[:len(data) // 2])
    c.bad("onnx_truncated", imp + [w("truncated.onnx")], "truncated.onnx")
    open(w("flipped.onnx"), "wb").write(bytes(b ^ 0xA5 for b in data))
    c.bad("onnx_bitflipped", imp + [w("flipped.onnx")], "flipped.onnx")
    # A module declaring a weight in another shape of the same size: its
    # values would be reinterpreted.
    with open(w("reshaped_weight.mlir"), "w") as f:
        f.write('func.func @main(%x: tensor<3x48xf32>) -> tensor<3x6xf32> {\n'
                '  %w = tfm.weight "w" from "ok.onnx" : tensor<48x6xf32>\n'
                '  %y = tfm.matmul %x, %w : (tensor<3x48xf32>, '
                'tensor<48x6xf32>) -> tensor<3x6xf32>\n'
                '  return %y : tensor<3x6xf32>\n}\n')
    # The timing mode reads no weights, so it needs neither the file nor
    # its shapes.
    with open(w("absent_weight.mlir"), "w") as f:
        f.write(open(w("reshaped_weight.mlir")).read().replace(
            "ok.onnx", "absent.onnx"))
    c.good("run_timing_without_weight_files",
           [run, "run", w("absent_weight.mlir"), "--grid", "2x2", "--mode",
            "timing", "--quiet"])
    # An unnamed argument is input<N> (eval reads the inputs first).
    np.savez(w("reshaped_weight.npz"), input0=np.ones((3, 48), np.float32))
    for command in ("run", "eval"):
        c.bad(f"{command}_weight_declared_in_another_shape",
              [run, command, w("reshaped_weight.mlir"), "--inputs",
               w("reshaped_weight.npz")] +
              (["--grid", "2x2"] if command == "run" else []),
              "ok.onnx: tensor 'w' has shape [6, 48], but",
              "reshaped_weight.mlir declares [48, 6]")
    gemm_model(w("opset99.onnx"), opset=99)
    c.bad("onnx_opset_99", imp + [w("opset99.onnx")], "opset 99")
    c.bad("eval_opset_99", [run, "eval", w("opset99.onnx"), "--inputs",
                            w("ok.npz")], "opset 99")
    gemm_model(w("transb5.onnx"), trans_b=5)
    c.bad("onnx_gemm_transB_5", imp + [w("transb5.onnx")], "'transB' is 5")
    gemm_model(w("transbneg.onnx"), trans_b=-1)
    c.bad("onnx_gemm_transB_neg", imp + [w("transbneg.onnx")], "'transB'")
    gemm_model(w("noshape.onnx"), drop_shape=True)
    c.bad("onnx_input_without_shape", imp + [w("noshape.onnx")],
          "input 'x'", "no shape")
    gemm_model(w("dynamic.onnx"), dynamic=True)
    c.bad("onnx_dynamic_unbound", imp + [w("dynamic.onnx")],
          "dynamic dimension 'batch'")
    for name, arg, words in [
            ("shape_no_dims", "x=", "expected NAME=D0xD1"),
            ("shape_no_name", "=3x48", "expected NAME=D0xD1"),
            ("shape_negative", "x=-1x48", "not a non-negative integer"),
            ("shape_huge", "x=99999999999999999999x48",
             "not a non-negative integer"),
            ("shape_rank", "x=3", "has rank 1"),
            ("shape_not_input", "y=3x48", "not a graph input")]:
        c.bad("onnx_input_" + name, imp + [w("dynamic.onnx"), "--input-shape",
                                           arg], words)
    # A size of 0 imports (an empty past KV cache is one); no grid holds it.
    c.bad("run_input_shape_zero",
          [run, "run", w("dynamic.onnx"), "--input-shape", "x=0x48", "--grid",
           "2x2", "--init", "random"],
          "'tfm.linear' has an empty tensor 'tensor<0x48xf32>'; the grid holds "
          "no tensors with a dimension of size 0")

    # External data.
    raw = np.random.default_rng(0).standard_normal((6, 48)).astype(
        np.float32).tobytes()
    os.makedirs(w("ext"), exist_ok=True)
    open(w("ext/w.bin"), "wb").write(raw)
    ext_cases = [
        ("nul", {"location": "w.bin\0junk"}, "NUL byte"),
        ("absolute", {"location": "/etc/passwd"}, "absolute"),
        ("dotdot", {"location": "../w.bin"}, "'..'"),
        ("missing", {"location": "absent.bin"}, "No such file"),
        ("fifo", {"location": "pipe.bin"}, "not a regular file"),
        ("directory", {"location": "sub"}, "not a regular file"),
        ("short", {"location": "w.bin", "offset": "100"}, "beyond the end"),
        ("offset_overflow", {"location": "w.bin",
                             "offset": "9223372036854775000"},
         "beyond the end"),
        ("negative_length", {"location": "w.bin", "length": "-5"},
         "not a non-negative integer"),
        ("wrong_length", {"location": "w.bin", "length": "7"},
         "differs from the 1152 bytes"),
        ("no_location", {"offset": "0"}, "no location"),
    ]
    if not os.path.exists(w("ext/pipe.bin")):
        os.mkfifo(w("ext/pipe.bin"))
    os.makedirs(w("ext/sub"), exist_ok=True)
    for name, entries, words in ext_cases:
        gemm_model(w(f"ext/{name}.onnx"), external=entries)
        c.bad("onnx_external_" + name, imp + [w(f"ext/{name}.onnx")],
              f"{name}.onnx", words)

    # Initializers whose declared size cannot be right.
    model = onnx.load(w("ok.onnx"))
    model.graph.initializer[0].ClearField("dims")
    model.graph.initializer[0].dims.extend([1 << 40, 1 << 40])
    onnx.save(model, w("hugedims.onnx"))
    c.bad("onnx_initializer_size_overflow", imp + [w("hugedims.onnx")],
          "overflows 64 bits")
    model = onnx.load(w("ok.onnx"))
    model.graph.initializer[0].ClearField("dims")
    model.graph.initializer[0].dims.extend([1 << 30, 48])
    onnx.save(model, w("bigdims.onnx"))
    c.bad("onnx_initializer_data_short", imp + [w("bigdims.onnx")],
          "bytes of data, its shape needs")
    model = onnx.load(w("ok.onnx"))
    model.graph.node[0].input[1] = "nowhere"
    onnx.save(model, w("undefined.onnx"))
    c.bad("onnx_undefined_input", imp + [w("undefined.onnx")],
          "'nowhere' is not defined")
    model = onnx.load(w("ok.onnx"))
    model.graph.node[0].op_type = "Floor"
    onnx.save(model, w("floor.onnx"))
    c.bad("onnx_unsupported_op", imp + [w("floor.onnx")], "Floor")
    model = onnx.load(w("ok.onnx"))
    model.graph.input[0].type.tensor_type.elem_type = TensorProto.BFLOAT16
    onnx.save(model, w("bf16in.onnx"))
    c.bad("onnx_unsupported_type", imp + [w("bf16in.onnx")], "data type 16",
          "supported: float (1), float16 (10)")

    # --- npz inputs -----------------------------------------------------------
    ev = [run, "eval"]
    c.bad("npz_missing", ev + [w("ok.onnx"), "--inputs", w("absent.npz")],
          "absent.npz")
    with open(w("text.npz"), "w") as f:
        f.write("not a zip\n")
    c.bad("npz_not_zip", ev + [w("ok.onnx"), "--inputs", w("text.npz")],
          "text.npz")
    np.savez(w("other.npz"), z=np.ones((3, 48), np.float32))
    c.bad("npz_input_missing", ev + [w("ok.onnx"), "--inputs",
                                     w("other.npz")], "'x'")
    np.savez(w("int.npz"), x=np.ones((3, 48), np.int64))
    c.bad("npz_wrong_dtype", ev + [w("ok.onnx"), "--inputs", w("int.npz")],
          "dtype")
    np.savez(w("rank1.npz"), x=np.ones((48,), np.float32))
    c.bad("npz_lower_rank_for_dynamic", ev + [w("dynamic.onnx"), "--inputs",
                                              w("rank1.npz")],
          "does not fit the model's declared shape")
    np.savez(w("wrongshape.npz"), x=np.ones((4, 48), np.float32))
    c.bad("npz_wrong_shape", ev + [w("ok.onnx"), "--inputs",
                                   w("wrongshape.npz")], "'x'")
    np.savez(w("zero_rows.npz"), x=np.ones((0, 48), np.float32))
    c.bad("run_zero_rows_bind_dynamic", [run, "run", w("dynamic.onnx"),
                                         "--grid", "2x2", "--inputs",
                                         w("zero_rows.npz")],
          "dimension of size 0")
    with open(w("ok.npz"), "rb") as f:
        npz = f.read()
    # Two members named x.npy: the second copy of the local header and data.
    import warnings
    import zipfile
    warnings.simplefilter("ignore", UserWarning)
    with zipfile.ZipFile(w("dup.npz"), "w") as z:
        for value in (1.0, 2.0):
            import io
            buf = io.BytesIO()
            np.save(buf, np.full((3, 48), value, np.float32))
            z.writestr("x.npy", buf.getvalue())
    c.bad("npz_duplicate_member", ev + [w("ok.onnx"), "--inputs",
                                        w("dup.npz")], "x")
    # .npy members numpy's writer never makes: the header dict is parsed
    # strictly (a repeated key would be read two ways) and the data must be
    # exactly the shape's.
    buf = io.BytesIO()
    np.save(buf, np.ones((3, 48), np.float32))
    good = buf.getvalue()
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 48), }"
    for name, old, new, words in [
            ("npy_duplicate_key", header,
             header.replace("{", "{'descr': '<i8', "), "malformed .npy header"),
            ("npy_unclosed_header", header, header[:-3] + "  ",
             "malformed .npy header"),
            ("npy_empty_shape_item", header,
             header.replace("(3, 48)", "(3,, 48)"), "malformed .npy header"),
            ("npy_trailing_data", None, None,
             "580 bytes of data for 144 elements of float32 (576 bytes)")]:
        # Same length (the header's padding gives room): only the dict
        # changes.
        grow = max(0, len(new or "") - len(old or ""))
        member = (good + b"\0\0\0\0" if old is None else
                  good.replace((old + " " * grow).encode(),
                               new.encode().ljust(len(old))))
        assert old is None or (len(member) == len(good) and member != good)
        with zipfile.ZipFile(w(name + ".npz"), "w") as z:
            z.writestr("x.npy", member)
        c.bad(name, ev + [w("ok.onnx"), "--inputs", w(name + ".npz")], words)
    # A deflated member claiming 4 GB (found by fuzz-npz: it was allocated
    # before inflating); libzip now refuses that file at open. A
    # well-formed archive whose headers agree on the claim reaches the
    # reader's own bound.
    c.bad("npz_deflate_size_claim",
          ev + [w("ok.onnx"), "--inputs",
                os.path.join(c.src, "test/fuzz/corpus/npz/oom-deflate-size-claim.npz")],
          "oom-deflate-size-claim.npz", "corrupt")
    with zipfile.ZipFile(w("claim.npz"), "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("x.npy", b"\0" * 4096)
    data = bytearray(open(w("claim.npz"), "rb").read())
    local, central = data.find(b"PK\x03\x04"), data.find(b"PK\x01\x02")
    data[local + 22:local + 26] = (0xF0000000).to_bytes(4, "little")
    data[central + 24:central + 28] = (0xF0000000).to_bytes(4, "little")
    open(w("claim.npz"), "wb").write(bytes(data))
    c.bad("npz_deflate_size_claim_consistent",
          ev + [w("ok.onnx"), "--inputs", w("claim.npz")],
          "claim.npz", "more than deflate can produce")
    ids = dict(np.load(inputs_decode))
    for name, value, words in [("negative", -1, "token id -1"),
                               ("beyond", 1_000_000, "token id 1000000")]:
        d = dict(ids)
        d["input_ids"] = np.full_like(ids["input_ids"], value)
        np.savez(w(f"ids_{name}.npz"), **d)
        c.bad(f"eval_token_id_{name}", ev + [decode, "--inputs",
                                             w(f"ids_{name}.npz")], words)
        c.bad(f"run_token_id_{name}", [run, "run", decode, "--grid", "4x4",
                                       "--inputs", w(f"ids_{name}.npz")],
              words)
    f32, i64 = np.float32, np.int64
    for name, start, limit, delta, elem in [
            ("tiny_step", f32(0), f32(1e30), f32(1e-30), TensorProto.FLOAT),
            ("infinite", f32(0), f32(np.inf), f32(1), TensorProto.FLOAT),
            ("int64_span", i64(2**63 - 1), i64(-2**63), i64(-1),
             TensorProto.INT64)]:
        constant_inputs_model(w(f"range_{name}.onnx"), "Range",
                              [start, limit, delta], elem)
        c.bad("onnx_range_" + name, imp + [w(f"range_{name}.onnx")],
              "no finite length below 2^40")
    for name, shape, words in [
            ("negative", [-3, 4], "shape [-3, 4] has a negative dimension"),
            ("huge", [2**31] * 3, "holds more than 2^63 elements")]:
        constant_inputs_model(w(f"cos_{name}.onnx"), "ConstantOfShape",
                              [np.array(shape, np.int64)], TensorProto.FLOAT)
        c.bad("onnx_constant_of_shape_" + name,
              imp + [w(f"cos_{name}.onnx")], words)
    # An op given operands of the wrong type: the importer's verifier says
    # so for eval too (it used to evaluate Sigmoid of int64 to zeros).
    graph = helper.make_graph(
        [helper.make_node("Sigmoid", ["x"], ["y"], name="sigmoid")], "g",
        [helper.make_tensor_value_info("x", TensorProto.INT64, [3])],
        [helper.make_tensor_value_info("y", TensorProto.INT64, [3])])
    save(helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17)]), w("sigmoid_int.onnx"))
    np.savez(w("sigmoid_int.npz"), x=np.array([0, 1, 2], np.int64))
    c.bad("eval_op_of_wrong_type", [run, "eval", w("sigmoid_int.onnx"),
                                    "--inputs", w("sigmoid_int.npz")],
          "node 'sigmoid': 'tfm.sigmoid' op operand #0 must be")
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])], [])
    save(helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17)]), w("no_outputs.onnx"))
    c.bad("onnx_no_outputs", imp + [w("no_outputs.onnx")],
          "the graph has no outputs")
    # Boolean inputs are given as numpy bools.
    graph = helper.make_graph(
        [helper.make_node("And", ["a", "b"], ["y"], name="and")], "g",
        [helper.make_tensor_value_info(n, TensorProto.BOOL, [2])
         for n in ("a", "b")],
        [helper.make_tensor_value_info("y", TensorProto.BOOL, [2])])
    save(helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17)]), w("and.onnx"))
    np.savez(w("and.npz"), a=np.array([True, True]),
             b=np.array([True, False]))
    c.good("eval_bool_inputs", [run, "eval", w("and.onnx"), "--inputs",
                                w("and.npz"), "--outputs", w("and.out.npz")])
    int_div_model(w("div.onnx"))
    np.savez(w("div.npz"), a=np.array([7, 8], np.int64),
             b=np.array([2, 0], np.int64))
    c.bad("eval_integer_division_by_zero", ev + [w("div.onnx"), "--inputs",
                                                 w("div.npz")],
          "integer division by zero")

    # --- MLIR text ----------------------------------------------------------
    def text(name, body):
        with open(w(name), "w") as f:
            f.write(body)
        return w(name)
    n = 30000
    c.bad("mlir_deep_regions", [opt, "--allow-unregistered-dialect", text(
        "deep_regions.mlir", '"x.a"() ({' * n + "}) : () -> ()" * n)],
        "nest deeper than 1000")
    c.bad("mlir_deep_types", [opt, text(
        "deep_types.mlir", "func.func @f(%a: " + "tuple<" * n + "f32" +
        ">" * n + ") { return }")], "nest deeper than 1000")
    c.bad("mlir_deep_dense", [opt, text(
        "deep_dense.mlir", "func.func @f() { %c = tfm.constant dense<" +
        "[" * 50000 + "1.0" + "]" * 50000 + "> : tensor<2xf32> }")],
        "nest deeper than 1000")
    c.bad("translate_deep", [tr, "--emit-bundle", w("deep_dense.mlir")],
          "nest deeper than 1000")
    c.bad("eval_deep", [run, "eval", w("deep_types.mlir")],
          "nest deeper than 1000")
    c.bad("mlir_unterminated_string", [opt, text(
        "unterminated.mlir", 'func.func @f() { "x\n')], "unterminated.mlir")
    c.bad("mlir_unknown_op", [opt, text(
        "unknown.mlir", 'func.func @f() { %0 = "x.y"() : () -> i32 return }')],
        "unknown.mlir:1:")
    open(w("binary.mlir"), "wb").write(bytes(range(256)) * 4)
    c.bad("mlir_binary_garbage", [opt, w("binary.mlir")], "binary.mlir")
    c.bad("mlir_missing", [opt, w("absent.mlir")], "absent.mlir",
          "cannot open")
    c.bad("mlir_directory", [opt, w("dir.onnx")], "directory")
    gemm0 = text("gemm0.mlir", """
func.func @main(%x: tensor<0x50xf32> {tfm.name = "x"}, %w: tensor<50x8xf32> {tfm.name = "w"}) -> tensor<0x8xf32> {
  %y = tfm.matmul %x, %w : (tensor<0x50xf32>, tensor<50x8xf32>) -> tensor<0x8xf32>
  return %y : tensor<0x8xf32>
}
""")
    c.bad("compile_empty_gemm", [opt, gemm0,
                                 "--pass-pipeline=builtin.module("
                                 "wafer-compile{grid=2x2})"],
          "dimension of size 0")
    huge = text("huge_gemm.mlir", """
func.func @main(%x: tensor<4611686018427387904x2xf32> {tfm.name = "x"}, %w: tensor<2x8xf32> {tfm.name = "w"}) -> tensor<4611686018427387904x8xf32> {
  %y = tfm.matmul %x, %w : (tensor<4611686018427387904x2xf32>, tensor<2x8xf32>) -> tensor<4611686018427387904x8xf32>
  return %y : tensor<4611686018427387904x8xf32>
}
""")
    c.bad("compile_size_overflow", [opt, huge,
                                    "--pass-pipeline=builtin.module("
                                    "wafer-compile{grid=2x2})"],
          "huge_gemm.mlir")
    splat = text("splat.mlir", """
func.func @main() -> tensor<100000x100000xf32> {
  %c = tfm.constant dense<1.0> : tensor<100000x100000xf32>
  return %c : tensor<100000x100000xf32>
}
""")
    c.good("fold_huge_splat", [opt, splat, "-o", os.devnull,
                               "--pass-pipeline=builtin.module(func.func("
                               "tfm-fold-shapes))"])
    c.bad("eval_huge_splat", [run, "eval", splat], "too large for the host")
    divz = text("divzero.mlir", """
func.func @main() -> tensor<2xi64> {
  %a = tfm.constant dense<[7, 8]> : tensor<2xi64>
  %b = tfm.constant dense<[2, 0]> : tensor<2xi64>
  %y = tfm.div %a, %b : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  return %y : tensor<2xi64>
}
""")
    c.bad("eval_constant_division_by_zero", [run, "eval", divz],
          "integer division by zero")
    small = text("small.mlir", """
func.func @main(%x: tensor<4x8xf32> {tfm.name = "x"}, %w: tensor<8x8xf32> {tfm.name = "w"}) -> tensor<4x8xf32> {
  %y = tfm.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
""")
    for name, pipeline, words in [
            ("grid", "wafer-compile{grid=abc}", "grid 'abc'"),
            ("kv", "wafer-compile{grid=2x2 kv=xx}", "'xx'"),
            ("unknown_option", "wafer-compile{bogus=1}", "bogus"),
            ("unknown_pass", "nope", "'nope'"),
            ("ktree_huge", "wafer-compile{grid=2x2 ktree-k=100}",
             "at most 64"),
            ("target", "wafer-compile{grid=2x2 target=/nonexistent.json}",
             "nonexistent.json"),
            ("gemm", "wafer-compile{grid=2x2 gemm=foo}", "'foo'")]:
        c.bad("pipeline_" + name, [opt, small, "--pass-pipeline="
                                   "builtin.module(" + pipeline + ")"], words)
    c.bad("opt_unknown_flag", [opt, "--foo", small], "'--foo'")
    c.bad("opt_bad_output", [opt, small, "-o", w("absent/dir/out.mlir")],
          "out.mlir")
    c.bad("eval_no_main", [run, "eval", text(
        "nomain.mlir", "func.func @other() { return }")], "@main")
    c.bad("eval_input_shape_on_mlir", [run, "eval", small, "--input-shape",
                                       "x=4x8"], "--input-shape")

    # --- wafer-translate ------------------------------------------------------
    c.bad("translate_no_translation", [tr, small], "no translation")
    c.bad("translate_unknown_flag", [tr, "--import-onx", small], "import-onx")
    c.bad("translate_dump_text", [tr, "--dump-bundle", small], "small.mlir",
          "bundle")
    c.bad("translate_emit_tfm", [tr, "--emit-bundle", small],
          "no core.program")

    # --- wafer-run options and bundles ------------------------------------------
    core = w("tiny.core.mlir")
    past = [a for name in ("0.key", "0.value", "1.key", "1.value")
            for a in ("--input-shape", f"past.{name}=1x2x8x16")]
    subprocess.run([tr, "--import-onnx", decode, "-o", w("tiny.tfm.mlir")] +
                   past, check=True)
    subprocess.run([opt, w("tiny.tfm.mlir"), "-o", core,
                    "--pass-pipeline=builtin.module(wafer-compile{grid=4x4})"],
                   check=True)
    bundle = w("tiny.wafb")
    subprocess.run([tr, "--emit-bundle", core, "-o", bundle], check=True)
    base = [run, "run", decode, "--grid", "4x4", "--inputs", inputs_decode]
    with open(w("small-sram.json"), "w") as f:
        json.dump({"base": "wse2", "sram_bytes": 2048}, f)
    for name, extra, words in [
            ("ktree_negative", ["--ktree-k", "-7"], "--ktree-k"),
            ("ktree_max", ["--ktree-k", "9223372036854775807"], "--ktree-k"),
            ("ktree_text", ["--ktree-k", "abc"], "'abc'"),
            ("check_tolerance_negative", ["--check-tolerance", "-1"],
             "--check-tolerance must be at least 0"),
            ("check_tolerance_nan", ["--check-tolerance", "nan"],
             "--check-tolerance must be at least 0"),
            ("check_tolerance_inf", ["--check", "--check-tolerance", "inf"],
             "--check-tolerance must be at least 0 and finite"),
            # Options that cannot apply are errors, not silently ignored.
            ("check_tolerance_without_check", ["--check-tolerance", "0.1"],
             "--check-tolerance applies to --check, which is not given"),
            ("seed_without_init_random", ["--seed", "3"],
             "--seed applies to --init random, which is not given"),
            ("analytic_max_cycles", ["--mode", "analytic", "--max-cycles",
                                     "5"],
             "--max-cycles applies to a mode that runs the program"),
            ("analytic_threads", ["--mode", "analytic", "--threads", "1"],
             "--threads applies to a mode that runs the program"),
            ("stats_empty", ["--stats", ""], "--stats '' names no file"),
            ("threads_zero", ["--threads", "0"], "--threads"),
            ("threads_huge", ["--threads", "1073741824"], "--threads"),
            ("gemm", ["--gemm", "foo"], "'foo'"),
            ("allreduce", ["--allreduce", "bar"], "'bar'"),
            ("dtype", ["--dtype", "bf16"], "'bf16'"),
            ("kv", ["--kv", "append"], "'append'"),
            ("phase", ["--phase", "generate"], "'generate'"),
            ("grid_zero", ["--grid", "0x0"], "0x0"),
            ("grid_text", ["--grid", "big"], "'big'"),
            ("target_missing", ["--target", "/nonexistent.json"],
             "nonexistent.json"),
            ("unknown_flag", ["--frobnicate"], "'--frobnicate'"),
            # Issue 11's: grids, subsets, shapes and modes.
            ("grid_off_fabric", ["--grid", "2000x10"],
             "does not fit target 'wse2'"),
            ("layers_beyond", ["--layers", "5"], "has 2 decoder layers"),
            ("dim_param_unknown", ["--dim-param", "sek=16"],
             "names no dimension"),
            ("mode", ["--mode", "analytc"], "'analytc'"),
            ("fits_no_grid", ["--target", w("small-sram.json")],
             "the smallest square grid it fits is")]:
        c.bad("run_option_" + name, base + extra, words)
    # --check fails on a NaN where the reference has a number (std::max
    # dropped NaNs, and the check passed with 0 error).
    overflow_model(w("overflow.onnx"), w("overflow.npz"))
    c.bad("run_check_nan_output",
          [run, "run", w("overflow.onnx"), "--grid", "2x2", "--inputs",
           w("overflow.npz"), "--check"],
          "output 'y' holds nan at element 0", "host evaluator's holds 0")
    # Nor does a NaN on both sides pass (a NaN input here).
    np.savez(w("nan.npz"), x=np.array([[np.nan] + [1] * 7], np.float32))
    c.bad("run_check_nan_on_both_sides",
          [run, "run", w("overflow.onnx"), "--grid", "2x2", "--inputs",
           w("nan.npz"), "--check"],
          "output 'y' holds nan at element 0", "host evaluator's holds nan",
          "(a NaN checks nothing)")
    # Special files: /dev/zero never ends, a directory has no bytes. Every
    # reader refuses them by name (a pipe is read to its end, as cat would).
    os.makedirs(w("a_dir"), exist_ok=True)
    tiny_run = [run, "run", decode, "--grid", "4x4", "--dim-param", "past=8",
                "--mode", "analytic"]
    for special, words in [("/dev/zero", "is not a regular file"),
                           (w("a_dir"), "is a directory")]:
        tag = "devzero" if special == "/dev/zero" else "directory"
        for name, argv in [
                ("eval_model", [run, "eval", special]),
                ("eval_inputs", [run, "eval", decode, "--inputs", special]),
                ("run_target", tiny_run + ["--target", special]),
                ("run_inputs", [run, "run", decode, "--grid", "4x4",
                                "--inputs", special]),
                ("bundle", [run, "run", special, "--inputs", inputs_decode]),
                ("tokenizer", [tr, "--tokenize", "--tokenizer", special,
                               "--prompt", "hi"])]:
            # A directory may hold a checkpoint or a tokenizer: those
            # readers say what they looked for.
            said = {("directory", "eval_model"): "is a checkpoint or a "
                                                 "directory",
                    ("directory", "tokenizer"): "has no tokenizer"}
            c.bad(f"special_{tag}_{name}", argv, special,
                  said.get((tag, name), words))
    # Pipeline options that are not counts.
    for name, pipeline, words in [
            ("layers_negative", "wafer-compile{grid=4x4 layers=-1}",
             "--layers -1: the model has 2 decoder layers"),
            ("handoff_capacity_negative",
             "wafer-compile{grid=4x4 handoff-capacity=-1}",
             "capacity must be at least 0, got -1"),
            ("max_elements_negative",
             "func.func(tfm-fold-shapes{max-elements=-1})",
             "max-elements must be at least 0, got -1")]:
        c.bad("opt_" + name, [opt, w("tiny.tfm.mlir"), "-o", os.devnull,
                              f"--pass-pipeline=builtin.module({pipeline})"],
              words)
    # Two outputs in one file, or an output over an input.
    c.bad("run_stats_and_trace_one_file",
          [run, "run", decode, "--grid", "4x4", "--dim-param", "past=8",
           "--mode", "timing", "--stats", w("same.json"),
                      "--trace", w("./sub/../same.json")],
          "--stats and --trace name the same file")
    # A link to an output not written yet names the same file too.
    if not os.path.lexists(w("link.npz")):
        os.symlink("linked.npz", w("link.npz"))
    c.bad("run_stats_and_outputs_one_file_by_link",
          [run, "run", decode, "--grid", "4x4", "--inputs", inputs_decode,
           "--outputs", w("linked.npz"), "--stats", w("link.npz")],
          "--stats and --outputs name the same file")
    c.bad("run_stats_over_inputs",
          [run, "run", decode, "--grid", "4x4", "--inputs", inputs_decode,
           "--stats", inputs_decode], "--stats would overwrite --inputs")
    # An output over an input of wafer-translate (opened, so emptied,
    # before the input is read through), eval, or a target file.
    for name, source in [("core", core), ("bundle", bundle),
                         ("onnx", decode), ("npz", inputs_decode),
                         ("target", w("small-sram.json"))]:
        shutil.copy(source, w("own." + name))
    for name, argv in [
            ("emit_bundle", [tr, "--emit-bundle", w("own.core")]),
            ("dump_bundle", [tr, "--dump-bundle", w("own.bundle")]),
            ("import_onnx", imp + [w("own.onnx")])]:
        c.bad(f"translate_{name}_over_input", argv + ["-o", argv[-1]],
              "-o would overwrite the input")
    c.bad("translate_import_safetensors_over_checkpoint",
          [tr, "--import-safetensors", w("own.onnx"), "-o", w("own.onnx")],
          "-o would overwrite the checkpoint")
    c.bad("eval_outputs_over_inputs",
          [run, "eval", w("own.onnx"), "--inputs", w("own.npz"), "--outputs",
           w("own.npz")], "--outputs would overwrite --inputs")
    c.bad("eval_outputs_over_model",
          [run, "eval", w("own.onnx"), "--inputs", w("own.npz"), "--outputs",
           w("own.onnx")], "--outputs would overwrite the model")
    c.bad("run_stats_over_target",
          base + ["--target", w("own.target"), "--stats", w("own.target")],
          "--stats would overwrite --target")
    # A full disk: one line naming the file, not LLVM's fatal error.
    analytic = [run, "run", decode, "--grid", "4x4", "--dim-param", "past=8"]
    for name, argv in [
            ("run_stats", analytic + ["--mode", "analytic", "--stats"]),
            ("run_trace", analytic + ["--mode", "timing", "--trace"]),
            ("translate_output", imp + [decode, "--dim-param", "past=8",
                                        "-o"]),
            ("opt_output", [opt, w("tiny.tfm.mlir"), "-o"])]:
        c.bad("full_disk_" + name, argv + ["/dev/full"],
              "/dev/full: cannot write: No space left on device")
    # A past that fits no core: refused before anything is sized by it.
    c.bad("run_dim_param_past_over_2_63",
          [run, "run", decode, "--grid", "4x4", "--mode", "analytic",
           "--dim-param", "past=4611686018427387904"],
          "input 'past.0.key' of shape [1, 2, 4611686018427387904, 16] holds "
          "more than 2^63 elements")
    for past in ("100000000", "99999999999999"):
        c.bad("run_dim_param_past_" + past,
              [run, "run", decode, "--grid", "4x4", "--mode", "analytic",
               "--dim-param", "past=" + past], "a KV cache of",
              "token slots per row of cores needs",
              "bytes per core, more than target 'wse2' has (49152)")
    c.bad("run_no_model", [run, "run"], "expected a model")
    c.bad("run_no_command", [run], "expected a command")
    c.bad("run_bundle_with_compile_options",
          [run, "run", bundle, "--grid", "0x0", "--target",
           "/nonexistent.json", "--dtype", "bf16", "--gemm", "foo",
           "--ktree-k", "-7", "--inputs", inputs_decode],
          "does not apply to a bundle")
    c.bad("run_bundle_with_grid", [run, "run", bundle, "--grid", "4x4",
                                   "--inputs", inputs_decode], "--grid")
    c.bad("bench_analytic_threads",
          [run, "bench", decode, "--dim-param", "past=8", "--grid", "4x4",
           "--mode", "analytic", "--threads", "2"],
          "--threads applies to a mode that runs the program (timing)")
    c.bad("bench_stats", [run, "bench", decode, "--dim-param", "past=8",
                          "--grid", "4x4", "--stats"],
          "unknown command line argument '--stats'")
    c.bad("run_bundle_with_prefill_heads",
          [run, "run", bundle, "--prefill-heads", "whole", "--inputs",
           inputs_decode], "--prefill-heads does not apply to a bundle")
    c.bad("run_core_program_with_prefill_heads",
          [run, "run", core, "--prefill-heads", "lanes", "--inputs",
           inputs_decode],
          "--prefill-heads does not apply to a compiled core.program")
    open(w("trailing.wafb"), "wb").write(open(bundle, "rb").read() + b"junk")
    c.bad("bundle_trailing_garbage", [run, "run", w("trailing.wafb"),
                                      "--inputs", inputs_decode],
          "trailing.wafb")
    data = open(bundle, "rb").read()
    open(w("cut.wafb"), "wb").write(data[:len(data) // 2])
    c.bad("bundle_truncated", [run, "run", w("cut.wafb"), "--inputs",
                               inputs_decode], "cut.wafb")
    flipped = bytearray(data)
    flipped[len(data) // 2] ^= 1
    open(w("flipped.wafb"), "wb").write(bytes(flipped))
    c.bad("bundle_byte_flipped", [run, "run", w("flipped.wafb"), "--inputs",
                                  inputs_decode], "flipped.wafb", "checksum")
    c.bad("run_model_directory", [run, "run", w("dir.onnx"), "--grid", "2x2"],
          "directory")

    # --- fabric defects ----------------------------------------------------------
    for name, defects, words in [
            ("off_fabric", {"dead_cores": [[0, 750]]}, "[0, 750] is off"),
            ("twice", {"dead_cores": [[2, 2], [2, 2]]}, "listed twice"),
            ("not_pairs", {"dead_cores": [[1, 2, 3]]}, "[y, x] pairs"),
            ("link_direction", {"dead_links": [[1, 1, "up"]]}, "dead_links"),
            ("link_off_fabric", {"dead_links": [[993, 0, "south"]]},
             "off the 994x750"),
            ("too_many", {"fabric": "6x6", "dead_cores": [[1, 1], [2, 2]]},
             "needs 7x6 fabric cores")]:
        with open(w(f"defects-{name}.json"), "w") as f:
            json.dump({"base": "wse2", **defects}, f)
        c.bad("target_defects_" + name,
              base + ["--grid", "5x4", "--target", w(f"defects-{name}.json")],
              words)

    # --- JSON nested past the parser's stack ------------------------------------
    deep = "[" * 100000
    open(w("deep-target.json"), "w").write(deep)
    c.bad("target_json_deep", base + ["--target", w("deep-target.json")],
          "deep-target.json", "nested deeper")
    open(w("deep-tokenizer.json"), "w").write('{"model": ' + deep)
    c.bad("tokenizer_json_deep",
          [tr, "--tokenize", "--tokenizer", w("deep-tokenizer.json"),
           "--prompt", "hi"], "deep-tokenizer.json", "nested deeper")
    header = b'{"a": ' + b"{" * 100000
    open(w("deep.safetensors"), "wb").write(
        len(header).to_bytes(8, "little") + header)
    c.bad("safetensors_header_deep",
          [tr, "--inspect-checkpoint", w("deep.safetensors")],
          "deep.safetensors", "nested deeper")
    ids = np.zeros((1, 6000), np.int64)  # a 6000x6000 mask: over the fold limit
    np.savez(w("long_prompt.npz"), input_ids=ids)
    c.bad("run_prompt_too_long_for_masks",
          [run, "run", prefill, "--grid", "4x4", "--inputs",
           w("long_prompt.npz")], "too long")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--src", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("-k", dest="only")
    parser.add_argument("-v", dest="show", action="store_true",
                        help="print each case's error line")
    args = parser.parse_args()
    global SHOW
    SHOW = args.show
    os.makedirs(args.work, exist_ok=True)
    corpus = Corpus(args.bin, args.src, args.work)
    build(corpus)
    sys.exit(0 if corpus.run(args.only) else 1)


if __name__ == "__main__":
    main()
