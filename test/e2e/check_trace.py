#!/usr/bin/python3
"""Checks a Chrome trace written by `wafer-run run|generate --trace` against
the statistics.

    check_trace.py TRACE.json STATS.json
    check_trace.py --generate TRACE.json GENERATE_STATS.json

The file must be Chrome trace-event JSON (a traceEvents list of complete
"X" events with name, cat, pid, tid, ts, dur and thread-name "M" events).
Each run is one process (pid): its "ops" track must hold one span per op of
the run's stats with the same cycles, back to back. Every core track's
spans must tile its time from cycle 0 without gaps or overlaps, and end no
later than the run's cycles. A generation's trace holds the prefill (when
there is one) and then every decode step, each starting where the one
before ended on the generation's timeline; its stats give the prefill's
ops and each decode step's cycles. Prints a summary; exit code 1 on any
mismatch.
"""
import collections
import json
import sys


def check_run(events, names, want_ops, cycles):
    """Checks one run's events; returns (ops, core tracks, latest, phases)."""
    spans = collections.defaultdict(list)
    for e in events:
        for key in ("name", "cat", "pid", "tid", "ts", "dur", "args"):
            assert key in e, f"event without {key}: {e}"
        spans[e["tid"]].append(e)
    assert names.get(0) == "ops", "track 0 must be the ops"
    ops = spans.pop(0)
    got = [(e["name"], e["args"]["cycles"]) for e in ops]
    if want_ops is not None:
        assert got == want_ops, f"ops track {got} != stats {want_ops}"
    start = 0
    for e in ops:
        assert e["args"]["start_cycle"] == start, "ops are not back to back"
        start += e["args"]["cycles"]
    assert start == cycles, \
        f"ops add up to {start}, the run took {cycles} cycles"
    latest = 0
    phases = collections.Counter()
    for tid, track in spans.items():
        track.sort(key=lambda e: e["args"]["start_cycle"])
        t = 0
        for e in track:
            assert e["args"]["start_cycle"] == t, \
                f"{names[tid]}: gap or overlap at cycle {t}"
            assert e["cat"] in ("compute", "send", "receive", "wait")
            t += e["args"]["cycles"]
            phases[e["cat"]] += e["args"]["cycles"]
        latest = max(latest, t)
    assert latest <= cycles, \
        f"a core ends at {latest}, after the run's {cycles} cycles"
    return len(ops), start, len(spans), latest, phases


def by_process(trace):
    """pid -> (process name, thread names, X events)."""
    runs = collections.defaultdict(lambda: ["", {}, []])
    for e in trace["traceEvents"]:
        run = runs[e["pid"]]
        if e["ph"] == "M" and e["name"] == "process_name":
            run[0] = e["args"]["name"]
        elif e["ph"] == "M":
            run[1][e["tid"]] = e["args"]["name"]
        elif e["ph"] == "X":
            run[2].append(e)
    return dict(sorted(runs.items()))


def check_generation(trace, stats):
    runs = list(by_process(trace).values())
    steps = stats["decode_step_cycles"]
    prefill = stats.get("prefill")
    assert len(runs) == len(steps) + (1 if prefill else 0), \
        f"{len(runs)} processes for {len(steps)} decode steps"
    clock_us = None
    start = 0
    for i, (label, names, events) in enumerate(runs):
        is_prefill = prefill is not None and i == 0
        want = [(op["name"], op["cycles"]) for op in prefill["ops"]] \
            if is_prefill else None
        cycles = prefill["cycles"] if is_prefill else \
            steps[i - (1 if prefill else 0)]
        assert label.startswith("prefill" if is_prefill else "decode step"), \
            f"process {i} is named '{label}'"
        check_run(events, names, want, cycles)
        first = next(e for e in events if e["tid"] == 0
                     and e["args"]["start_cycle"] == 0)
        if clock_us is None and first["args"]["cycles"]:
            clock_us = first["dur"] / first["args"]["cycles"]
        if clock_us:
            assert abs(first["ts"] - start * clock_us) <= 1e-6 * max(1, start), \
                f"{label} starts at {first['ts']} us, not after the run before"
        start += cycles
    print(f"generation trace ok: {len(runs)} runs "
          f"({'a prefill and ' if prefill else ''}{len(steps)} decode steps) "
          f"back to back over {start} cycles")


def main():
    generate = sys.argv[1] == "--generate"
    paths = sys.argv[2:] if generate else sys.argv[1:]
    with open(paths[0]) as f:
        trace = json.load(f)
    with open(paths[1]) as f:
        stats = json.load(f)
    if generate:
        check_generation(trace, stats)
        return 0
    (_, names, events), = by_process(trace).values()
    want = [(op["name"], op["cycles"]) for op in stats["ops"]]
    count, start, tracks, latest, phases = check_run(events, names, want,
                                                     stats["cycles"])
    print(f"trace ok: {count} ops adding up to {start} cycles, "
          f"{tracks} core tracks tiling up to {latest} of "
          f"{stats['cycles']} cycles; "
          + ", ".join(f"{k} {v}" for k, v in sorted(phases.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
