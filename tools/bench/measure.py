"""Timing a command for the benchmark scripts of tools/bench."""
import os
import subprocess
import sys
import time


def timed(cmd):
    """(seconds, max RSS in MB) of one run of cmd, from wait4; exits with
    cmd's stderr on failure."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"FAILED: {' '.join(cmd)}\n{proc.stderr.read().strip()}")
    return seconds, usage.ru_maxrss / 1024.0


def wall(cmd, env=None):
    """(seconds, stdout) of one run of cmd; exits with cmd's stderr on
    failure."""
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        sys.exit(f"FAILED: {' '.join(cmd)}\n{proc.stderr.strip()}")
    return time.perf_counter() - start, proc.stdout
