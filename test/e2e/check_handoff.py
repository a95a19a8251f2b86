"""Checks a prefill run with the on-chip KV hand-off (mesh-relayout-phases):
every handoff.past.* output, read back from the decode cache's slots, must
equal the present.* the prefill computed, exactly (the hand-off only moves
values).

    check_handoff.py OUTPUTS.npz
"""
import sys

import numpy as np


def main():
    outputs = np.load(sys.argv[1])
    handed = sorted(k for k in outputs.files if k.startswith("handoff.past."))
    if not handed:
        sys.exit(f"{sys.argv[1]}: no handoff.past.* outputs")
    for name in handed:
        present = outputs["present." + name[len("handoff.past."):]]
        cache = outputs[name]
        if present.shape != cache.shape or not np.array_equal(present, cache):
            sys.exit(f"{name} differs from the present (largest difference "
                     f"{np.abs(present - cache).max()})")
    print(f"{len(handed)} caches handed off exactly")


if __name__ == "__main__":
    main()
