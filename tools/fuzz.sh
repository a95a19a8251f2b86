#!/usr/bin/env bash
# Fuzzes every reader of untrusted bytes with libFuzzer (clang-19, ASan and
# UBSan): the bundle reader with its validator and the emulator, the target
# JSON loader, the npz reader, role-program expressions, GGUF (with the LLaMA
# config and the vocabulary), safetensors, tokenizer.json and the ONNX
# importer (test/fuzz/). Builds into build-fuzz/, starts each target from
# its seed corpus (test/fuzz/corpus/<target>) and writes any crashing input
# to build-fuzz/crashes/<target>/; prints the executions per target.
#
#   tools/fuzz.sh [SECONDS-PER-TARGET (default 60)] [TARGET...]
#
# A finding's reproducer belongs in test/fuzz/corpus/<target>/ (named after
# the bug), where the ordinary suite replays it (ctest -R Fuzz).
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/setup.sh
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] ||
  targets=(bundle target npz expr gguf safetensors tokenizer_json onnx)

fuzz_missing=()
for p in clang-19 libclang-rt-19-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    fuzz_missing+=("$p")
done
if [ ${#fuzz_missing[@]} -gt 0 ]; then
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -q \
    "${fuzz_missing[@]}" >/dev/null
fi

dir=build-fuzz
flags="-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer"
if [ ! -f $dir/build.ninja ]; then
  cmake -G Ninja -S . -B $dir -DWAFER_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
    -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
    -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
fi
cmake --build $dir -j2 --target "${targets[@]/#/fuzz-}"

# Debian's MLIR poisons memory in a way ASan's user-poisoning check misreads.
export ASAN_OPTIONS=allow_user_poisoning=0:detect_leaks=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
status=0
printf '%-15s %12s %8s %s\n' target executions seconds result
for t in "${targets[@]}"; do
  mkdir -p $dir/corpus/$t $dir/crashes/$t
  cp -n test/fuzz/corpus/$t/* $dir/corpus/$t/ 2>/dev/null || true
  result=clean
  $dir/bin/fuzz-$t -max_total_time="$seconds" -print_final_stats=1 \
    -timeout=10 -rss_limit_mb=4096 -artifact_prefix=$dir/crashes/$t/ \
    $dir/corpus/$t >$dir/$t.log 2>&1 || { result="FINDING (see $dir/$t.log)"; status=1; }
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' $dir/$t.log | tail -1)
  printf '%-15s %12s %8s %s\n' "$t" "${runs:-?}" "$seconds" "$result"
done
exit $status
