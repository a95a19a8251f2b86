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


def export_zeros(config, graph, out_dir):
    """The exporter's `graph` of `config` with zero weights in out_dir (kept:
    exported once), for the modes that read no weights; its .onnx path."""
    model = os.path.join(out_dir, f"{graph}.onnx")
    if not os.path.exists(model):
        src = os.path.dirname(os.path.dirname(os.path.dirname(
            os.path.abspath(__file__))))
        subprocess.run([sys.executable,
                        os.path.join(src, "python", "wafer", "export_llama.py"),
                        config, "--out-dir", out_dir, "--weights", "zeros",
                        "--graphs", graph], check=True, capture_output=True)
    return model
