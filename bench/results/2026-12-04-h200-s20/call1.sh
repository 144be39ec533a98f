#!/bin/sh
# Twentieth session, device call 1 (bench/NOTES.md, "a row group's warps split S by keys"): the
# check grids on every sm_90a KX 1 prefill kernel (bf16, bf16_e4m3; d128, d256), the law choosing
# among them; prefill A/B (base: BM64 NW4 / BM128 NW8 BN64 WD1; kx: their WD2 KX1 twins) with flash
# and cuDNN beside; q 8 against q 1 at 16/2/256 batch 8 32K on base, kx and kx8 (BM64 NW8 KX1).
set -u
. tests/device/env.sh
R=$OUT/c1; mkdir -p $R
export PYTHONUNBUFFERED=1
A=out/c20
for f in $A/*.ktdb.xz; do xz -dc $f > ${f%.xz}; done
L=$A/lib/libktrt.so
C="python3 tests/device/bench_prefill.py --lib $L --check-only --db $A/chk.ktdb"
timeout 80 $C --dtype bf16,bf16_e4m3 --geom 16/2/256,32/8/128,6/1/256 --tokens 16,200,3000 --prefix 0,32752 > $R/check1.log 2>&1; echo "check1 rc=$? $(el)"
timeout 50 $C --dtype bf16 --geom 16/2/256,8/4/256 --tokens 200,3000 --prefix 0,5000 --window 1000 --bs 64 > $R/check2.log 2>&1; echo "check2 rc=$? $(el)"
CA="python3 tests/device/bench_attn.py --lib $L --db $A/chk.ktdb --check-only"
timeout 60 $CA --replay-lengths --dtype bf16,bf16_e4m3 --d 256 --g 8 --hkv 2 --q 4,8 --batch 1,3,9 --ctx 40000 --lens mixed --sinks 0,1 > $R/check3.log 2>&1; echo "check3 rc=$? $(el)"
timeout 50 $CA --bs 64 --dtype bf16 --d 128 --g 4 --hkv 2 --q 2,8 --batch 1,5 --ctx 3000 --lens mixed --window 0,1000 --softcap 0,30 > $R/check4.log 2>&1; echo "check4 rc=$? $(el)"
tail -qn 1 $R/check*.log
grep -h "WRONG\|refused\|failed" $R/check*.log | head
P="timeout 200 python3 tests/device/bench_prefill.py --lib $L --rounds 7 --db $A/pbase.ktdb --ab kx=$A/pkx.ktdb"
OUT=$R $P --tsv pf.tsv --geom 6/1/256,16/2/256,8/4/256 --tokens 32768,4096 > $R/pf.log 2>&1; echo "prefill A/B rc=$? $(el)"
grep -hE "^bf16 |^   (ours|kx|cudnn|flash)" $R/pf.log | cut -c1-130
AB="timeout 120 python3 tests/device/ab_attn.py --config base=$L:$A/pbase.ktdb --config kx=$L:$A/pkx.ktdb --config kx8=$L:$A/pkx8.ktdb --config kx32=$L:$A/pkx32.ktdb --rounds 15 --no-peers"
$AB --dtype bf16 --d 256 --g 8 --hkv 2 --q 8,1 --batch 8 --ctx 32768 > $R/ab-q8.log 2>&1; echo "ab q8 rc=$? $(el)"
grep -hE "^(bf16|fp16)|   [a-z0-9]+ +[0-9.]+ us|WRONG|refused|failure" $R/ab-q8.log
tar czf $OUT/c1.tgz -C $OUT c1 && rm -rf $R
echo "done $(el)"
