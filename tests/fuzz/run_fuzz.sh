#!/bin/sh
# run_fuzz.sh FUZZ_FRONT FUZZ_GEN GEN_SEEDS SECONDS TESTS_DIR EXAMPLES_DIR — bounded libFuzzer
# runs of both targets, SECONDS/2 each: fuzz_front (bytes through the front end) seeded with
# every .srd file we have and 300 programs of the generator (up to 16 KB, the longest input), then fuzz_gen (bytes steer the
# generator). Fails on any crash, leak, sanitizer report, out-of-memory or hang (10 s per
# input). Crash inputs are kept in $SRD_FUZZ_ARTIFACTS (default ./fuzz-artifacts), with the
# .srd program each fuzz_gen input stands for.
#   The suite runs 60 s (tests/CMakeLists.txt, SRD_FUZZ_SECONDS). Before a release, run
# 2 x 30 minutes and record the result in tests/fuzz/README.md (SRD_FUZZ_PARALLEL=1 runs the
# two targets at once, one per core: 30 minutes of wall time):
#   SRD_FUZZ_PARALLEL=1 sh tests/fuzz/run_fuzz.sh build-asan/tests/fuzz_front build-asan/tests/fuzz_gen \
#       build-asan/tests/gen_seeds 3600 tests examples
front=$1
gen=$2
seeds=$3
half=$(( $4 / 2 ))
tests=$(cd "$5" && pwd)
examples=$(cd "$6" && pwd)
artifacts=${SRD_FUZZ_ARTIFACTS:-$PWD/fuzz-artifacts}
mkdir -p "$artifacts"
artifacts=$(cd "$artifacts" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/front" "$work/gen"
cp "$tests"/lang/bad/*.srd "$tests"/lang/good/*.srd "$examples"/*.srd "$tests"/fuzz/corpus/* "$work/front/" 2>/dev/null
"$seeds" "$work/front" 300 "$(date +%j)" 16384 || exit 1
cp "$tests"/fuzz/gen_corpus/* "$work/gen/" 2>/dev/null
cd "$work" || exit 1

# fuzz TARGET CORPUS: one bounded run; its status is the script's if it fails.
fuzz() {
    "$1" -max_total_time="$half" -timeout=10 -rss_limit_mb=2048 -max_len=16384 -dict="$tests/fuzz/srd.dict" \
        -artifact_prefix="$artifacts/$(basename "$1")-" -print_final_stats=1 "$2"
}

if [ "$SRD_FUZZ_PARALLEL" = 1 ]; then
    fuzz "$front" front > front.log 2>&1 &
    front_pid=$!
    fuzz "$gen" gen > gen.log 2>&1
    gen_status=$?
    wait $front_pid
    status=$?
    cat front.log gen.log
else
    fuzz "$front" front
    status=$?
    fuzz "$gen" gen
    gen_status=$?
fi
for input in "$artifacts"/fuzz_gen-*; do
    case $input in *.srd|*'*') continue ;; esac
    [ -f "$input.srd" ] || "$seeds" --show "$input" > "$input.srd"
done
[ $status -ne 0 ] && exit $status
exit $gen_status
