#!/bin/sh
# Eighteenth session, device call 5 (bench/NOTES.md, "Nothing read past the segment"): ab_attn.py,
# the d256 bf16 KD picks as they are (base) and with the loads and table reads of tiles past the
# segment skipped (tail), with each launch's timeline; the traces of both at 16/2/256 batch 8 32K.
set -u
. tests/device/env.sh
R=$OUT/c5; mkdir -p $R
L=out/carry/lib/libktrt.so
cfg() { for n in "$@"; do printf -- "--config %s=%s:out/carry/%s.ktdb " $n $L $n; done; }
AB="python3 tests/device/ab_attn.py $(cfg base tail) --rounds 15 --dtype bf16 --timeline --no-peers"
timeout 100 $AB --d 256 --g 8 --hkv 2 --batch 1,8 --ctx 32768,131072 > $R/a.log 2>&1; echo "16/2 rc=$? $(el)"
timeout 100 $AB --d 256 --g 6 --hkv 1 --batch 1,8 --ctx 4096,32768,131072 > $R/b.log 2>&1; echo "6/1 rc=$? $(el)"
timeout 60 $AB --d 256 --g 8 --hkv 2 --q 4 --batch 8 --ctx 32768 > $R/c.log 2>&1; echo "q4 rc=$? $(el)"
grep -hE "^(bf16|fp16)|   [a-z0-9]+ +[0-9.]+ us|timeline|WRONG|refused|failure" $R/[abc].log
for db in trace trace_tail; do
  T="python3 bench/results/2026-12-04-h200-s18/trace_read.py --lib $L --db out/carry/$db.ktdb"
  timeout 40 $T --d 256 --g 8 --hkv 2 --batch 8 --ctx 32768 > $R/t1-$db.log 2>&1; echo "t1 $db rc=$? $(el)"
done
tail -n 7 $R/t1-*.log
C="python3 tests/device/bench_attn.py --lib $L --db out/carry/tail.ktdb --check-only"
timeout 100 $C --tsv k1.tsv --dtype bf16 --d 256 --g 4,8 --hkv 2 --q 1,3,8 --batch 1,5,40 --ctx 100,1500,40000 --window 0,200 --sinks 0,1 > $R/k1.log 2>&1; echo "k1 rc=$? $(el)"
timeout 100 $C --tsv k2.tsv --bs 64 --replay-lengths --dtype bf16 --d 256 --g 6 --hkv 1 --q 1,4 --batch 1,3,24 --ctx 40000 --lens mixed > $R/k2.log 2>&1; echo "k2 rc=$? $(el)"
tail -qn 1 $R/k*.log
grep -h "WRONG" $R/k*.log | head
cp $OUT/*.tsv $R/ 2>/dev/null
tar czf $OUT/c5.tgz -C $OUT c5 && rm -rf $R
echo "done $(el)"
