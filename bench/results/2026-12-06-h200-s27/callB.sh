#!/bin/sh
# Twenty-seventh session, device call B (after callA.sh): _wy with X in A's bytes (out/c33: the law's
# prefill forms bt64 bv16 nw8 pf1/pf2 on this session's template, beside c32's decode kernels) checked
# through libktrt, then timed against c32's PF 1 on the runtime each was built for (runs alternate,
# A B A B, the per-launch profile names _wy); then the twenty-sixth session's call2.sh (Nsight
# Compute sections and SASS stall samples) on c33. Carry out/lib out/lib_s26 out/c32 out/c33.
# Results: $OUT/s2.tgz.
set -u
. tests/device/env.sh
call_begin s2
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
xz -dc out/c33/gdn_all.ktdb.xz > $W/c33.ktdb
xz -dc out/c32/gdn_all.ktdb.xz > $W/c32.ktdb
P=bench/results/2026-12-05-h200-s25/pick.py
python3 $P $W/c33.ktdb $W/new.ktdb 64 16 8 1 && python3 $P $W/c32.ktdb $W/old.ktdb 64 16 8 1
timeout 60 python3 tests/device/gdn_prefill_check.py --lib $L --db $W/c33.ktdb > $R/prefill-check.log 2>&1; echo "prefill check (c33) rc=$? $(el)"
grep -E "gdn_prefill_check:|FAIL|WRONG" $R/prefill-check.log | head -6 | cut -c1-200
for i in 1 2; do
    for s in new old; do
        lib=$L; [ $s = old ] && lib=out/lib_s26/libktrt.so
        mkdir -p $R/$s$i
        OUT=$R/$s$i timeout 50 python3 tests/device/bench_gdn_prefill.py --lib $lib --db $W/$s.ktdb --profile \
            --rounds 5 --rows 1x16384/8,1x16384/16 > $R/ab-$s$i.log 2>&1; echo "prefill $s run $i rc=$? $(el)"
        grep -v "^  " $R/ab-$s$i.log | cut -c1-160; grep -E "_wy|_out" $R/ab-$s$i.log | cut -c1-150
    done
done
call_end s2
# the twenty-sixth session's call 2 on c33 (its decode kernels are c32's)
mkdir -p out/c32n && cp out/c33/gdn_all.ktdb.xz out/c32n/gdn_all.ktdb.xz
sed 's#out/c32/gdn_all#out/c32n/gdn_all#' bench/results/2026-12-05-h200-s26/call2.sh > $OUT/call2.sh
timeout 330 sh $OUT/call2.sh; rm -f $OUT/call2.sh
