#!/usr/bin/python3
"""Whether runs of one program gave the same stats and outputs.

    same_run.py STATS.json OUTPUTS.npz STATS.json OUTPUTS.npz ...

Stats must be equal in every field but "run", which says how they were made
(threads among it); outputs (NPZ) equal bit for bit. Prints `same stats
and outputs in N runs (C cycles)` and exits 0, or names the first field or
output that differs and exits 1.
"""
import json
import sys

import numpy as np


def load(stats_path, outputs_path):
    with open(stats_path) as f:
        stats = json.load(f)
    stats.pop("run")
    with np.load(outputs_path) as npz:
        outputs = {name: npz[name] for name in npz.files}
    return stats, outputs


def main():
    paths = sys.argv[1:]
    if len(paths) < 4 or len(paths) % 2:
        print(__doc__.strip().split("\n\n")[1])
        return 2
    runs = [load(paths[i], paths[i + 1]) for i in range(0, len(paths), 2)]
    stats, outputs = runs[0]
    for k, (other_stats, other_outputs) in enumerate(runs[1:], start=2):
        fields = [f for f in stats if stats[f] != other_stats.get(f)]
        if fields:
            print(f"run {k}: stats differ in {', '.join(fields)}")
            return 1
        names = [n for n in outputs
                 if n not in other_outputs or
                 outputs[n].tobytes() != other_outputs[n].tobytes()]
        if names or set(outputs) != set(other_outputs):
            print(f"run {k}: outputs differ: {', '.join(names) or 'names'}")
            return 1
    print(f"same stats and outputs in {len(runs)} runs "
          f"({stats['cycles']} cycles)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
