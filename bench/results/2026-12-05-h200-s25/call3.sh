#!/bin/sh
# Twenty-fifth session, device call 3 (bench/NOTES.md, "the second form"): the state pass with u
# held as loaded and its partials reduce-scattered, _wy's inverse unrolled, _prep's SiLU by the
# target's approximations (out/c26), checked (the prefill-then-decode chains: the law's pick and
# two other key splits), then timed per kernel on the law's pick and four other state-pass forms,
# then Nsight Compute's issue figures for the four launches of the law's pick, and its per-
# instruction view of the decode step at batch 1 x hv 8 (the next decode change's evidence).
# Carry out/lib out/c26. Results: $OUT/a3.tgz.
set -u
. tests/device/env.sh
R=$OUT/a3; mkdir -p $R
W=$(mktemp -d)
L=out/lib/libktrt.so
P=bench/results/2026-12-05-h200-s25/pick.py
DB=$W/gdn_all.ktdb
xz -dc out/c26/gdn_all.ktdb.xz > $DB
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem --format=csv,noheader
timeout 100 python3 tests/device/gdn_prefill_check.py --lib $L --db $DB > $R/check-law.log 2>&1; echo "check law rc=$? $(el)"
grep -E "gdn_prefill_check:|FAIL|WRONG" $R/check-law.log | head -8 | cut -c1-200
timeout 120 python3 tests/device/bench_gdn_prefill.py --lib $L --db $DB --profile \
    --rows 1x16384/8,8x2048/8,1x65536/8,1x16384/16,1x4096/8 > $R/law.log 2>&1; echo "bench law rc=$? $(el)"
grep -v Warn $R/law.log | grep -v _warn | cut -c1-200
for v in "64 32 4 1" "64 16 8 1" "64 32 8 1" "32 16 4 1" "64 16 2 1"; do
    set -- $v
    tag=bt$1-bv$2-nw$3-pf$4
    python3 $P $DB $W/v.ktdb $1 $2 $3 $4 || continue
    timeout 45 python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/v.ktdb --profile --rounds 3 \
        --rows 1x16384/8,1x16384/16 > $R/v-$tag.log 2>&1; echo "bench $tag rc=$? $(el)"
    grep -E "^  1x16384/8 kernel.*pf[01] +x1|law" $R/v-$tag.log | cut -c1-160
    case $tag in bt64-bv16-nw8-pf1|bt32-bv16-nw4-pf1)
        timeout 80 python3 tests/device/gdn_prefill_check.py --lib $L --db $W/v.ktdb > $R/check-$tag.log 2>&1
        echo "check $tag rc=$? $(el)"; grep -E "gdn_prefill_check:|FAIL" $R/check-$tag.log | head -4 | cut -c1-200;;
    esac
done
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
timeout 120 $NCU --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section Occupancy \
    -k regex:kt_gdn_prefill -c 4 python3 tests/device/bench_gdn_prefill.py --lib $L --db $DB --rows 1x16384/8 \
    --rounds 1 --launches 1 > $R/ncu-sections.txt 2>&1; echo "ncu rc=$? $(el)"
grep -E "  kt_gdn_prefill|Duration|Issued Ipc|Warp Cycles Per Issued|Executed Ipc" $R/ncu-sections.txt | cut -c1-150
timeout 100 $NCU --section SourceCounters --section WarpStateStats --page source --print-source sass \
    -k regex:kt_gdn_decode -c 1 python3 tests/device/bench_gdn.py --lib $L --db $DB --hv 8 --batch 1 --tokens 1 \
    --regime hot --rounds 1 --launches 1 > $R/ncu-decode-sass.txt 2>&1; echo "ncu decode rc=$? $(el)"
rm -rf $W
tar czf $OUT/a3.tgz -C $OUT a3 && rm -rf $R
echo "done $(el)"
