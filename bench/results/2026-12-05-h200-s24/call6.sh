#!/bin/sh
# Next session's first call (prepared in the twenty-fourth, bench/NOTES.md "next attempts" 1):
# Nsight Compute's per-instruction view (SASS, warp-stall samples an instruction) of the decode
# step at batch 1 x hv 8 and of the prefill's four launches at one 16K sequence, hv 8, so that the
# next change is predicted from where the warps wait rather than from a model.
# Carry out/lib and the folder named by CARRY_DIR (default out/c24). Results: $OUT/n2.tgz.
set -u
. tests/device/env.sh
R=$OUT/n2; mkdir -p $R
W=$(mktemp -d)
L=out/lib/libktrt.so
DB=$W/gdn_all.ktdb
xz -dc ${CARRY_DIR:-out/c24}/gdn_all.ktdb.xz > $DB
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
S="--section WarpStateStats --section SourceCounters --section SchedulerStats --page source --print-source sass"
timeout 150 $NCU $S -k regex:kt_gdn_decode -c 1 python3 tests/device/bench_gdn.py --lib $L --db $DB \
    --hv 8 --batch 1 --tokens 1 --regime hot --rounds 1 --launches 1 > $R/ncu-decode-sass.txt 2>&1; echo "ncu decode rc=$? $(el)"
wc -l $R/ncu-decode-sass.txt
timeout 240 $NCU $S -k regex:kt_gdn_prefill -c 4 python3 tests/device/bench_gdn_prefill.py --lib $L --db $DB \
    --rows 1x16384/8 --rounds 1 --launches 1 > $R/ncu-prefill-sass.txt 2>&1; echo "ncu prefill rc=$? $(el)"
wc -l $R/ncu-prefill-sass.txt
rm -rf $W
tar czf $OUT/n2.tgz -C $OUT n2 && rm -rf $R
echo "done $(el)"
