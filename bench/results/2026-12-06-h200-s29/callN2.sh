#!/bin/sh
# Twenty-ninth session, device call N2 (~4 minutes; N without Nsight, after fla.__version__): flash-linear-attention's chunked gated delta rule
# (Triton, carried source) as the prefill's peer in the same rounds as ours (PF 1 BV 16 NW 8, the
# law's form), at the rows; then Nsight Compute on the state pass, PF 3 against PF 1 (why
# PF 3 did not win). Carry out/lib out/c37 out/fla. $OUT/n2.tgz.
set -u
. tests/device/env.sh
call_begin n2
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
K=tests/device/keep.py
xz -dc out/c37/gdn_all.ktdb.xz > $W/c37.ktdb
for s in "a BV=16 NW=8 PF=1" "b BV=16 NW=8 PF=3"; do
    set -- $s; python3 $K $W/c37.ktdb $W/$1.ktdb gdn_prefill BT=64 $2 $3 $4 > /dev/null || echo "keep $s failed"
done
OUT=$R timeout 330 python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/a.ktdb --fla out/fla --rounds 5 \
    --rows 1x16384/8,1x4096/8,1x65536/8,1x16384/16,8x2048/8 > $R/fla.log 2>&1
echo "fla rc=$? $(el)"; cut -c1-150 $R/fla.log | tail -14
gzip -9 $R/*.txt
call_end n2
