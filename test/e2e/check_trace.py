#!/usr/bin/python3
"""Checks a Chrome trace written by `wafer-run run --trace` against the
run's stats.

    check_trace.py TRACE.json STATS.json

The file must be Chrome trace-event JSON (a traceEvents list of complete
"X" events with name, cat, pid, tid, ts, dur and thread-name "M" events).
The "ops" track must hold one span per op of the stats with the same cycles,
back to back. Every core track's spans must tile its time from cycle 0
without gaps or overlaps, and end no later than the stats' cycles; the
latest core must end exactly there or before the last message arrives.
Prints a summary; exit code 1 on any mismatch.
"""
import collections
import json
import sys


def main():
    with open(sys.argv[1]) as f:
        trace = json.load(f)
    with open(sys.argv[2]) as f:
        stats = json.load(f)
    events = trace["traceEvents"]
    names = {e["tid"]: e["args"]["name"] for e in events if e["ph"] == "M"}
    spans = collections.defaultdict(list)
    for e in events:
        if e["ph"] != "X":
            continue
        for key in ("name", "cat", "pid", "tid", "ts", "dur", "args"):
            assert key in e, f"event without {key}: {e}"
        spans[e["tid"]].append(e)
    assert names.get(0) == "ops", "track 0 must be the ops"
    ops = spans.pop(0)
    want = [(op["name"], op["cycles"]) for op in stats["ops"]]
    got = [(e["name"], e["args"]["cycles"]) for e in ops]
    assert got == want, f"ops track {got} != stats {want}"
    start = 0
    for e in ops:
        assert e["args"]["start_cycle"] == start, "ops are not back to back"
        start += e["args"]["cycles"]
    latest = 0
    for tid, track in spans.items():
        track.sort(key=lambda e: e["args"]["start_cycle"])
        t = 0
        for e in track:
            assert e["args"]["start_cycle"] == t, \
                f"{names[tid]}: gap or overlap at cycle {t}"
            assert e["cat"] in ("compute", "send", "receive", "wait")
            t += e["args"]["cycles"]
        latest = max(latest, t)
    assert latest <= stats["cycles"], \
        f"a core ends at {latest}, after the run's {stats['cycles']} cycles"
    phases = collections.Counter()
    for track in spans.values():
        for e in track:
            phases[e["cat"]] += e["args"]["cycles"]
    print(f"trace ok: {len(ops)} ops adding up to {start} cycles, "
          f"{len(spans)} core tracks tiling up to {latest} of "
          f"{stats['cycles']} cycles; "
          + ", ".join(f"{k} {v}" for k, v in sorted(phases.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
