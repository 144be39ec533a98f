#!/bin/sh
# Twenty-fifth session, device call 6 (bench/NOTES.md, "one conversion a rounding"): the prefill's
# launches with the dtype's rounding one conversion on NVIDIA and the decays inside a chunk by the
# target's 2^x (out/c30), checked, then against call 5's winner (out/c29) on one libktrt, two
# rounds interleaved. Carry out/lib out/c29 out/c30. Results: $OUT/a6.tgz.
set -u
. tests/device/env.sh
R=$OUT/a6; mkdir -p $R
W=$(mktemp -d)
L=out/lib/libktrt.so
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem --format=csv,noheader
xz -dc out/c30/gdn_all.ktdb.xz > $W/c30.ktdb
xz -dc out/c29/gdn_all.ktdb.xz > $W/c29.ktdb
timeout 80 python3 tests/device/gdn_prefill_check.py --lib $L --db $W/c30.ktdb > $R/check-c30.log 2>&1; echo "check c30 rc=$? $(el)"
grep -E "gdn_prefill_check:|FAIL|WRONG" $R/check-c30.log | head -6 | cut -c1-200
for round in 1 2; do
    for c in c29 c30; do
        timeout 40 python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/$c.ktdb --profile --rounds 5 \
            --rows 1x16384/8,1x16384/16 > $R/$c-$round.log 2>&1; echo "bench $c round $round rc=$? $(el)"
        grep -E "x1 |law" $R/$c-$round.log | cut -c1-170
    done
done
rm -rf $W
tar czf $OUT/a6.tgz -C $OUT a6 && rm -rf $R
echo "done $(el)"
