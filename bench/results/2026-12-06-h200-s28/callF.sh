#!/bin/sh
# Twenty-eighth session, device call F (after callE.sh): batch 128 x hv 32 (BV 32 against BV 128,
# cold and hot) and the state pass's and _wy's SASS stall samples (c34, PF 1).
# Carry out/lib_e out/c34. Results: $OUT/f1.tgz.
set -u
. tests/device/env.sh
call_begin f1
L=out/lib_e/libktrt.so
xz -dc out/c34/gdn_all.ktdb.xz > $W/c34.ktdb
python3 bench/results/2026-12-05-h200-s26/keep_bv.py $W/c34.ktdb $W/bv32.ktdb 32
python3 bench/results/2026-12-05-h200-s25/pick.py $W/c34.ktdb $W/new.ktdb 64 16 8 1
mkdir -p $R/b128
OUT=$R/b128 timeout 80 python3 tests/device/bench_gdn.py --lib $L --db $W/c34.ktdb --ab $W/bv32.ktdb --rounds 5 \
    --hv 32 --batch 128 --tokens 1 --regime cold,hot > $R/bench128.log 2>&1; echo "decode bench 128 rc=$? $(el)"
cut -c1-200 $R/bench128.log
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
B="python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/new.ktdb --rows 1x16384/8 --rounds 1 --launches 1"
timeout 100 $NCU --section SourceCounters --section WarpStateStats --section Occupancy --section SpeedOfLight \
    --page source --print-source sass -k regex:"_wy\$|pf1\$" -c 2 $B > $R/prefill-sass.txt 2>&1
echo "ncu prefill sass rc=$? $(wc -l < $R/prefill-sass.txt) $(el)"
gzip -9 $R/*.txt 2>/dev/null
call_end f1
