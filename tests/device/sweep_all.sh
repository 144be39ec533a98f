#!/bin/sh
# sweep_all.sh: on the GPU machine, `./tune --modelpath M --tp T --resume` for every models/* (or
# KT_SWEEP_MODELS' folders)
# at every TP in KT_SWEEP_TPS (default "4 1"), into one database (KT_DEVICE_DB, default
# out/device/ktune.ktdb), stopping cleanly before KT_DEADLINE_S seconds (default 540) so the
# device call ends in time; a later call continues where it stopped (--resume, and measurements
# are keyed by code hash, so models sharing shapes share them). The database under $OUT
# (tests/device/return_db.sh) and the per-model logs in one file, $OUT/sweep-logs.tgz (the device
# tool returns at most 8 files).
set -u
cd "$(dirname "$0")/../.." || exit 1
ROOT=$(pwd)
export LD_LIBRARY_PATH="$ROOT/out/device/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PATH="$ROOT/out/device/bin:$PATH"
DB=${KT_DEVICE_DB:-out/device/ktune.ktdb}
RES=${OUT:-out/device/results}
DEADLINE=${KT_DEADLINE_S:-540}
mkdir -p "$RES"
LOGS=$(mktemp -d)
start=$(date +%s)
status=0
for tp in ${KT_SWEEP_TPS:-4 1}; do
    for m in ${KT_SWEEP_MODELS:-models/*/}; do
        m=${m%/}
        left=$((DEADLINE - ($(date +%s) - start)))
        if [ "$left" -lt 60 ]; then echo "sweep_all: deadline: $m tp=$tp not started"; status=2; continue; fi
        log="$LOGS/sweep-$(basename "$m")-tp$tp.log"
        t0=$(date +%s)
        # tune stops starting problems at its budget (what it measured is kept); the timeout only
        # stops a run that would still hang 60 s past the deadline (a SIGINT alone did not: the
        # 2026-12-01 run overran the device call and nearly lost its database)
        budget=$(awk -v s="$left" 'BEGIN {printf "%.2f", (s - 40) / 60}')
        timeout -s KILL $((left + 60)) ./tune --modelpath "$m" --tp "$tp" --target sm_90a --db "$DB" --no-build --resume \
            --budget-min "$budget" ${KT_SWEEP_ARGS:-} > "$log" 2>&1
        rc=$?
        echo "sweep_all: $m tp=$tp rc=$rc in $(( $(date +%s) - t0 ))s: $(grep -E '^coverage:|^sweep on' "$log" | tr '\n' ' ')"
        [ $rc = 0 ] || status=1
    done
done
python3 - "$DB" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
print("sweep_all: selections", c.execute("select source, count(*) from selection group by 1").fetchall(),
      "passes", c.execute("select kind, count(*) from pass group by 1").fetchall())
PY
tar czf "$RES/sweep-logs.tgz" -C "$LOGS" . && rm -rf "$LOGS"
[ "${KT_RETURN_DB:-1}" = 0 ] || sh tests/device/return_db.sh "$DB" "$RES" || status=1
exit $status
