#!/bin/sh
# Twenty-third session, device call 1 (bench/NOTES.md, "the decode step's round trips"): the decode
# template with every conv input loaded before any is used (MT and OB axes), the prefill's first
# timing (the twenty-second session's call 2 stopped at its workspace slot), both on the law's picks
# over out/c23/gdn_all.ktdb.xz (every sm_90a gdn_decode kernel, bf16 gdn_prefill kernels).
# In the order of what matters if the call is cut short (each step's log is its own file under $OUT):
#  1. gdn_check.py: the decode chains through libktrt against the float64 truth; bench_gdn.py: the
#     issue's decode grid, hot and cold;
#  2. bench_gdn_prefill.py: the prefill rows (each checked against the truth first);
#     gdn_prefill_check.py: the prefill-then-decode chains;
#  3. the kd A/B (the twenty-second session's prefill kernels, out/c23/c22.ktdb.xz: k's pieces in
#     w's order); the decode A/B on the rows of the bars (the law without OB 2 kernels, without
#     MT 1 ones); the PF A/B (PF 0 only).
# Carry out/lib out/c23.
set -u
. tests/device/env.sh
R=$OUT/g1; mkdir -p $R
W=$(mktemp -d)   # the databases, outside what comes back
L=out/lib/libktrt.so
DB=$W/gdn_all.ktdb
xz -dc out/c23/gdn_all.ktdb.xz > $DB
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem --format=csv,noheader
timeout 100 python3 tests/device/gdn_check.py --lib $L --db $DB > $R/check.log 2>&1; echo "decode check rc=$? $(el)"
grep -E "gdn_check:|WRONG|fail" $R/check.log | head -8 | cut -c1-200
OUT=$R timeout 100 python3 tests/device/bench_gdn.py --lib $L --db $DB --rounds 7 > $R/bench.log 2>&1; echo "decode bench rc=$? $(el)"
cut -c1-170 $R/bench.log
OUT=$R timeout 150 python3 tests/device/bench_gdn_prefill.py --lib $L --db $DB \
    --rows 1x16384/8,1x65536/8,1x16384/16,8x2048/8,1x4096/8 > $R/prefill-bench.log 2>&1; echo "prefill bench rc=$? $(el)"
cut -c1-220 $R/prefill-bench.log
timeout 60 python3 tests/device/gdn_prefill_check.py --lib $L --db $DB > $R/prefill-check.log 2>&1; echo "prefill check rc=$? $(el)"
grep -E "gdn_prefill_check:|WRONG|fail" $R/prefill-check.log | head -8 | cut -c1-200
xz -dc out/c23/c22.ktdb.xz > $W/c22.ktdb
timeout 60 python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/c22.ktdb --rows 1x16384/8,1x65536/8 > $R/prefill-bench-c22.log 2>&1; echo "prefill bench c22 rc=$? $(el)"
cut -c1-220 $R/prefill-bench-c22.log
trim() {   # trim NAME SQL-CONDITION: a copy of the database without the kernels the condition names
    python3 -c "
import sqlite3, shutil
shutil.copy('$DB', '$W/$1.ktdb'); c = sqlite3.connect('$W/$1.ktdb')
c.execute(\"DELETE FROM kernel WHERE $2\"); c.commit()"
}
trim noob "name LIKE 'kt_gdn_decode%_ob2'"
trim nomt1 "name LIKE 'kt_gdn_decode%_mt1_%'"
for v in noob nomt1; do
    timeout 50 python3 tests/device/bench_gdn.py --lib $L --db $W/$v.ktdb --rounds 7 --hv 8,32 --batch 1,128 --tokens 1 \
        --regime hot > $R/bench-$v.log 2>&1; echo "decode bench $v rc=$? $(el)"
    cut -c1-170 $R/bench-$v.log
done
trim pf0 "name LIKE 'kt_gdn_prefill%_pf1'"
timeout 60 python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/pf0.ktdb --rows 1x16384/8 > $R/prefill-bench-pf0.log 2>&1; echo "prefill bench pf0 rc=$? $(el)"
cut -c1-220 $R/prefill-bench-pf0.log
rm -rf $W
tar czf $OUT/g1.tgz -C $OUT g1 && rm -rf $R
echo "done $(el)"
