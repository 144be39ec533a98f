#!/bin/sh
# run_unit.sh BIN...: run each unit-test binary; one line each, a summary, non-zero if any failed.
failed=0; total=0
for t in "$@"; do
    total=$((total + 1))
    if out=$("$t" 2>&1); then echo "  pass  $(basename "$t")"
    else failed=$((failed + 1)); echo "  FAIL  $(basename "$t")"; echo "$out" | sed 's/^/        /'; fi
done
echo "unit: $total binaries, $failed failed"
[ "$failed" = 0 ]
