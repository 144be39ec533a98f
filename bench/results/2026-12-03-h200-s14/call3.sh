#!/bin/sh
# Fourteenth session, device call 3 (bench/NOTES.md, "S in e4m3 (F8)"): decode.hip's F8 form
# checked against the float64 reference through libktrt on a database whose only fp8 kernels are
# F8 ones (so the law serves every fp8 problem with one): windows, soft-cap, sinks, q 1-8, block
# size 64, batches to 96, mixed lengths to 128K, graphs replayed with other lengths; then the fp8
# rows timed for the record (sm_90's mma.sync e4m3 is software: no gain is expected here).
set -u
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
R=$OUT/c3; mkdir -p $R
export PYTHONUNBUFFERED=1
gunzip -kf out/ab/f8v.ktdb.gz
L=out/lib/libktrt.so
C="python3 tests/device/bench_attn.py --lib $L --db out/ab/f8v.ktdb --check-only"
timeout 80 $C --dtype bf16_e4m3 --d 128 --g 4 --hkv 2 --q 1,3 --batch 1,5,40 --ctx 100,1500 --window 0,40,64 --softcap 0,30 --sinks 0,1 > $R/check1.log 2>&1; echo "check1 rc=$? $(el) s"
timeout 80 $C --bs 64 --dtype bf16_e4m3 --d 256 --g 8 --hkv 2 --q 1,4,8 --batch 1,4,9,33 --ctx 3000,40000 --window 0,1000 --sinks 0,1 > $R/check2.log 2>&1; echo "check2 rc=$? $(el) s"
timeout 80 $C --replay-lengths --dtype bf16_e4m3 --d 256 --g 6 --hkv 1 --q 1,4 --batch 1,3,24,96 --ctx 40000 --lens mixed --sinks 0,1 > $R/check3.log 2>&1; echo "check3 rc=$? $(el) s"
timeout 80 $C --replay-lengths --dtype bf16_e4m3 --d 128 --g 4 --hkv 8 --q 1 --batch 1,2,8,32 --ctx 1000,131072 --lens mixed > $R/check4.log 2>&1; echo "check4 rc=$? $(el) s"
timeout 80 $C --dtype bf16_e4m3 --d 256 --g 2 --hkv 4 --q 1,2 --batch 2,17 --ctx 5000 --softcap 0,50 --window 0,4096 > $R/check5.log 2>&1; echo "check5 rc=$? $(el) s"
tail -qn 1 $R/check*.log
grep -h "WRONG\|refused" $R/check*.log | head
grep -h "kt_attn" $R/check2.log | grep -o "kt_attn_decode_[a-z0-9_]*" | sort | uniq -c | head
B="timeout 100 python3 tests/device/bench_attn.py --lib $L --db out/ab/f8v.ktdb --lens equal --rounds 9"
OUT=$R $B --tsv t.tsv --dtype bf16_e4m3 --d 256,128 --g 8 --hkv 2 --q 1 --batch 8 --ctx 32768 > $R/time.log 2>&1; echo "time rc=$? $(el) s"
grep -E "^(bf16|fp16)" $R/time.log | cut -c1-170
tar czf $OUT/c3.tgz -C $OUT c3 && rm -rf $R
echo "done $(el) s"
