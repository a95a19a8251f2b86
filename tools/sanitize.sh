#!/usr/bin/env bash
# Builds wafer with AddressSanitizer and UndefinedBehaviorSanitizer into
# build-sanitize/ and runs the whole suite there; any sanitizer report fails
# the run (halt_on_error). Debian's MLIR poisons memory in a way ASan's
# user-poisoning check misreads, hence allow_user_poisoning=0.
#
#   tools/sanitize.sh [ctest arguments, e.g. -R Lit.all]
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/setup.sh
dir=build-sanitize
if [ ! -f $dir/build.ninja ]; then
  cmake -G Ninja -S . -B $dir -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_FLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer" \
    -DCMAKE_CXX_FLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
    -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
fi
cmake --build $dir -j2
# libsentencepiece brings its own protobuf (3.14) and the tools link
# Debian's (3.21): the tokenizer's shim is loaded with RTLD_DEEPBIND to keep
# them apart, which ASan refuses, so the sanitizer build loads it without,
# and the lit tests that run libsentencepiece inside a tool linking
# libprotobuf (a tokenizer.model through wafer-translate or wafer-run) are
# left out here; the unit tests still run it (no libprotobuf there).
export LIT_FILTER_OUT='Import/tokenizer\.test|Import/tokenizer-errors\.test|Import/checkpoint-tokenizer\.test|e2e/generate\.test'
export ASAN_OPTIONS=allow_user_poisoning=0:halt_on_error=1:detect_leaks=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
cd $dir
ctest --output-on-failure "$@"
