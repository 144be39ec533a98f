#!/bin/sh
# run_all.sh "UNIT BINS" "FUZZ BINS": every CPU test phase, then one summary line.
cd "$(dirname "$0")/.."
start=$(date +%s)
status=""
phase() {  # phase NAME COMMAND...
    echo "== $1"
    if "$@_run"; then status="$status $1:pass"; else status="$status $1:FAIL"; fi
}
unit_run() { sh tests/run_unit.sh $UNIT && sh tests/unit/test_resources_vs_tools.sh && sh tests/unit/test_libktrt_exports.sh && sh tests/unit/test_tune_refuse.sh && sh tests/unit/test_tune_ffi.sh && sh tests/unit/test_law_replay.sh &&
             sh tests/device/build.sh && sh tests/device/test_return_db.sh; }
fuzz_run() { sh tests/run_fuzz.sh $FUZZ; }
compile_run() { sh tests/run_compile.sh; }
tuner_run() { sh tests/sweep/test_sweep.sh; }
UNIT=$1; FUZZ=$2
phase unit
phase fuzz
phase compile
phase tuner
secs=$(( $(date +%s) - start ))
case "$status" in
    *FAIL*) echo "ktune tests: FAILED ($status ) in ${secs}s"; exit 1 ;;
    *) echo "ktune tests: all passed ($status ) in ${secs}s" ;;
esac
