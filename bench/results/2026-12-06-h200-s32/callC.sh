#!/bin/sh
# Thirty-second session, device calls C and D (issue 13's sweep; s31's callC.sh over this session's
# build, bench/NOTES.md): ./tune on Qwen3-Next-80B-A3B at
# --tp 4 over out/s32/all.ktdb.xz (the kernels `./tune --modelpath ... --no-device` built here for
# the model's 461 problems: GEMM, attention decode d256, GDN decode and prefill, bf16; the other
# dtypes' and head sizes' kernels left out to fit the carry), every candidate verified against the
# float64 reference, then timed; stops starting problems at its budget (what it measured is kept),
# `kt dump`, the database back (tests/device/return_db.sh). Call D: the same with RESUME_DB set to
# the database call C returned (carried as out/s32/resume.ktdb.xz), --resume continuing the sweep.
# Carry out/bin out/lib out/device out/s32. $OUT/c1.tgz (call D: $OUT/d1.tgz), the database beside.
set -u
. tests/device/env.sh
N=${CALL:-c1}
call_begin $N
DB=$W/q.ktdb
if [ -f out/s32/resume.ktdb.xz ]; then xz -dc out/s32/resume.ktdb.xz > $DB; else xz -dc out/s32/all.ktdb.xz > $DB; fi
timeout -s INT ${SWEEP_TIMEOUT:-440} ./tune --modelpath models/qwen3-next-80b-a3b --tp 4 --target sm_90a --db $DB --no-build --resume \
    --budget-min ${BUDGET:-7.5} ${ONLY:+--only $ONLY} > $R/sweep.log 2>&1
echo "sweep rc=$? $(el)"
grep -E "^coverage|^sweep|refused|wrong|failed" $R/sweep.log | head -12 | cut -c1-200
out/bin/kt dump --db $DB > $R/dump.txt 2>&1; echo "dump rc=$? $(el)"; gzip $R/dump.txt
sh tests/device/return_db.sh $DB $OUT
call_end $N
