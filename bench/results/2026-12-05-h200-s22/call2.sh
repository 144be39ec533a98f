#!/bin/sh
# Twenty-second session, device call 2 (bench/NOTES.md, "the GDN prefill" and "the GDN decode step"):
# issue 13's first run on a GPU, both ops on the law's picks over every sm_90a kernel of theirs
# (out/c22/gdn_all.ktdb.xz: `kt gen` of templates/gdn/decode.lua and prefill.lua, one database).
#  1. gdn_prefill_check.py: prefill-then-decode chains through libktrt against the float64 truth;
#  2. gdn_check.py: the decode chains (plain and speculative);
#  3. bench_gdn_prefill.py: the prefill rows against the PyTorch chunked peer;
#  4. the prefill's A/B: the law without the loads a chunk ahead (PF 0 only);
#  5. bench_gdn.py: the decode grid, hot and cold, against the PyTorch step and the ceilings.
# Carry out/lib out/c22.
set -u
. tests/device/env.sh
R=$OUT/g2; mkdir -p $R
L=out/lib/libktrt.so
DB=$R/gdn_all.ktdb
xz -dc out/c22/gdn_all.ktdb.xz > $DB
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem --format=csv,noheader
timeout 150 python3 tests/device/gdn_prefill_check.py --lib $L --db $DB > $R/prefill-check.log 2>&1; echo "prefill check rc=$? $(el)"
cut -c1-260 $R/prefill-check.log | tail -n 30
timeout 120 python3 tests/device/gdn_check.py --lib $L --db $DB > $R/check.log 2>&1; echo "decode check rc=$? $(el)"
tail -n 22 $R/check.log | cut -c1-200
OUT=$R timeout 170 python3 tests/device/bench_gdn_prefill.py --lib $L --db $DB > $R/prefill-bench.log 2>&1; echo "prefill bench rc=$? $(el)"
cut -c1-220 $R/prefill-bench.log
# A/B: the same law without the loads a chunk ahead (PF 1 kernels removed from a copy)
python3 -c "
import sqlite3, shutil, sys
shutil.copy('$DB', '$R/pf0.ktdb'); c = sqlite3.connect('$R/pf0.ktdb')
c.execute(\"DELETE FROM kernel WHERE name LIKE 'kt_gdn_prefill%_pf1'\"); c.commit()"
timeout 90 python3 tests/device/bench_gdn_prefill.py --lib $L --db $R/pf0.ktdb --rows 1x16384/8,1x65536/8,1x16384/16 > $R/prefill-bench-pf0.log 2>&1; echo "prefill bench pf0 rc=$? $(el)"
cut -c1-220 $R/prefill-bench-pf0.log
rm -f $R/pf0.ktdb
OUT=$R timeout 150 python3 tests/device/bench_gdn.py --lib $L --db $DB --rounds 11 > $R/bench.log 2>&1; echo "decode bench rc=$? $(el)"
cut -c1-170 $R/bench.log
rm -f $DB
tar czf $OUT/g2.tgz -C $OUT g2 && rm -rf $R
echo "done $(el)"
