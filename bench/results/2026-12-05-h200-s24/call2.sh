#!/bin/sh
# Twenty-fourth session, device call 2 (bench/NOTES.md, "where the time goes"): the decode and
# prefill rows with each kernel's device time (torch.profiler) and the graph's launch floor, on the
# law with OB only where the grid needs it and z loaded a token ahead; the prefill's chunk-parallel
# launches with their loads grouped (out/c24) against the same rows on out/c23 (this session's
# decode, the prefill as call 1 ran it). Results: $OUT/p1.tgz. Carry out/lib out/c23 out/c24.
set -u
. tests/device/env.sh
R=$OUT/p1; mkdir -p $R
W=$(mktemp -d)
L=out/lib/libktrt.so
DB=$W/gdn_all.ktdb
xz -dc out/c24/gdn_all.ktdb.xz > $DB
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem --format=csv,noheader
timeout 60 python3 tests/device/gdn_check.py --lib $L --db $DB > $R/check.log 2>&1; echo "decode check rc=$? $(el)"
grep -E "gdn_check:|WRONG|fail" $R/check.log | head -4 | cut -c1-200
OUT=$R timeout 90 python3 tests/device/bench_gdn.py --lib $L --db $DB --rounds 7 --profile > $R/bench.log 2>&1; echo "decode bench rc=$? $(el)"
grep -v "kernel " $R/bench.log | cut -c1-170
grep "kernel " $R/bench.log | grep "/1/\|/128/" | cut -c1-150
OUT=$R timeout 100 python3 tests/device/bench_gdn_prefill.py --lib $L --db $DB --profile \
    --rows 1x16384/8,8x2048/8,1x65536/8,1x16384/16 > $R/prefill-bench.log 2>&1; echo "prefill bench rc=$? $(el)"
cut -c1-220 $R/prefill-bench.log
xz -dc out/c23/gdn_all.ktdb.xz > $W/c23.ktdb
timeout 60 python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/c23.ktdb --profile \
    --rows 1x16384/8,8x2048/8 > $R/prefill-bench-c23.log 2>&1; echo "prefill bench c23 rc=$? $(el)"
cut -c1-220 $R/prefill-bench-c23.log
timeout 60 python3 tests/device/gdn_prefill_check.py --lib $L --db $DB > $R/prefill-check.log 2>&1; echo "prefill check rc=$? $(el)"
grep -E "gdn_prefill_check:|WRONG|fail" $R/prefill-check.log | head -8 | cut -c1-200
rm -rf $W
tar czf $OUT/p1.tgz -C $OUT p1 && rm -rf $R
echo "profile done $(el)"
