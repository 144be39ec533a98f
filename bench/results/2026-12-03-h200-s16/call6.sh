#!/bin/sh
# Sixteenth session, device call 6 (bench/NOTES.md, "fp8 at d128 with 128-key tiles"): ab_attn.py,
# fp8 d128 KR register form BN64 NW4 (the tuned pick) against BN128 NW4, each database also holding
# the bf16 pick (KD BN32 NW4 OB4); 32/8/128 batch 8 at 32K and 128K; then BN128's check grids.
set -u
. tests/device/env.sh
R=$OUT/c6; mkdir -p $R
L=out/lib/libktrt.so
AB="timeout 150 python3 tests/device/ab_attn.py --config b64=$L:out/ab4/fb64.ktdb --config b128=$L:out/ab4/fb128.ktdb --rounds 12"
$AB --dtype bf16_e4m3,bf16 --d 128 --g 4 --hkv 8 --batch 8 --ctx 32768,131072 > $R/ab.log 2>&1; echo "ab rc=$? $(el)"
grep -hE "^(bf16|fp16)|   [a-z0-9]+ +[0-9.]+ us|WRONG|refused|failure" $R/ab.log
C="python3 tests/device/bench_attn.py --lib $L --db out/ab4/fb128.ktdb --check-only"
timeout 60 $C --dtype bf16_e4m3 --d 128 --g 4 --hkv 2 --q 1,3 --batch 1,5,40 --ctx 100,1500 --window 0,40,200 --softcap 0,30 --sinks 0,1 > $R/check1.log 2>&1; echo "check1 rc=$? $(el)"
timeout 60 $C --replay-lengths --bs 64 --dtype bf16_e4m3 --d 128 --g 4 --hkv 8 --q 1 --batch 1,2,8,32 --ctx 1000,131072 --lens mixed --sinks 0,1 > $R/check2.log 2>&1; echo "check2 rc=$? $(el)"
tail -qn 1 $R/check*.log
grep -h "WRONG" $R/check*.log | head
tar czf $OUT/c6.tgz -C $OUT c6 && rm -rf $R
echo "done $(el)"
