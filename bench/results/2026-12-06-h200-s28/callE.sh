#!/bin/sh
# Twenty-eighth session, device call E (~5 minutes; callF.sh then runs batch 128 and Nsight Compute):
# the decode chains and the split norm's rows (the law's BV 32 picks against BV 128 at batch 1 / 8,
# hot); the prefill's check on out/c34 (the twenty-seventh session's _wy, this session's PF 2) and
# its A/B against c32's (each on its own runtime, runs alternating);
# PF 2 (w^T and kd stored to LDS a chunk ahead: two barriers a chunk, not four) against PF 1 at 16K.
# Carry out/lib_e out/lib_s26 out/c32 out/c34. Results: $OUT/e1.tgz.
set -u
. tests/device/env.sh
call_begin e1
L=out/lib_e/libktrt.so   # the runtime as of d660c10 (PF 2 staged), before ST
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
OLD=out/lib_s26/libktrt.so
xz -dc out/c32/gdn_all.ktdb.xz > $W/c32.ktdb
xz -dc out/c34/gdn_all.ktdb.xz > $W/c34.ktdb
K=bench/results/2026-12-05-h200-s26/keep_bv.py
P=bench/results/2026-12-05-h200-s25/pick.py
python3 $K $W/c34.ktdb $W/bv128.ktdb 128 && python3 $K $W/c34.ktdb $W/bv32.ktdb 32
timeout 50 python3 tests/device/gdn_check.py --lib $L --db $W/c34.ktdb > $R/check.log 2>&1; echo "decode check rc=$? $(el)"
grep -E "gdn_check:|WRONG|fail" $R/check.log | head -4 | cut -c1-200
OUT=$R timeout 100 python3 tests/device/bench_gdn.py --lib $L --db $W/c34.ktdb --ab $W/bv128.ktdb --rounds 5 --profile \
    --hv 8,32 --batch 1,8 --tokens 1,4 --regime hot > $R/bench.log 2>&1; echo "decode bench rc=$? $(el)"
grep -v "kernel " $R/bench.log | cut -c1-200
timeout 50 python3 tests/device/gdn_prefill_check.py --lib $L --db $W/c34.ktdb > $R/prefill-check.log 2>&1; echo "prefill check (c34) rc=$? $(el)"
grep -E "gdn_prefill_check:|FAIL|WRONG" $R/prefill-check.log | head -6 | cut -c1-200
python3 $P $W/c34.ktdb $W/new.ktdb 64 16 8 1 && python3 $P $W/c32.ktdb $W/old.ktdb 64 16 8 1 && python3 $P $W/c34.ktdb $W/pf2.ktdb 64 16 8 2
for i in 1 2; do
    for s in new old; do
        lib=$L; [ $s = old ] && lib=$OLD
        mkdir -p $R/$s$i
        OUT=$R/$s$i timeout 40 python3 tests/device/bench_gdn_prefill.py --lib $lib --db $W/$s.ktdb --profile \
            --rounds 5 --rows 1x16384/8 > $R/ab-$s$i.log 2>&1; echo "prefill $s run $i rc=$? $(el)"
        grep -v "^  " $R/ab-$s$i.log | cut -c1-160; grep -E "_wy|_out|pf1 " $R/ab-$s$i.log | cut -c1-150
    done
done
mkdir -p $R/pf
OUT=$R/pf timeout 60 python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/new.ktdb --ab $W/pf2.ktdb --profile \
    --rounds 5 --rows 1x16384/8,1x16384/16 > $R/prefill-pf.log 2>&1; echo "prefill pf1/pf2 rc=$? $(el)"
grep -v "^  " $R/prefill-pf.log | cut -c1-200; grep -E "pf[12] " $R/prefill-pf.log | cut -c1-150
gzip -9 $R/*.txt 2>/dev/null
call_end e1
