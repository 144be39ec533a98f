#!/bin/sh
# Twenty-fifth session, device call 1 (bench/NOTES.md, "the state pass as a score tile"): the
# rewritten state pass (S^T held as FlashAttention's score tile, w^T / kd / u^T written by _wy)
# checked (the prefill-then-decode chains, on the law's pick and on two other key splits), then
# timed per kernel (torch.profiler) on the law's pick, on six other state-pass variants, and on
# the twenty-fourth session's kernels with their own libktrt (out/c25/old: the A/B in one run).
# Carry out/lib out/c25 out/c24. Results: $OUT/a1.tgz.
set -u
. tests/device/env.sh
R=$OUT/a1; mkdir -p $R
W=$(mktemp -d)
L=out/lib/libktrt.so
P=bench/results/2026-12-05-h200-s25/pick.py
DB=$W/gdn_all.ktdb
xz -dc out/c25/gdn_all.ktdb.xz > $DB
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem --format=csv,noheader
timeout 100 python3 tests/device/gdn_prefill_check.py --lib $L --db $DB > $R/check-law.log 2>&1; echo "check law rc=$? $(el)"
grep -E "gdn_prefill_check:|FAIL|WRONG" $R/check-law.log | head -8 | cut -c1-200
timeout 120 python3 tests/device/bench_gdn_prefill.py --lib $L --db $DB --profile \
    --rows 1x16384/8,8x2048/8,1x65536/8,1x16384/16 > $R/law.log 2>&1; echo "bench law rc=$? $(el)"
grep -v Warn $R/law.log | grep -v _warn | cut -c1-200
xz -dc out/c24/gdn_all.ktdb.xz > $W/c24.ktdb
timeout 80 python3 tests/device/bench_gdn_prefill.py --lib out/c25/old/libktrt.so --db $W/c24.ktdb --profile \
    --rows 1x16384/8,1x16384/16 > $R/old.log 2>&1; echo "bench old rc=$? $(el)"
grep -v Warn $R/old.log | grep -v _warn | cut -c1-200
for v in "64 16 4 1" "64 32 4 1" "64 32 8 1" "64 16 8 1" "64 64 8 1" "32 16 4 1" "64 16 4 0"; do
    set -- $v
    tag=bt$1-bv$2-nw$3-pf$4
    python3 $P $DB $W/v.ktdb $1 $2 $3 $4 || continue
    timeout 50 python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/v.ktdb --profile --rounds 3 \
        --rows 1x16384/8,1x16384/16 > $R/v-$tag.log 2>&1; echo "bench $tag rc=$? $(el)"
    grep -E "^  1x16384/8 kernel.*(nw[0-9]_pf[01]  |pf[01] +x1)|law" $R/v-$tag.log | cut -c1-160
    case $tag in bt64-bv32-nw4-pf1|bt32-bv16-nw4-pf1)
        timeout 80 python3 tests/device/gdn_prefill_check.py --lib $L --db $W/v.ktdb > $R/check-$tag.log 2>&1
        echo "check $tag rc=$? $(el)"; grep -E "gdn_prefill_check:|FAIL" $R/check-$tag.log | head -4 | cut -c1-200;;
    esac
done
rm -rf $W
tar czf $OUT/a1.tgz -C $OUT a1 && rm -rf $R
echo "done $(el)"
