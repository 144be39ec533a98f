#!/bin/sh
# Eighteenth session, device call 2 (bench/NOTES.md, "Inside the main kernel"): the bf16 KD picks
# built with trace.patch (-DKT_TRACE), each block's timeline from trace_read.py at the rows the
# 90% bar misses and at their neighbours.
set -u
. tests/device/env.sh
R=$OUT/c2; mkdir -p $R
L=out/carry/lib/libktrt.so
T="python3 bench/results/2026-12-04-h200-s18/trace_read.py --lib $L --db out/carry/trace.ktdb"
timeout 60 $T --d 256 --g 8 --hkv 2 --batch 8 --ctx 32768 > $R/t1.log 2>&1; echo "t1 rc=$? $(el)"
timeout 60 $T --d 256 --g 8 --hkv 2 --batch 8 --ctx 8192 > $R/t2.log 2>&1; echo "t2 rc=$? $(el)"
timeout 60 $T --d 256 --g 6 --hkv 1 --batch 8 --ctx 32768 > $R/t3.log 2>&1; echo "t3 rc=$? $(el)"
timeout 60 $T --d 256 --g 6 --hkv 1 --batch 1 --ctx 32768 > $R/t4.log 2>&1; echo "t4 rc=$? $(el)"
timeout 60 $T --d 128 --g 4 --hkv 8 --batch 8 --ctx 32768 > $R/t5.log 2>&1; echo "t5 rc=$? $(el)"
timeout 60 $T --d 256 --g 8 --hkv 2 --batch 8 --ctx 131072 > $R/t6.log 2>&1; echo "t6 rc=$? $(el)"
cat $R/t*.log
tar czf $OUT/c2.tgz -C $OUT c2 && rm -rf $R
echo "done $(el)"
