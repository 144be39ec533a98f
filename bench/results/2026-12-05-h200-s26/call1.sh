#!/bin/sh
# Twenty-sixth session, device call 1 (bench/NOTES.md, "a head over several blocks"): the decode
# chains on the law's picks (the split norm's BV 32 forms at batch 1 and 8), then the decode rows
# against the same database without the narrower forms (the law then takes BV 128 as before), in the
# same rounds (bench_gdn --ab); batch 128 x hv 32 on the law's BV 128 against BV 32 forms (many
# small blocks an SM, the state's stream overlapping other blocks' compute); then the twenty-fifth
# session's call 7 (the prefill's template checked), the state pass's loads two chunks ahead (PF 2)
# against one, and _out's paired words against out/c31's elements. Carry out/lib out/c31 out/c32.
# Results: $OUT/s1.tgz.
set -u
. tests/device/env.sh
call_begin s1
DB=$W/c32.ktdb
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
xz -dc out/c32/gdn_all.ktdb.xz > $DB
K=bench/results/2026-12-05-h200-s26/keep_bv.py
python3 $K $DB $W/bv128.ktdb 128 && python3 $K $DB $W/bv32.ktdb 32
timeout 60 python3 tests/device/gdn_check.py --lib $L --db $DB > $R/check.log 2>&1; echo "decode check rc=$? $(el)"
grep -E "gdn_check:|WRONG|fail" $R/check.log | head -4 | cut -c1-200
OUT=$R timeout 150 python3 tests/device/bench_gdn.py --lib $L --db $DB --ab $W/bv128.ktdb --rounds 9 --profile \
    --hv 8,32 --batch 1,8,32 --tokens 1,4 --regime hot > $R/bench.log 2>&1; echo "decode bench rc=$? $(el)"
grep -v "kernel " $R/bench.log | cut -c1-200
grep "kernel " $R/bench.log | cut -c1-150
mkdir -p $R/b128
OUT=$R/b128 timeout 100 python3 tests/device/bench_gdn.py --lib $L --db $DB --ab $W/bv32.ktdb --rounds 7 \
    --hv 32 --batch 128 --tokens 1 --regime cold,hot > $R/bench128.log 2>&1; echo "decode bench 128 rc=$? $(el)"
cut -c1-200 $R/bench128.log
timeout 60 python3 tests/device/gdn_prefill_check.py --lib $L --db $DB > $R/prefill-check.log 2>&1; echo "prefill check rc=$? $(el)"
grep -E "gdn_prefill_check:|FAIL|WRONG" $R/prefill-check.log | head -6 | cut -c1-200
# the prefill: the law's form (bt64 bv16 nw8) at PF 1 against PF 2, and against the twenty-fifth
# session's last kernels (out/c31: _out an element at a time), each pair in the same rounds
P=bench/results/2026-12-05-h200-s25/pick.py
python3 $P $DB $W/pf1.ktdb 64 16 8 1 && python3 $P $DB $W/pf2.ktdb 64 16 8 2
xz -dc out/c31/gdn_all.ktdb.xz > $W/c31.ktdb
mkdir -p $R/pf $R/c31
OUT=$R/pf timeout 120 python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/pf1.ktdb --ab $W/pf2.ktdb --profile \
    --rounds 5 --rows 1x16384/8,1x65536/8,1x16384/16 > $R/prefill-pf.log 2>&1; echo "prefill pf1/pf2 rc=$? $(el)"
grep -v "^  " $R/prefill-pf.log | cut -c1-200; grep -E "_wy|_out|_prep|pf[12] " $R/prefill-pf.log | cut -c1-150
OUT=$R/c31 timeout 60 python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/c31.ktdb --ab $W/pf1.ktdb --profile \
    --rounds 5 --rows 1x16384/8 > $R/prefill-c31.log 2>&1; echo "prefill c31/pf1 rc=$? $(el)"
grep -v "^  " $R/prefill-c31.log | cut -c1-200; grep -E "_out" $R/prefill-c31.log | cut -c1-150
call_end s1
