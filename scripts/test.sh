#!/bin/sh
# test.sh — installs what is missing, then builds and runs the whole test suite twice:
# with gcc (optimised, warnings as errors) and with clang under AddressSanitizer and
# UndefinedBehaviorSanitizer, where libFuzzer also runs the front end for a bounded time.
set -e
cd "$(dirname "$0")/.."
sh scripts/setup.sh
export OPENBLAS_NUM_THREADS=1

echo "== gcc, optimised"
sh scripts/build.sh build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=gcc -DSRD_WERROR=ON
ctest --test-dir build --output-on-failure -j 2

echo "== clang, address and undefined-behaviour sanitizers, fuzzing"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
sh scripts/build.sh build-asan -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang -DSRD_SANITIZE=ON \
    -DSRD_FUZZ=ON -DSRD_WERROR=ON
ctest --test-dir build-asan --output-on-failure -j 2
