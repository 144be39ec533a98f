#!/bin/sh
# Twenty-fifth session, device call 4 (bench/NOTES.md, "units, not tiles"): the state pass whose
# key splits reduce-scatter their partial vn^T by units (a lane's four accumulator elements of a
# token tile) so that every warp sums the same share (out/c27), against call 3's (out/c26) on the
# same libktrt in the same run; checked on the law's pick and two other forms; five forms timed;
# Nsight Compute's per-instruction view of the new state pass and (sampled every 32 cycles) of the
# decode step at batch 1 x hv 8. Carry out/lib out/c26 out/c27. Results: $OUT/a4.tgz.
set -u
. tests/device/env.sh
R=$OUT/a4; mkdir -p $R
W=$(mktemp -d)
L=out/lib/libktrt.so
P=bench/results/2026-12-05-h200-s25/pick.py
DB=$W/gdn_all.ktdb
xz -dc out/c27/gdn_all.ktdb.xz > $DB
xz -dc out/c26/gdn_all.ktdb.xz > $W/c26.ktdb
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem --format=csv,noheader
timeout 100 python3 tests/device/gdn_prefill_check.py --lib $L --db $DB > $R/check-law.log 2>&1; echo "check law rc=$? $(el)"
grep -E "gdn_prefill_check:|FAIL|WRONG" $R/check-law.log | head -8 | cut -c1-200
timeout 110 python3 tests/device/bench_gdn_prefill.py --lib $L --db $DB --profile \
    --rows 1x16384/8,8x2048/8,1x65536/8,1x16384/16 > $R/law.log 2>&1; echo "bench law rc=$? $(el)"
grep -v Warn $R/law.log | grep -v _warn | cut -c1-200
timeout 60 python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/c26.ktdb --profile \
    --rows 1x16384/8,1x16384/16 > $R/c26.log 2>&1; echo "bench c26 rc=$? $(el)"
grep -E "pf[01] +x1|law" $R/c26.log | cut -c1-160
for v in "64 16 4 1" "64 32 8 1" "32 16 8 1" "32 16 4 1" "64 32 4 1"; do
    set -- $v
    tag=bt$1-bv$2-nw$3-pf$4
    python3 $P $DB $W/v.ktdb $1 $2 $3 $4 || continue
    timeout 45 python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/v.ktdb --profile --rounds 3 \
        --rows 1x16384/8,1x16384/16 > $R/v-$tag.log 2>&1; echo "bench $tag rc=$? $(el)"
    grep -E "^  1x16384/8 kernel.*pf[01] +x1|law" $R/v-$tag.log | cut -c1-160
    case $tag in bt64-bv16-nw4-pf1|bt32-bv16-nw8-pf1)
        timeout 80 python3 tests/device/gdn_prefill_check.py --lib $L --db $W/v.ktdb > $R/check-$tag.log 2>&1
        echo "check $tag rc=$? $(el)"; grep -E "gdn_prefill_check:|FAIL" $R/check-$tag.log | head -4 | cut -c1-200;;
    esac
done
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
timeout 100 $NCU --section SourceCounters --section WarpStateStats --section SchedulerStats --page source --print-source sass \
    -k regex:'pf[01]$' -c 1 python3 tests/device/bench_gdn_prefill.py --lib $L --db $DB --rows 1x16384/8 \
    --rounds 1 --launches 1 > $R/ncu-state-sass.txt 2>&1; echo "ncu state rc=$? $(el)"
timeout 80 $NCU --sampling-interval 0 --section SourceCounters --section WarpStateStats --page source --print-source sass \
    -k regex:kt_gdn_decode -c 1 python3 tests/device/bench_gdn.py --lib $L --db $DB --hv 8 --batch 1 --tokens 1 \
    --regime hot --rounds 1 --launches 1 > $R/ncu-decode-sass.txt 2>&1; echo "ncu decode rc=$? $(el)"
rm -rf $W
tar czf $OUT/a4.tgz -C $OUT a4 && rm -rf $R
echo "done $(el)"
