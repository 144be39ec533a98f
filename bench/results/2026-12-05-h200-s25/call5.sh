#!/bin/sh
# Twenty-fifth session, device call 5 (bench/NOTES.md, "the u loads"): call 4's per-instruction
# view found every chunk waiting a memory latency at the u loads (predicated by owner, all into one
# register). Both exchange forms with u loaded one word a load, unpredicated: units (out/c28) and
# tiles (out/c29), against call 3's tiles (out/c26), one libktrt, one run; each checked.
# Carry out/lib out/c26 out/c28 out/c29. Results: $OUT/a5.tgz.
set -u
. tests/device/env.sh
R=$OUT/a5; mkdir -p $R
W=$(mktemp -d)
L=out/lib/libktrt.so
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem --format=csv,noheader
for c in c28 c29; do
    xz -dc out/$c/gdn_all.ktdb.xz > $W/$c.ktdb
    timeout 90 python3 tests/device/gdn_prefill_check.py --lib $L --db $W/$c.ktdb > $R/check-$c.log 2>&1; echo "check $c rc=$? $(el)"
    grep -E "gdn_prefill_check:|FAIL|WRONG" $R/check-$c.log | head -6 | cut -c1-200
done
xz -dc out/c26/gdn_all.ktdb.xz > $W/c26.ktdb
for round in 1 2; do
    for c in c26 c28 c29; do
        timeout 60 python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/$c.ktdb --profile \
            --rows 1x16384/8,1x16384/16 > $R/$c-$round.log 2>&1; echo "bench $c round $round rc=$? $(el)"
        grep -E "pf[01] +x1|law" $R/$c-$round.log | cut -c1-170
    done
done
for c in c28 c29; do
    timeout 80 python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/$c.ktdb --profile \
        --rows 8x2048/8,1x65536/8,1x4096/8 > $R/$c-rows.log 2>&1; echo "bench $c rows rc=$? $(el)"
    grep -v Warn $R/$c-rows.log | grep -v _warn | cut -c1-200
done
rm -rf $W
tar czf $OUT/a5.tgz -C $OUT a5 && rm -rf $R
echo "done $(el)"
