#!/usr/bin/env bash
# Installs what is missing, builds wafer into build/ and runs every test:
# lit (dialects, passes, importer, end-to-end against ONNX Runtime) and the
# GoogleTest unit tests, through CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/setup.sh
cmake --build build -j2
cd build
ctest --output-on-failure
