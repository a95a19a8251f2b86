#!/usr/bin/env bash
# The main job at small size: builds wafer, then compiles and runs a GEMM
# (MatMul 37x50 by 50x29 on a 5x7 grid, MeshGEMM) and a GEMV (1x300 by
# 300x200 on a 6x6 grid, MeshGEMV with a K-tree) on the emulated wse2, and
# checks both against ONNX Runtime.
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/setup.sh
cmake --build build -j2 --target wafer-run wafer-translate wafer-opt >/dev/null

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
py=/usr/bin/python3
status=0
run_case() { # kind sizes... grid label
  local kind=$1 grid=$2 label=$3
  shift 3
  "$py" python/wafer/testing.py "$kind" "$work" "$kind" "$@"
  echo "== $label on a ${grid} grid (target wse2)"
  build/bin/wafer-run run "$work/$kind.onnx" --grid "$grid" \
    --inputs "$work/$kind.in.npz" --outputs "$work/$kind.out.npz" \
    --stats "$work/$kind.stats.json"
  node test/reference/run_ort.mjs "$work/$kind.onnx" "$work/$kind.in.npz" \
    "$work/$kind.ref.npz" >/dev/null
  "$py" - "$work/$kind.out.npz" "$work/$kind.ref.npz" <<'PY' || status=1
import sys
sys.path.insert(0, "python")
from wafer import testing
err = testing.compare(sys.argv[1], sys.argv[2])
ok = err <= 1e-4
print(f"check vs ONNX Runtime: max error / max |reference| = {err:.2e} "
      f"(tolerance 1e-4): {'PASS' if ok else 'FAIL'}\n")
sys.exit(0 if ok else 1)
PY
}
run_case matmul 5x7 "GEMM 37x50 x 50x29 (MeshGEMM, interleaved rings)" 37 50 29
run_case gemv 6x6 "GEMV 1x300 x 300x200 (MeshGEMV, K-tree K=2)" 300 200
exit $status
