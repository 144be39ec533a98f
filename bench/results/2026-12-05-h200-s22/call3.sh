#!/bin/sh
# Twenty-second session, device call 3 (issue 13's sweep): ./tune on Qwen3-Next-80B-A3B at --tp 4,
# the GDN families only (gdn_decode, then gdn_prefill), every candidate verified against the float64
# reference, then timed, into a copy of out/c22's database; kt dump of it; gdn_prefill_check.py
# and bench_gdn_prefill.py's issue rows on the tuned database (the tuned paths, where call 2 ran
# the law's). Carry out/bin out/lib out/device out/c22 (tests/device/pack.sh with KT_PACK_DB=0).
set -u
. tests/device/env.sh
R=$OUT/g3; mkdir -p $R
DB=$R/work.ktdb
C=${CARRY_DIR:-out/c22}   # the carried database's folder (the twenty-third session's call 2: out/c23)
xz -dc $C/gdn_all.ktdb.xz > $DB
L=out/lib/libktrt.so
for op in gdn_decode gdn_prefill; do
    m=${SWEEP_MIN:-2}; [ $op = gdn_prefill ] && m=${SWEEP_MIN:-3}
    timeout 330 ./tune --modelpath models/qwen3-next-80b-a3b --tp 4 --target sm_90a --db $DB --no-build --resume \
        --only $op --budget-min $m > $R/sweep-$op.log 2>&1; echo "sweep $op rc=$? $(el)"
    grep -v '^ *$' $R/sweep-$op.log | grep -E "coverage|refused|wrong|fail|budget|problems" | head -8 | cut -c1-200
done
out/bin/kt dump --db $DB > $R/dump.txt 2>&1; echo "dump rc=$? $(el)"
timeout 60 python3 tests/device/gdn_prefill_check.py --lib $L --db $DB > $R/prefill-check.log 2>&1; echo "prefill check rc=$? $(el)"
tail -n 3 $R/prefill-check.log | cut -c1-200
OUT=$R timeout 90 python3 tests/device/bench_gdn_prefill.py --lib $L --db $DB --rows 1x4096/8,1x16384/8,8x2048/8 > $R/prefill-bench.log 2>&1; echo "prefill bench rc=$? $(el)"
cut -c1-220 $R/prefill-bench.log
sh tests/device/return_db.sh $DB $R > /dev/null 2>&1; rm -f $DB
tar czf $OUT/g3.tgz -C $OUT g3 && rm -rf $R
echo "done $(el)"
