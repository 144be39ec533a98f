#!/bin/sh
# Thirty-second session, device call E: the GDN decode law's held-out regret. The split rule
# (runtime/op_gdn.c GDN_SPLIT_SHARE) was fitted on the tp 4 sweep's hv 8 timings (call D); this
# sweeps Qwen3-Next's gdn_decode problems at tp 2 (hv 16) and tp 1 (hv 32), shapes the fit never
# saw, each candidate verified and timed, and the sweep reports the landed law's regret a problem.
# Carry out/bin out/lib out/device out/s32 (resume.ktdb.xz: call D's database, its code restored).
# $OUT/e1.tgz, the database beside.
set -u
. tests/device/env.sh
call_begin e1
DB=$W/q.ktdb
xz -dc out/s32/resume.ktdb.xz > $DB
for tp in 2 1; do
    timeout -s INT ${SWEEP_TIMEOUT:-140} ./tune --modelpath models/qwen3-next-80b-a3b --tp $tp --target sm_90a --db $DB \
        --no-build --only gdn_decode --budget-min ${BUDGET:-2} > $R/sweep-tp$tp.log 2>&1
    echo "tp $tp rc=$? $(el)"
    grep -E "^sweep|^coverage" $R/sweep-tp$tp.log | cut -c1-200
done
out/bin/kt dump --db $DB > $R/dump.txt 2>&1; echo "dump rc=$? $(el)"; gzip $R/dump.txt
sh tests/device/return_db.sh $DB $OUT
call_end e1
