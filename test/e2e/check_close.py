#!/usr/bin/python3
"""Whether an analytic run's cycles are within a tolerance of a timing run's.

    check_close.py TIMING_STATS ANALYTIC_STATS TOLERANCE

Prints `analytic within T of timing: A against B (E%)` and exits 0, or
prints the same with `not within` and exits 1.
"""
import json
import sys


def main():
    timing_path, analytic_path, tolerance = sys.argv[1:4]
    with open(timing_path) as f:
        timing = json.load(f)["cycles"]
    with open(analytic_path) as f:
        analytic = json.load(f)["cycles"]
    error = analytic / timing - 1
    within = abs(error) <= float(tolerance)
    print(f"analytic {'within' if within else 'not within'} {tolerance} of "
          f"timing: {analytic} against {timing} ({error * 100:+.2f}%)")
    return 0 if within else 1


if __name__ == "__main__":
    sys.exit(main())
