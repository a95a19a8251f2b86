"""Reference outputs of the exporter's torch model, for checkpoint imports.

    checkpoint_reference.py run CONFIG SEED DIR
        writes DIR/inputs_{prefill,decode}.npz (8 tokens; one token after a
        past of 8) and the torch module's outputs DIR/torch_{prefill,decode}.npz
    checkpoint_reference.py compare OUT.npz REF.npz MAX_REL
        prints the worst relative error (wafer.testing.compare) and fails
        above MAX_REL
"""
import sys

import numpy as np
import torch

from wafer import export_llama as ex
from wafer import testing

if sys.argv[1] == "run":
    config, seed, out = ex.load_config(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    model = ex.build_model(config, "random", seed)
    for graph in ("prefill", "decode"):
        inputs = ex.make_inputs(config, graph, seed, 8, 8)
        np.savez(f"{out}/inputs_{graph}.npz", **inputs)
        with torch.no_grad():
            outputs = model(*[torch.from_numpy(inputs[n])
                              for n in ex.input_names(config, graph)])
        np.savez(f"{out}/torch_{graph}.npz",
                 **{n: t.numpy() for n, t in zip(ex.output_names(config), outputs)})
else:
    rel = testing.compare(sys.argv[2], sys.argv[3])
    print(f"max relative error {rel:.3g} (limit {sys.argv[4]})")
    sys.exit(0 if rel <= float(sys.argv[4]) else 1)
