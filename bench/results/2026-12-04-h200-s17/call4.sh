#!/bin/sh
# Seventeenth session, device call 4: where the decode rows' fixed cost lies. Ours alone (the bf16
# picks, lens equal, no peers) at 8K-128K keys at 16/2/256, 6/1/256 and 32/8/128 batch 8 (one
# segment count across the range: the fit's intercept is the launch's fixed cost); the read
# ceiling's reader over 128 MiB-4 GiB (a pure reader's fixed cost, fixed_read.py); ncu's durations
# of the main kernel and the reduce at 32K, one launch each.
set -u
. tests/device/env.sh
R=$OUT/c4; mkdir -p $R
S=bench/results/2026-12-04-h200-s17
L=out/lib/libktrt.so
B="python3 tests/device/bench_attn.py --lib $L --db out/ab2/base.ktdb --q 1 --lens equal --rounds 11 --no-peers --dtype bf16 --batch 8 --ctx 8192,16384,32768,65536,131072"
timeout 70 $B --d 256 --g 8 --hkv 2 --tsv f-16-2.tsv > $R/f-16-2.log 2>&1; echo "16/2 rc=$? $(el)"
timeout 70 $B --d 256 --g 6 --hkv 1 --tsv f-6-1.tsv > $R/f-6-1.log 2>&1; echo "6/1 rc=$? $(el)"
timeout 90 $B --d 128 --g 4 --hkv 8 --tsv f-32-8.tsv > $R/f-32-8.log 2>&1; echo "32/8 rc=$? $(el)"
grep -hE "^bf16 |^   ours" $R/f-*.log
timeout 90 python3 $S/fixed_read.py > $R/read.log 2>&1; echo "read rc=$? $(el)"
cat $R/read.log
N="ncu --metrics gpu__time_duration.sum,launch__grid_size --kernel-name regex:^kt_attn"
C="python3 tests/device/bench_attn.py --lib $L --db out/ab2/base.ktdb --check-only --q 1 --lens equal --dtype bf16 --batch 8 --ctx 32768"
timeout 60 $N $C --d 256 --g 8 --hkv 2 > $R/ncu-16-2.log 2>&1; echo "ncu 16/2 rc=$? $(el)"
timeout 60 $N $C --d 256 --g 6 --hkv 1 > $R/ncu-6-1.log 2>&1; echo "ncu 6/1 rc=$? $(el)"
timeout 60 $N $C --d 128 --g 4 --hkv 8 > $R/ncu-32-8.log 2>&1; echo "ncu 32/8 rc=$? $(el)"
grep -hE "^  kt_attn|gpu__time_duration|launch__grid_size" $R/ncu-*.log
cp $OUT/*.tsv $R/ 2>/dev/null
tar czf $OUT/c4.tgz -C $OUT c4 && rm -rf $R
echo "done $(el)"
