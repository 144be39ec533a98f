#!/bin/sh
# Seventeenth session, device call 3 (bench/NOTES.md, "fp8 with the keys split over the warps"):
# ab_attn.py, fp8 d128 on decode.hip's ring e against seven decode_ws.hip forms (w1-w7), 32/8/128
# batch 8 at 32K and 128K, then d256 at 16/2/256 batch 8 32K (e's database: decode.hip BN32 NW4);
# the decode_ws fp8 kernels' check grids (d128 and d256).
set -u
. tests/device/env.sh
R=$OUT/c3; mkdir -p $R
L=out/lib/libktrt.so
cfg() { for n in "$@"; do printf -- "--config %s=%s:out/ab3/%s.ktdb " $n $L $n; done; }
timeout 200 python3 tests/device/ab_attn.py $(cfg e w1 w2 w3 w4 w5 w6 w7) --rounds 11 --dtype bf16_e4m3 --d 128 --g 4 --hkv 8 --batch 8 --ctx 32768,131072 > $R/ab128.log 2>&1; echo "ab128 rc=$? $(el)"
timeout 80 python3 tests/device/ab_attn.py $(cfg e w1 w2 w3 w4) --rounds 11 --dtype bf16_e4m3 --d 256 --g 8 --hkv 2 --batch 8 --ctx 32768 --no-peers > $R/ab256.log 2>&1; echo "ab256 rc=$? $(el)"
grep -hE "^(bf16|fp16)|   [a-z0-9]+ +[0-9.]+ us|WRONG|refused|failure" $R/ab*.log
for n in w1 w3 w2 w4; do
  C="python3 tests/device/bench_attn.py --lib $L --db out/ab3/$n.ktdb --check-only --tsv chk-$n.tsv"
  timeout 50 $C --dtype bf16_e4m3 --d 128,256 --g 4 --hkv 2 --q 1,3,8 --batch 1,5,40 --ctx 100,1500 --window 0,40,200 --softcap 0,30 --sinks 0,1 > $R/check1-$n.log 2>&1; echo "check1 $n rc=$? $(el)"
  timeout 50 $C --replay-lengths --bs 64 --dtype bf16_e4m3 --d 128,256 --g 4 --hkv 8 --q 1 --batch 1,2,8,32 --ctx 1000,131072 --lens mixed --sinks 0,1 > $R/check2-$n.log 2>&1; echo "check2 $n rc=$? $(el)"
done
for f in $R/check*.log; do echo "$(basename $f): $(tail -n 1 $f)"; done
grep -h "WRONG" $R/check*.log | head
tar czf $OUT/c3.tgz -C $OUT c3 && rm -rf $R
echo "done $(el)"
