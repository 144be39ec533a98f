#!/bin/sh
# Seventeenth session, device call 1 (bench/NOTES.md, "KR from the ring"): ab_attn.py, the fp8
# register form's pick (cur) against seven d128 rings (a-g), 32/8/128 batch 8 at 32K and 128K, the
# bf16 pick in the same rounds; four d256 rings at 16/2/256 batch 8 32K; the rings' check grids;
# bf16 32/8/128 on an ordered block table against a random one.
set -u
. tests/device/env.sh
R=$OUT/c1; mkdir -p $R
L=out/lib/libktrt.so
cfg() { for n in "$@"; do printf -- "--config %s=%s:out/ab1/%s.ktdb " $n $L $n; done; }
timeout 230 python3 tests/device/ab_attn.py $(cfg cur a b c d e f g) --rounds 11 --dtype bf16_e4m3 --d 128 --g 4 --hkv 8 --batch 8 --ctx 32768,131072 > $R/ab128.log 2>&1; echo "ab128 rc=$? $(el)"
grep -hE "^(bf16|fp16)|   [a-z0-9]+ +[0-9.]+ us|WRONG|refused|failure" $R/ab128.log
timeout 80 python3 tests/device/ab_attn.py $(cfg cur a b c d) --rounds 11 --dtype bf16_e4m3,bf16 --d 256 --g 8 --hkv 2 --batch 8 --ctx 32768 --no-peers > $R/ab256.log 2>&1; echo "ab256 rc=$? $(el)"
grep -hE "^(bf16|fp16)|   [a-z0-9]+ +[0-9.]+ us|WRONG|refused|failure" $R/ab256.log
for n in a c e; do
  C="python3 tests/device/bench_attn.py --lib $L --db out/ab1/$n.ktdb --check-only --tsv chk-$n.tsv"
  timeout 50 $C --dtype bf16_e4m3 --d 128,256 --g 4 --hkv 2 --q 1,3,8 --batch 1,5,40 --ctx 100,1500 --window 0,40,200 --softcap 0,30 --sinks 0,1 > $R/check1-$n.log 2>&1; echo "check1 $n rc=$? $(el)"
  timeout 50 $C --replay-lengths --bs 64 --dtype bf16_e4m3 --d 128,256 --g 4 --hkv 8 --q 1 --batch 1,2,8,32 --ctx 1000,131072 --lens mixed --sinks 0,1 > $R/check2-$n.log 2>&1; echo "check2 $n rc=$? $(el)"
done
tail -qn 1 $R/check*.log
grep -h "WRONG" $R/check*.log | head
B="python3 tests/device/bench_attn.py --lib $L --db out/ab1/cur.ktdb --dtype bf16 --d 128 --g 4 --hkv 8 --q 1 --batch 8 --ctx 32768 --lens equal --rounds 11"
timeout 60 $B --table ordered --tsv ord.tsv > $R/ordered.log 2>&1; echo "ordered rc=$? $(el)"
timeout 60 $B --table random --tsv rnd.tsv > $R/random.log 2>&1; echo "random rc=$? $(el)"
grep -hE "^   (ours|cudnn|flash)" $R/ordered.log $R/random.log
cp $OUT/*.tsv $R/ 2>/dev/null
tar czf $OUT/c1.tgz -C $OUT c1 && rm -rf $R
echo "done $(el)"
