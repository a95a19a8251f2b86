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
export ASAN_OPTIONS=allow_user_poisoning=0:halt_on_error=1:detect_leaks=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
cd $dir
ctest --output-on-failure "$@"
