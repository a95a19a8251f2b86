"""Plots of a wafer-run stats file: per-core heatmaps and the per-op cycles.

    /usr/bin/python3 -m wafer.plot STATS.json --out DIR

(with python/ on PYTHONPATH, or after `pip install -e python/`). STATS.json
is written by `wafer-run run ... --stats STATS.json`; the heatmaps need
`--stats-detail`. Writes into DIR:

- ops.png: each mesh op's cycles, split into the slowest core's compute
  cycles and the rest (communication and waiting);
- compute_cycles.png, busy_cycles.png: the per-core maps over the grid
  (x to the right, y down, as the fabric is drawn);
- link_words.png, link_words_in.png: words out of (into) each core's
  router per direction (north, east, south, west), one figure each.

Prints the path of every file written, one per line.
"""
import argparse
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def heatmap(ax, values, title):
    image = ax.imshow(np.asarray(values), cmap="viridis", aspect="auto",
                      interpolation="nearest")
    ax.set_title(title)
    ax.set_xlabel("x (column)")
    ax.set_ylabel("y (row)")
    plt.colorbar(image, ax=ax)


def plot_ops(stats, path):
    ops = stats["ops"]
    names = [f"{op['name']} ({op['kind']})" for op in ops]
    compute = np.array([min(op["compute_cycles"], op["cycles"]) for op in ops])
    total = np.array([op["cycles"] for op in ops])
    fig, ax = plt.subplots(figsize=(8, max(2.5, 0.28 * len(ops) + 1)))
    y = np.arange(len(ops))
    ax.barh(y, compute, label="compute (slowest core)")
    ax.barh(y, total - compute, left=compute,
            label="communication and waiting")
    ax.set_yticks(y, names, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("cycles")
    ax.set_title(f"{stats['cycles']} cycles in all")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_all(stats, out):
    """Writes every figure the stats allow into `out`; returns their paths."""
    written = [os.path.join(out, "ops.png")]
    plot_ops(stats, written[0])
    maps = stats.get("per_core")
    if maps:
        for key in ("compute_cycles", "busy_cycles"):
            fig, ax = plt.subplots(figsize=(6, 5))
            heatmap(ax, maps[key], key.replace("_", " ") + " per core")
            fig.tight_layout()
            path = os.path.join(out, f"{key}.png")
            fig.savefig(path, dpi=120)
            plt.close(fig)
            written.append(path)
        for way in ("out", "in"):
            fig, axes = plt.subplots(2, 2, figsize=(10, 8))
            for ax, direction in zip(axes.ravel(),
                                     ("north", "east", "south", "west")):
                heatmap(ax, maps[f"link_words_{way}"][direction],
                        f"words {way} {direction}")
            fig.tight_layout()
            name = "link_words.png" if way == "out" else "link_words_in.png"
            path = os.path.join(out, name)
            fig.savefig(path, dpi=120)
            plt.close(fig)
            written.append(path)
    return written


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("stats")
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    try:
        with open(args.stats) as f:
            stats = json.load(f)
    except (OSError, ValueError) as e:
        print(f"error: {args.stats}: {e}", file=sys.stderr)
        return 1
    if not isinstance(stats, dict) or "ops" not in stats:
        print(f"error: {args.stats}: not a wafer-run stats file (no 'ops')",
              file=sys.stderr)
        return 1
    try:
        os.makedirs(args.out, exist_ok=True)
        written = plot_all(stats, args.out)
    except OSError as e:
        print(f"error: {e.filename or args.out}: {e.strerror}",
              file=sys.stderr)
        return 1
    except (KeyError, TypeError, ValueError, IndexError) as e:
        # A hand-made or truncated file: a field missing or of another type.
        print(f"error: {args.stats}: not a wafer-run stats file "
              f"({type(e).__name__}: {e})", file=sys.stderr)
        return 1
    print("\n".join(written))
    return 0


if __name__ == "__main__":
    sys.exit(main())
