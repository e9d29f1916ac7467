#!/bin/sh
# clean.sh SRDC FILE.srd — the file must check with exit status 0 and print nothing.
out=$("$1" check "$2" 2>&1)
status=$?
if [ $status -ne 0 ] || [ -n "$out" ]; then
    printf '%s\n' "$out"
    echo "expected a clean check of $2 (exit $status)"
    exit 1
fi
