#!/bin/sh
# Twenty-eighth session, device call G (~7 minutes; in place of callE.sh, on this session's runtime
# out/lib with ST): decode chains and the split norm's rows (the law's BV 32 picks against BV 128
# at batch 1 / 8, hot); the prefill's device check on each new form (PF 1 ST 1 as the law takes
# it, PF 2, ST 2, both); c35's PF 1 ST 1 (the twenty-seventh session's _wy) against c32's on its
# own runtime, alternating; then PF 2, ST 2 and both against PF 1 ST 1 at 16K hv 8 and 16.
# Carry out/lib out/lib_s26 out/c32 out/c35. Results: $OUT/g1.tgz.
set -u
. tests/device/env.sh
call_begin g1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
OLD=out/lib_s26/libktrt.so
K=tests/device/keep.py
xz -dc out/c32/gdn_all.ktdb.xz > $W/c32.ktdb
xz -dc out/c35/gdn_all.ktdb.xz > $W/c35.ktdb
python3 $K $W/c35.ktdb $W/bv128.ktdb gdn_decode BV=128 && python3 $K $W/c35.ktdb $W/bv32.ktdb gdn_decode BV=32
timeout 50 python3 tests/device/gdn_check.py --lib $L --db $W/c35.ktdb > $R/check.log 2>&1; echo "decode check rc=$? $(el)"
grep -E "gdn_check:|WRONG|fail" $R/check.log | head -4 | cut -c1-200
OUT=$R timeout 100 python3 tests/device/bench_gdn.py --lib $L --db $W/c35.ktdb --ab $W/bv128.ktdb --rounds 5 --profile \
    --hv 8,32 --batch 1,8 --tokens 1,4 --regime hot > $R/bench.log 2>&1; echo "decode bench rc=$? $(el)"
grep -v "kernel " $R/bench.log | cut -c1-200
P="gdn_prefill BT=64 BV=16 NW=8"
python3 $K $W/c35.ktdb $W/new.ktdb $P PF=1 ST=1 && python3 $K $W/c32.ktdb $W/old.ktdb $P PF=1 ST=1/1
python3 $K $W/c35.ktdb $W/pf2.ktdb $P PF=2 ST=1 && python3 $K $W/c35.ktdb $W/st2.ktdb $P PF=1 ST=2
python3 $K $W/c35.ktdb $W/both.ktdb $P PF=2 ST=2
for s in new pf2 st2 both; do
    timeout 45 python3 tests/device/gdn_prefill_check.py --lib $L --db $W/$s.ktdb > $R/prefill-check-$s.log 2>&1
    echo "prefill check ($s) rc=$? $(el)"
    grep -E "gdn_prefill_check:|FAIL|WRONG" $R/prefill-check-$s.log | head -4 | cut -c1-200
done
for i in 1 2; do
    for s in new old; do
        lib=$L; [ $s = old ] && lib=$OLD
        mkdir -p $R/$s$i
        OUT=$R/$s$i timeout 40 python3 tests/device/bench_gdn_prefill.py --lib $lib --db $W/$s.ktdb --profile \
            --rounds 5 --rows 1x16384/8 > $R/ab-$s$i.log 2>&1; echo "prefill $s run $i rc=$? $(el)"
        grep -v "^  " $R/ab-$s$i.log | cut -c1-160; grep -E "_wy|_out|_pair|st[12] " $R/ab-$s$i.log | cut -c1-150
    done
done
for s in pf2 st2 both; do
    mkdir -p $R/ab-$s
    OUT=$R/ab-$s timeout 60 python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/new.ktdb --ab $W/$s.ktdb --profile \
        --rounds 5 --rows 1x16384/8,1x16384/16 > $R/prefill-$s.log 2>&1; echo "prefill new vs $s rc=$? $(el)"
    grep -v "^  " $R/prefill-$s.log | cut -c1-200; grep -E "_pair|st[12] " $R/prefill-$s.log | cut -c1-150
done
gzip -9 $R/*.txt 2>/dev/null
call_end g1
