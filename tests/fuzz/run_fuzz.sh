#!/bin/sh
# run_fuzz.sh FUZZER SECONDS TESTS_DIR EXAMPLES_DIR — bounded libFuzzer run seeded with every
# .srd file we have; fails on any crash, leak, sanitizer report or hang (10 s per input).
fuzzer=$1
seconds=$2
tests=$3
examples=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus"
cp "$tests"/lang/bad/*.srd "$tests"/lang/good/*.srd "$examples"/*.srd "$tests"/fuzz/corpus/* "$work/corpus/" 2>/dev/null
cd "$work" || exit 1
"$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
    -dict="$tests/fuzz/srd.dict" -print_final_stats=1 corpus
