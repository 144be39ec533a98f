#!/bin/sh
# Seventeenth session, device call 7 (bench/NOTES.md, "Waves of segments"): ab_attn.py, the bf16
# KD picks with the occupancy the law reads at 1x (w1, as compiled) to 4x (w4), so the law's
# segments fill one to four waves; 16/2/256, 6/1/256 and 32/8/128 batch 8 at 32K, and 6/1/256 at
# 128K; a check grid on w3.
set -u
. tests/device/env.sh
R=$OUT/c7; mkdir -p $R
L=out/lib/libktrt.so
cfg() { for n in "$@"; do printf -- "--config %s=%s:out/ab6/%s.ktdb " $n $L $n; done; }
AB="python3 tests/device/ab_attn.py $(cfg w1 w2 w3 w4) --rounds 15 --dtype bf16 --batch 8 --no-peers"
timeout 60 $AB --d 256 --g 8 --hkv 2 --ctx 32768 > $R/a.log 2>&1; echo "16/2 rc=$? $(el)"
timeout 60 $AB --d 256 --g 6 --hkv 1 --ctx 32768,131072 > $R/b.log 2>&1; echo "6/1 rc=$? $(el)"
timeout 60 $AB --d 128 --g 4 --hkv 8 --ctx 32768 > $R/c.log 2>&1; echo "32/8 rc=$? $(el)"
grep -hE "^(bf16|fp16)|   [a-z0-9]+ +[0-9.]+ us|WRONG|refused|failure" $R/*.log
C="python3 tests/device/bench_attn.py --lib $L --db out/ab6/w3.ktdb --check-only --tsv chk.tsv"
timeout 60 $C --dtype bf16 --d 128,256 --g 4,8 --hkv 2 --q 1,3 --batch 1,5,40 --ctx 100,1500,40000 --window 0,200 --sinks 0,1 > $R/check.log 2>&1; echo "check rc=$? $(el)"
tail -n 1 $R/check.log
tar czf $OUT/c7.tgz -C $OUT c7 && rm -rf $R
echo "done $(el)"
