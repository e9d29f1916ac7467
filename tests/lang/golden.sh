#!/bin/sh
# golden.sh SRDC FILE.srd — runs `srdc check` on a bad input from its own directory and
# compares what it prints with FILE.expected. Set UPDATE=1 to rewrite the expectation.
srdc=$1
input=$2
dir=$(dirname "$input")
name=$(basename "$input" .srd)
cd "$dir" || exit 2
actual=$("$srdc" check "$name.srd" 2>&1)
status=$?
if [ "$UPDATE" = 1 ]; then
    printf '%s\n' "$actual" > "$name.expected"
fi
if [ $status -ne 1 ]; then
    echo "expected exit status 1, got $status"
    printf '%s\n' "$actual"
    exit 1
fi
if ! printf '%s\n' "$actual" | diff -u "$name.expected" -; then
    echo "diagnostics of $name.srd differ from $name.expected"
    exit 1
fi
