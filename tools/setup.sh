# Sourced by tools/demo.sh and tools/check.sh: installs the Debian packages and
# npm modules that are missing (quiet and fast when everything is there), then
# configures and builds wafer into build/.
wafer_packages=(cmake ninja-build g++ libmlir-19-dev mlir-19-tools llvm-19-dev
  llvm-19-tools libprotobuf-dev protobuf-compiler libonnx-dev
  libflatbuffers-dev flatbuffers-compiler libgtest-dev libzip-dev
  python3-numpy python3-onnx python3-torch libicu-dev libsentencepiece-dev
  sentencepiece python3-sentencepiece python3-regex python3-matplotlib)
wafer_missing=()
# Node.js may come from elsewhere (NodeSource bundles npm); only ask Debian
# for what is absent.
command -v node >/dev/null || wafer_missing+=(nodejs)
command -v npm >/dev/null || wafer_missing+=(npm)
for p in "${wafer_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    wafer_missing+=("$p")
done
if [ ${#wafer_missing[@]} -gt 0 ]; then
  echo "setup: installing ${wafer_missing[*]}" >&2
  wafer_sudo=""
  [ "$(id -u)" -ne 0 ] && wafer_sudo="sudo"
  $wafer_sudo apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive $wafer_sudo apt-get install -y -q \
    "${wafer_missing[@]}" >/dev/null
fi
if [ ! -d test/reference/node_modules/onnxruntime-node ]; then
  echo "setup: installing onnxruntime-node into test/reference" >&2
  (cd test/reference && npm install --ignore-scripts --no-audit --no-fund >/dev/null)
fi
if [ ! -f build/build.ninja ]; then
  cmake -G Ninja -S . -B build >/dev/null
fi
