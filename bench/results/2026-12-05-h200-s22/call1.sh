#!/bin/sh
# Twenty-second session, device call 1 (bench/NOTES.md, "the GDN decode step", predictions of the
# twenty-first session): issue 13's first run on a GPU.
#  1. gdn_check.py's chains through libktrt on the law's pick among every sm_90a gdn_decode kernel
#     (out/c21/gdn.ktdb, as built by `kt gen --recipe templates/gdn/decode.lua --target sm_90a`);
#  2. ./tune's gdn_decode sweep of Qwen3-Next at --tp 4 into a copy (every candidate verified
#     against the float64 reference, then timed; 3 minutes);
#  3. bench_gdn.py's grid on the swept copy, and the chains again on it.
# Carry out/bin out/lib out/device out/c21 (tests/device/pack.sh with KT_PACK_DB=0).
set -u
. tests/device/env.sh
R=$OUT/g1; mkdir -p $R
A=out/c21
L=out/lib/libktrt.so
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem --format=csv,noheader
timeout 150 python3 tests/device/gdn_check.py --lib $L --db $A/gdn.ktdb > $R/check-law.log 2>&1; echo "check law rc=$? $(el)"
tail -n 24 $R/check-law.log | cut -c1-200
cp $A/gdn.ktdb $R/swept.ktdb
timeout 250 ./tune --modelpath models/qwen3-next-80b-a3b --tp 4 --target sm_90a --db $R/swept.ktdb --no-build --resume \
    --only gdn_decode --budget-min 3 > $R/sweep.log 2>&1; echo "sweep rc=$? $(el)"
grep -v '^ *$' $R/sweep.log | tail -n 60 | cut -c1-200
OUT=$R timeout 170 python3 tests/device/bench_gdn.py --lib $L --db $R/swept.ktdb --rounds 11 > $R/bench.log 2>&1; echo "bench rc=$? $(el)"
cut -c1-170 $R/bench.log
timeout 60 python3 tests/device/gdn_check.py --lib $L --db $R/swept.ktdb > $R/check-swept.log 2>&1; echo "check swept rc=$? $(el)"
tail -n 3 $R/check-swept.log
xz -T4 $R/swept.ktdb
tar czf $OUT/g1.tgz -C $OUT g1 && rm -rf $R
echo "done $(el)"
