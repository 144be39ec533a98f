#!/bin/sh
# Eighteenth session, device call 3 (bench/NOTES.md, "A tile more in flight"): ab_attn.py, the
# bf16 KD picks as they are (base) and with PF (-DKT_PF=1: each block's next-but-one tile's K and
# V lines prefetched into L2), cuDNN in the 32/8/128 rows; the traces of both at the 90% rows; the
# PF kernels' check grid.
set -u
. tests/device/env.sh
R=$OUT/c3; mkdir -p $R
L=out/carry/lib/libktrt.so
AB="python3 tests/device/ab_attn.py --config base=$L:out/carry/base.ktdb --config pf=$L:out/carry/pf.ktdb --rounds 15 --dtype bf16"
timeout 90 $AB --d 256 --g 8 --hkv 2 --batch 8 --ctx 32768,131072 --no-peers > $R/a.log 2>&1; echo "16/2 rc=$? $(el)"
timeout 120 $AB --d 256 --g 6 --hkv 1 --batch 1,8 --ctx 32768,131072 --no-peers > $R/b.log 2>&1; echo "6/1 rc=$? $(el)"
timeout 90 $AB --d 128 --g 4 --hkv 8 --batch 8 --ctx 32768,131072 > $R/c.log 2>&1; echo "32/8 rc=$? $(el)"
timeout 60 $AB --d 256 --g 2 --hkv 4 --batch 8,32 --ctx 32768 --no-peers > $R/d.log 2>&1; echo "8/4 rc=$? $(el)"
grep -hE "^(bf16|fp16)|   [a-z0-9]+ +[0-9.]+ us|WRONG|refused|failure" $R/[abcd].log
for db in trace trace_pf; do
  T="python3 bench/results/2026-12-04-h200-s18/trace_read.py --lib $L --db out/carry/$db.ktdb"
  timeout 40 $T --d 256 --g 8 --hkv 2 --batch 8 --ctx 32768 > $R/t1-$db.log 2>&1; echo "t1 $db rc=$? $(el)"
  timeout 40 $T --d 256 --g 6 --hkv 1 --batch 8 --ctx 32768 > $R/t3-$db.log 2>&1; echo "t3 $db rc=$? $(el)"
done
tail -n 7 $R/t*.log
C="python3 tests/device/bench_attn.py --lib $L --db out/carry/pf.ktdb --check-only"
timeout 100 $C --tsv k1.tsv --dtype bf16 --d 128,256 --g 4,8 --hkv 2 --q 1,3,8 --batch 1,5,40 --ctx 100,1500,40000 --window 0,200 --sinks 0,1 --softcap 0,30 > $R/k1.log 2>&1; echo "k1 rc=$? $(el)"
timeout 100 $C --tsv k2.tsv --bs 64 --replay-lengths --dtype bf16 --d 128,256 --g 6 --hkv 1 --q 1,4 --batch 1,3,24 --ctx 40000 --lens mixed > $R/k2.log 2>&1; echo "k2 rc=$? $(el)"
tail -qn 1 $R/k*.log
grep -h "WRONG" $R/k*.log | head
cp $OUT/*.tsv $R/ 2>/dev/null
tar czf $OUT/c3.tgz -C $OUT c3 && rm -rf $R
echo "done $(el)"
