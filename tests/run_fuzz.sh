#!/bin/sh
# run_fuzz.sh FUZZ_BIN...: run each libFuzzer binary for a bounded time on a copy of its seed
# corpus, tests/fuzz/corpus_<binary name without the fuzz_ prefix>/ (the committed seeds never
# grow). One line per target with its exec count; non-zero exit if any target found a crash,
# a leak, a timeout or a sanitizer report. A crashing input is kept under
# out/fuzz/artifacts/<target>/ and its path printed, so it can be replayed: <binary> <file>.
#
# Knobs: KT_FUZZ_SECONDS (default 20) per target, KT_FUZZ_MAX_LEN (default 65536 bytes, above the
# largest seed), KT_FUZZ_TIMEOUT (default 10 s per input).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SECS=${KT_FUZZ_SECONDS:-20}
MAX_LEN=${KT_FUZZ_MAX_LEN:-65536}
TIMEOUT=${KT_FUZZ_TIMEOUT:-10}
if [ $# -eq 0 ]; then
    echo "usage: sh tests/run_fuzz.sh FUZZ_BIN..." >&2
    exit 2
fi
WORK=$(mktemp -d "${TMPDIR:-/tmp}/kt_fuzz.XXXXXX") || exit 1
trap 'rm -rf "$WORK"' EXIT INT TERM

failed=0
for bin in "$@"; do
    name=$(basename "$bin")
    seeds="$ROOT/tests/fuzz/corpus_${name#fuzz_}"
    corpus="$WORK/$name"
    artifacts="$ROOT/out/fuzz/artifacts/$name"
    log="$WORK/$name.log"
    mkdir -p "$corpus" "$artifacts"
    if [ -d "$seeds" ]; then cp "$seeds"/* "$corpus"/ 2>/dev/null; fi
    before=$(ls "$corpus" | wc -l)
    "$bin" -max_total_time="$SECS" -max_len="$MAX_LEN" -timeout="$TIMEOUT" -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$artifacts/" "$corpus" > "$log" 2>&1
    rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    after=$(ls "$corpus" | wc -l)
    if [ "$rc" -ne 0 ]; then
        failed=$((failed + 1))
        crash=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)
        echo "FAIL $name: exit $rc after ${execs:-?} execs${crash:+; input kept at $crash}"
        grep -E 'ERROR:|SUMMARY:|runtime error|==[0-9]+==' "$log" | head -n 20 | sed 's/^/    /'
    else
        echo "ok   $name: ${execs:-?} execs in ${SECS}s, corpus $before -> $after inputs"
    fi
done
[ "$failed" -eq 0 ]
