#!/bin/sh
# Eighteenth session, device call 4 (bench/NOTES.md, "Two tiers of segments"): ab_attn.py, the bf16
# KD picks as they are (base), with the law's occupancy doubled in the database (eq2: two waves of
# equal segments) and with two tiers (tier10 / tier20: -DKT_TIER=f, the first half of the doubled
# segments share 100 - f % of a row's keys, the second half f %, dispatched after them); the
# traces of base and tier10 at 16/2/256 batch 8 32K; tier10's check grid.
set -u
. tests/device/env.sh
R=$OUT/c4; mkdir -p $R
L=out/carry/lib/libktrt.so
cfg() { for n in "$@"; do printf -- "--config %s=%s:out/carry/%s.ktdb " $n $L $n; done; }
AB="python3 tests/device/ab_attn.py $(cfg base eq2 tier10 tier20) --rounds 15 --dtype bf16"
timeout 100 $AB --d 256 --g 8 --hkv 2 --batch 8 --ctx 32768,131072 --no-peers > $R/a.log 2>&1; echo "16/2 rc=$? $(el)"
timeout 100 $AB --d 256 --g 6 --hkv 1 --batch 8 --ctx 32768,131072 --no-peers > $R/b.log 2>&1; echo "6/1 rc=$? $(el)"
timeout 100 $AB --d 128 --g 4 --hkv 8 --batch 8 --ctx 32768 > $R/c.log 2>&1; echo "32/8 rc=$? $(el)"
grep -hE "^(bf16|fp16)|   [a-z0-9]+ +[0-9.]+ us|WRONG|refused|failure" $R/[abc].log
for db in trace trace_t10; do
  T="python3 bench/results/2026-12-04-h200-s18/trace_read.py --lib $L --db out/carry/$db.ktdb"
  timeout 40 $T --d 256 --g 8 --hkv 2 --batch 8 --ctx 32768 > $R/t1-$db.log 2>&1; echo "t1 $db rc=$? $(el)"
done
cat $R/t1-*.log
C="python3 tests/device/bench_attn.py --lib $L --db out/carry/tier10.ktdb --check-only"
timeout 100 $C --tsv k1.tsv --dtype bf16 --d 128,256 --g 4,8 --hkv 2 --q 1,3,8 --batch 1,5,40 --ctx 100,1500,40000 --window 0,200 --sinks 0,1 > $R/k1.log 2>&1; echo "k1 rc=$? $(el)"
tail -qn 1 $R/k*.log
grep -h "WRONG" $R/k*.log | head
cp $OUT/*.tsv $R/ 2>/dev/null
tar czf $OUT/c4.tgz -C $OUT c4 && rm -rf $R
echo "done $(el)"
