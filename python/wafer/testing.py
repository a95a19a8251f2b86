"""Helpers for wafer's end-to-end tests: small ONNX graphs, inputs, comparison.

Run with a Python that has numpy and onnx (Debian's /usr/bin/python3).

Every builder takes its sizes and a seed and returns a ``Case``: the ONNX
model (float32, static shapes, opset 17) and a dict of its graph inputs
(numpy float32 arrays, keyed by input name).  Weights are ONNX initializers;
inputs are whatever the graph leaves as runtime inputs.

    case = matmul(37, 50, 29, seed=0)
    model_path, inputs_path = case.write(tmpdir)
    ...
    rel = compare("out.npz", "ref.npz")
"""

import os
from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17


@dataclass
class Case:
    """An ONNX model and the inputs to run it on."""

    name: str
    model: onnx.ModelProto
    inputs: dict = field(default_factory=dict)

    def write(self, directory, stem=None):
        """Writes ``<stem>.onnx`` and ``<stem>.in.npz``; returns both paths."""
        stem = stem or self.name
        model_path = os.path.join(directory, stem + ".onnx")
        inputs_path = os.path.join(directory, stem + ".in.npz")
        save_model(self.model, model_path)
        write_inputs(inputs_path, self.inputs)
        return model_path, inputs_path


def _rng(seed):
    return np.random.default_rng(seed)


def _values(rng, shape):
    """Uniform float32 values in [-1, 1)."""
    return rng.uniform(-1.0, 1.0, size=shape).astype(np.float32)


def _tensor(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape))


def make_model(nodes, inputs, outputs, initializers=(), name="wafer_test"):
    """A checked ONNX model from nodes and (name, shape) inputs/outputs.

    ``initializers`` is a dict or sequence of (name, numpy array)."""
    if isinstance(initializers, dict):
        initializers = list(initializers.items())
    graph = helper.make_graph(
        list(nodes), name,
        [_tensor(n, s) for n, s in inputs],
        [_tensor(n, s) for n, s in outputs],
        initializer=[numpy_helper.from_array(np.asarray(a, np.float32), n)
                     for n, a in initializers])
    model = helper.make_model(
        graph, producer_name="wafer.testing",
        opset_imports=[helper.make_operatorsetid("", OPSET)])
    # ONNX Runtime 1.30 accepts IR versions up to 11 at least; keep it at 8 so
    # that any recent runtime reads the models.
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def save_model(model, path):
    onnx.save_model(model, path)


def write_inputs(path, inputs):
    """Writes the inputs as an uncompressed .npz (np.savez), float32."""
    np.savez(path, **{k: np.ascontiguousarray(v, np.float32)
                      for k, v in inputs.items()})


# ---------------------------------------------------------------- graphs ---

def matmul(m, k, n, seed=0, name=None):
    """Y[m,n] = X[m,k] @ W[k,n], W an initializer."""
    rng = _rng(seed)
    x, w = _values(rng, (m, k)), _values(rng, (k, n))
    model = make_model(
        [helper.make_node("MatMul", ["X", "W"], ["Y"], name="matmul")],
        [("X", (m, k))], [("Y", (m, n))], {"W": w})
    return Case(name or f"matmul_{m}x{k}x{n}", model, {"X": x})


def matmul_inputs(m, k, n, seed=0, name=None):
    """Y[m,n] = A[m,k] @ B[k,n], both graph inputs."""
    rng = _rng(seed)
    a, b = _values(rng, (m, k)), _values(rng, (k, n))
    model = make_model(
        [helper.make_node("MatMul", ["A", "B"], ["Y"], name="matmul")],
        [("A", (m, k)), ("B", (k, n))], [("Y", (m, n))])
    return Case(name or f"matmul_inputs_{m}x{k}x{n}", model, {"A": a, "B": b})


def gemv(k, n, seed=0, name=None):
    """Y[1,n] = X[1,k] @ W[k,n], W an initializer."""
    case = matmul(1, k, n, seed=seed)
    case.name = name or f"gemv_{k}x{n}"
    return case


def gemv_chain(k, n1, n2, n3, seed=0, name=None):
    """Y[1,n3] = ((X[1,k] @ W1) @ W2) * S @ W3: a decode step's chain of
    projections (S a scale vector), W1..W3 and S initializers."""
    rng = _rng(seed)
    x = _values(rng, (1, k))
    weights = {"W1": _values(rng, (k, n1)), "W2": _values(rng, (n1, n2)),
               "S": _values(rng, (1, n2)), "W3": _values(rng, (n2, n3))}
    model = make_model(
        [helper.make_node("MatMul", ["X", "W1"], ["H1"], name="proj1"),
         helper.make_node("MatMul", ["H1", "W2"], ["H2"], name="proj2"),
         helper.make_node("Mul", ["H2", "S"], ["H3"], name="scale"),
         helper.make_node("MatMul", ["H3", "W3"], ["Y"], name="proj3")],
        [("X", (1, k))], [("Y", (1, n3))], weights)
    return Case(name or f"gemv_chain_{k}x{n1}x{n2}x{n3}", model, {"X": x})


def matmul_fork(m, k, n, p, seed=0, name=None):
    """Y[m,p] = H @ W2 + H @ W3 with H = X[m,k] @ W1: a MatMul whose result
    two MatMuls read (an MLP's gate and up projections), W1..W3
    initializers."""
    rng = _rng(seed)
    x = _values(rng, (m, k))
    weights = {"W1": _values(rng, (k, n)), "W2": _values(rng, (n, p)),
               "W3": _values(rng, (n, p))}
    model = make_model(
        [helper.make_node("MatMul", ["X", "W1"], ["H"], name="first"),
         helper.make_node("MatMul", ["H", "W2"], ["G"], name="gate"),
         helper.make_node("MatMul", ["H", "W3"], ["U"], name="up"),
         helper.make_node("Add", ["G", "U"], ["Y"], name="sum")],
        [("X", (m, k))], [("Y", (m, p))], weights)
    return Case(name or f"matmul_fork_{m}x{k}x{n}x{p}", model, {"X": x})


def matmul_norm(m, k, n, p, seed=0, name=None):
    """Y[m,p] = RMSNorm(X[m,k] @ W1) @ W2: a projection, the RMSNorm of its
    rows (weight G, epsilon 1e-5, as LLaMA writes it) and the next
    projection, W1, G and W2 initializers."""
    rng = _rng(seed)
    x = _values(rng, (m, k))
    weights = {"W1": _values(rng, (k, n)), "G": _values(rng, (n,)),
               "W2": _values(rng, (n, p)), "two": np.array(2.0),
               "eps": np.array(1e-5), "one": np.array(1.0)}
    model = make_model(
        [helper.make_node("MatMul", ["X", "W1"], ["H"], name="first"),
         helper.make_node("Pow", ["H", "two"], ["H2"], name="square"),
         helper.make_node("ReduceMean", ["H2"], ["V"], axes=[-1],
                          keepdims=1, name="mean"),
         helper.make_node("Add", ["V", "eps"], ["Ve"], name="epsilon"),
         helper.make_node("Sqrt", ["Ve"], ["R"], name="root"),
         helper.make_node("Div", ["one", "R"], ["I"], name="inverse"),
         helper.make_node("Mul", ["H", "I"], ["Hn"], name="normalise"),
         helper.make_node("Mul", ["Hn", "G"], ["N"], name="norm"),
         helper.make_node("MatMul", ["N", "W2"], ["Y"], name="second")],
        [("X", (m, k))], [("Y", (m, p))], weights)
    return Case(name or f"matmul_norm_{m}x{k}x{n}x{p}", model, {"X": x})


def gemm(m, k, n, alpha=0.5, beta=2.0, trans_b=True, bias="row", seed=0,
         name=None):
    """ONNX Gemm: Y = alpha * X @ op(W) + beta * C, W and C initializers.

    ``op(W)`` is W^T with W[n,k] when ``trans_b`` else W[k,n]; ``bias`` is
    "row" (C[n], broadcast over rows), "full" (C[m,n]) or None."""
    rng = _rng(seed)
    x = _values(rng, (m, k))
    w = _values(rng, (n, k) if trans_b else (k, n))
    inits = {"W": w}
    node_inputs = ["X", "W"]
    if bias is not None:
        inits["C"] = _values(rng, (n,) if bias == "row" else (m, n))
        node_inputs.append("C")
    node = helper.make_node("Gemm", node_inputs, ["Y"], name="gemm",
                            alpha=float(alpha), beta=float(beta),
                            transB=int(trans_b))
    model = make_model([node], [("X", (m, k))], [("Y", (m, n))], inits)
    return Case(name or f"gemm_{m}x{k}x{n}_tb{int(trans_b)}_{bias}",
                model, {"X": x})


def add_mul(m, k, n, seed=0, name=None):
    """Y = (X @ W + b) * s, b[n] and s[1,n] broadcast bias/scale initializers."""
    rng = _rng(seed)
    x, w = _values(rng, (m, k)), _values(rng, (k, n))
    b, s = _values(rng, (n,)), _values(rng, (1, n))
    model = make_model(
        [helper.make_node("MatMul", ["X", "W"], ["P"], name="matmul"),
         helper.make_node("Add", ["P", "b"], ["Q"], name="add_bias"),
         helper.make_node("Mul", ["Q", "s"], ["Y"], name="mul_scale")],
        [("X", (m, k))], [("Y", (m, n))], {"W": w, "b": b, "s": s})
    return Case(name or f"add_mul_{m}x{k}x{n}", model, {"X": x})


def elementwise(m, n, seed=0, name=None):
    """Y = (A + B) * c, with A, B[m,n] inputs and c[n] a broadcast initializer."""
    rng = _rng(seed)
    a, b, c = _values(rng, (m, n)), _values(rng, (m, n)), _values(rng, (n,))
    model = make_model(
        [helper.make_node("Add", ["A", "B"], ["S"], name="add"),
         helper.make_node("Mul", ["S", "c"], ["Y"], name="mul")],
        [("A", (m, n)), ("B", (m, n))], [("Y", (m, n))], {"c": c})
    return Case(name or f"elementwise_{m}x{n}", model, {"A": a, "B": b})


def relu(m, n, seed=0, name=None):
    """Y = Relu(X): a graph wafer does not support (error tests)."""
    rng = _rng(seed)
    model = make_model(
        [helper.make_node("Relu", ["X"], ["Y"], name="act")],
        [("X", (m, n))], [("Y", (m, n))])
    return Case(name or f"relu_{m}x{n}", model, {"X": _values(rng, (m, n))})


# ------------------------------------------------------------ comparison ---

def load_npz(path):
    with np.load(path) as data:
        return {k: data[k] for k in data.files}


def _matched_outputs(out_npz, ref_npz):
    """(name, output, reference) as float64 for every output; ValueError when
    the two files do not hold the same names and shapes."""
    out, ref = load_npz(out_npz), load_npz(ref_npz)
    if sorted(out) != sorted(ref):
        raise ValueError(f"outputs {sorted(out)} differ from reference "
                         f"outputs {sorted(ref)}")
    for key in ref:
        o = out[key].astype(np.float64)
        r = ref[key].astype(np.float64)
        if o.shape != r.shape:
            raise ValueError(f"output '{key}' has shape {o.shape}, reference "
                             f"has {r.shape}")
        yield key, o, r


def compare(out_npz, ref_npz):
    """The largest, over outputs, max abs error of an output of ``out_npz``
    against ``ref_npz`` relative to that output's largest reference
    magnitude (so small logits are not judged on the scale of large KV
    caches).

    Raises ValueError when the two files do not hold the same names and
    shapes.  Returns inf when an output has NaN or Inf the reference lacks."""
    worst = 0.0
    for _, o, r in _matched_outputs(out_npz, ref_npz):
        if o.size == 0:
            continue
        if not np.all(np.isfinite(o) == np.isfinite(r)):
            return float("inf")
        finite = np.isfinite(r)
        if not np.any(finite):
            continue
        err = float(np.max(np.abs(o - r)[finite]))
        scale = float(np.max(np.abs(r[finite])))
        if scale == 0.0:
            if err != 0.0:
                return float("inf")
            continue
        worst = max(worst, err / scale)
    return worst


def cosine(out_npz, ref_npz):
    """The smallest cosine similarity between an output and its reference
    (over all outputs, each flattened); the f16 acceptance measure."""
    worst = 1.0
    for _, o, r in _matched_outputs(out_npz, ref_npz):
        o, r = o.ravel(), r.ravel()
        no, nr = np.linalg.norm(o), np.linalg.norm(r)
        if not np.isfinite(no * nr):
            return float("-inf")
        if no == 0 or nr == 0:  # equal only if both are zero
            worst = min(worst, 1.0 if no == nr else 0.0)
            continue
        worst = min(worst, float(o @ r / (no * nr)))
    return worst


# --------------------------------------------------- command-line helpers ---

def _main(argv):
    """`python3 testing.py KIND DIR STEM ARGS...` writes STEM.onnx and
    STEM.in.npz (used by lit tests).  KIND is a builder name; ARGS are its
    integer size arguments."""
    import sys
    if len(argv) < 3:
        sys.exit("usage: testing.py KIND DIR STEM [SIZES...]")
    kind, directory, stem, sizes = argv[0], argv[1], argv[2], argv[3:]
    builder = globals().get(kind)
    if kind.startswith("_") or not callable(builder) or kind in (
            "compare", "cosine", "load_npz", "make_model", "save_model",
            "write_inputs"):
        sys.exit(f"unknown kind '{kind}'")
    os.makedirs(directory, exist_ok=True)
    builder(*[int(s) for s in sizes]).write(directory, stem)


if __name__ == "__main__":
    import sys
    _main(sys.argv[1:])
