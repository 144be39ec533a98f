#!/bin/sh
# Nineteenth session, device call 6 (bench/NOTES.md, "The start's prefetch as landed"): every sm_90a
# KD variant built as landed (new: tiles 1 and 2 prefetched at the start over 16-bit caches, tiles
# of up to 32 keys) against the same variants as at the session's start (old), the law choosing in
# each; the check grids on new (decode rows at q 1/3/8, windows, sinks, soft-cap, block size 64,
# d 64-512, fp16, graphs replayed with other lengths).
set -u
. tests/device/env.sh
R=$OUT/c6; mkdir -p $R
mkdir -p out/abr && xz -dc out/carry/kd_old.ktdb.xz > out/abr/old.ktdb && xz -dc out/carry/kd_sp2.ktdb.xz > out/abr/new.ktdb
L=out/carry/lib/libktrt.so
C="python3 tests/device/bench_attn.py --lib $L --db out/abr/new.ktdb --check-only"
timeout 100 $C --tsv k1.tsv --dtype bf16 --d 128,256 --g 6,8 --hkv 1 --q 1,3,8 --batch 1,2 --ctx 100,1500,5000,40000 --window 0,200 --sinks 0,1 --softcap 0,30 > $R/k1.log 2>&1; echo "k1 rc=$? $(el)"
timeout 100 $C --tsv k2.tsv --bs 64 --replay-lengths --dtype bf16 --d 256 --g 6 --hkv 1 --q 1,4 --batch 1,3,24 --ctx 40000,131072 --lens mixed --sinks 0,1 > $R/k2.log 2>&1; echo "k2 rc=$? $(el)"
timeout 100 $C --tsv k3.tsv --replay-lengths --dtype fp16,bf16 --d 64,512 --g 4 --hkv 2 --q 1,2 --batch 1,7 --ctx 300,9000,70000 --lens mixed --window 0,1000 > $R/k3.log 2>&1; echo "k3 rc=$? $(el)"
tail -qn 1 $R/k*.log
grep -h "WRONG" $R/k*.log | head
AB="python3 tests/device/ab_attn.py --config old=$L:out/abr/old.ktdb --config new=$L:out/abr/new.ktdb --rounds 11 --dtype bf16 --no-peers"
timeout 100 $AB --d 256 --g 8 --hkv 2 --batch 1,8,32 --ctx 32768 > $R/a.log 2>&1; echo "16/2 rc=$? $(el)"
timeout 100 $AB --d 256 --g 6 --hkv 1 --batch 1,8 --ctx 32768,131072 > $R/b.log 2>&1; echo "6/1 rc=$? $(el)"
timeout 100 $AB --d 128 --g 4 --hkv 8 --batch 1,8 --ctx 4096,32768 > $R/c.log 2>&1; echo "32/8 rc=$? $(el)"
timeout 100 $AB --d 256 --g 8 --hkv 2 --lens mixed --batch 3,8 --ctx 16384,65536 > $R/d.log 2>&1; echo "mixed rc=$? $(el)"
timeout 100 $AB --d 256 --g 4 --hkv 1 --q 1,4 --batch 1,8 --ctx 8192,32768 > $R/e.log 2>&1; echo "4/1 rc=$? $(el)"
grep -hE "^(bf16|fp16)|   [a-z0-9]+ +[0-9.]+ us|WRONG|refused|failure" $R/[abcde].log
cp $OUT/*.tsv $R/ 2>/dev/null
tar czf $OUT/c6.tgz -C $OUT c6 && rm -rf $R
echo "done $(el)"
