#!/bin/sh
# Twentieth session, device call 2 (bench/NOTES.md, "the ratio bars paired a round"): ratio_attn.py,
# every ratio bar's rows replayed in each round and each ratio taken within its round, 41 rounds,
# twice: rt = the tuned fp8 d128 pick (decode_ws BN32 NW2 ST2), re = the ring e (decode.hip BN64
# NW4 ST2), both with the bf16 KD picks, fp8 d256 BN32 NW4 and prefill.hip BM64 / BM128 BN64 (q 8).
# Then prefill at 6/1/256 and 16/2/256 32K against flash, 15 rounds; and q 8 / q 4 on KX forms at 16
# warps a unit (rk32: BM64 BN32 NW8 WD2 KX1, 128 registers; rk64: BM64 BN64 NW8 WD2 KX1 OB2, 128
# registers with an 8-byte spill, forced) against re's BM64 BN64 NW4 (8 warps a unit), ab_attn.py.
set -u
. tests/device/env.sh
R=$OUT/c2; mkdir -p $R
A=out/c20
for f in $A/*.ktdb.xz; do xz -dc $f > ${f%.xz}; done
L=$A/lib/libktrt.so
ROWS="--row q1=bf16,256,8,2,1,8,32768 --row q4=bf16,256,8,2,4,8,32768 --row q8=bf16,256,8,2,8,8,32768
 --row c4k=bf16,256,8,2,1,8,4096 --row w128k=bf16,256,8,2,1,8,131072,4096
 --row b128=bf16,128,4,8,1,8,32768 --row f128=bf16_e4m3,128,4,8,1,8,32768 --row f256=bf16_e4m3,256,8,2,1,8,32768
 --ratio q8/q1 --ratio q4/q1 --ratio w128k/c4k --ratio b128/f128 --ratio q1/f256"
for db in rt re; do for i in 1 2; do
timeout 150 python3 tests/device/ratio_attn.py --lib $L --db $A/$db.ktdb --rounds 41 $ROWS > $R/$db-$i.log 2>&1; echo "$db $i rc=$? $(el)"
done; done
for f in $R/r*.log; do echo "== $(basename $f)"; grep -vE "^(q1|q4|q8|c4k|w128k|b128|f128|f256) " $f; done
grep -h "err" $R/rt-1.log $R/re-1.log | cut -c1-160
timeout 200 python3 tests/device/bench_prefill.py --lib $L --rounds 15 --db $A/re.ktdb --geom 6/1/256,16/2/256 --tokens 32768 --tsv pf.tsv > $R/pf.log 2>&1; echo "prefill rc=$? $(el)"
grep -hE "^bf16 |^   (ours|cudnn|flash)" $R/pf.log | cut -c1-130
AB="timeout 120 python3 tests/device/ab_attn.py --config base=$L:$A/re.ktdb --config k32=$L:$A/rk32.ktdb --config k64=$L:$A/rk64.ktdb --rounds 15 --no-peers"
$AB --dtype bf16 --d 256 --g 8 --hkv 2 --q 8,4 --batch 8 --ctx 32768 > $R/ab-q8.log 2>&1; echo "ab q8 rc=$? $(el)"
grep -hE "^(bf16|fp16)|   [a-z0-9]+ +[0-9.]+ us|WRONG|refused|failure" $R/ab-q8.log
tar czf $OUT/c2.tgz -C $OUT c2 && rm -rf $R
echo "done $(el)"
