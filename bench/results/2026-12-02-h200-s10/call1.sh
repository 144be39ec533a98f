#!/bin/sh
# Tenth session, device call 1, on the eighth/ninth sessions' decode measurements carried onto a
# fresh pack (tests/device/carry_measurements.sh): prefill.hip's kernels serving speculative
# decode (a 16-row tile a warp, K and V read once a block) and prefill's split-KV.
#   1. sweeps, every candidate verified against the float64 reference before it is timed:
#      16/2/256 bf16 q <= 8 batch <= 8 ctx <= 32K (the new form times at q 4 and 8 only: the rest
#      is measured already), prefill chunks of 16 tokens over 1K-128K keys (split), and
#      attn_prefill_shapes.json (small grids: these split too)
#   2. checks through libktrt: speculative rows (mixed lengths, bs 64, sinks, window, soft-cap,
#      graphs replayed with new lengths), chunked prefill over a 32K prefix, the standard grid
#   3. timing: 16/2/256 q 1/4/8 batch 8 32K (bf16, fp8), chunked prefill against flash / cuDNN
set -u
ROOT=$(pwd)
t0=$(date +%s)
export LD_LIBRARY_PATH="$ROOT/out/device/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PATH="$ROOT/out/device/bin:$PATH"
export PYTHONUNBUFFERED=1
DB=out/device/ktune.ktdb
R=$OUT/res
mkdir -p $R
el() { echo "$1 rc=$2 $(( $(date +%s) - t0 )) s: $(grep -v '^[[:space:]]*$' $R/$1.log | tail -n 1 | cut -c1-160)"; }
T="./tune --modelpath models/llama-3.1-8b --tp 1 --target sm_90a --db $DB --no-build --resume"
$T --only attn_decode --shapes tests/device/attn_spec_shapes.json --budget-min ${SPEC_MIN:-2.4} > $R/spec-sweep.log 2>&1; el spec-sweep $?
$T --only attn_prefill --shapes tests/device/attn_prefill_split.json --budget-min ${SPLIT_MIN:-1.0} > $R/split-sweep.log 2>&1; el split-sweep $?
$T --only attn_prefill --shapes tests/device/attn_prefill_shapes.json --budget-min ${PSH_MIN:-0.7} > $R/prefill-sweep.log 2>&1; el prefill-sweep $?
sh tests/device/return_db.sh $DB $OUT > $R/return.log 2>&1; el return $?
BA="python3 tests/device/bench_attn.py --db $DB"
BP="python3 tests/device/bench_prefill.py --db $DB"
{ timeout 70 $BA --check-only --dtype bf16,bf16_e4m3 --d 256 --g 8 --hkv 2 --q 4,8 --batch 3,8 --ctx 5000,30000 --lens mixed &&
  timeout 40 $BA --check-only --bs 64 --dtype bf16,fp16 --d 128,256 --g 4,8 --hkv 1 --q 8 --batch 5 --ctx 3000 --window 0,1000 --softcap 0,30 --sinks 0,1 &&
  timeout 40 $BA --check-only --replay-lengths --dtype bf16 --d 256 --g 8 --hkv 2 --q 8 --batch 1,8 --ctx 30000 --lens mixed; } > $R/spec-check.log 2>&1; el spec-check $?
# the rows form on keys no sweep tuned (sinks, window, soft-cap, bs 64, up to the scratch's 128
# segments at batch 1, fp8, graphs replayed with new lengths), forced through test databases
F=bench/results/2026-12-02-h200-s10/force.py
pick() { python3 -c "import sqlite3,sys; c=sqlite3.connect('$DB'); r=c.execute(sys.argv[1]).fetchone(); print(r[0] if r else '')" "$1"; }
K1=$(pick "select kernel from selection where problem_key = 'attn_decode bf16 d=256 g=8 hkv=2 bs=16 win=0 cap=0 sink=0 q<=8 batch<=8 ctx<=32768' and kernel like 'kt_attn_prefill%'")
[ -n "$K1" ] || K1=$(pick "select name from kernel where name like 'kt_attn_prefill_bf16_d256_bm64%wd1%' and status = 'ok' and target = 'sm_90a'")
K2=$(pick "select name from kernel where name like 'kt_attn_prefill_bf16_d256_bm64%wd2%' and status = 'ok' and target = 'sm_90a'")
K3=$(pick "select name from kernel where name like 'kt_attn_prefill_bf16_e4m3_d256_bm64%' and status = 'ok' and target = 'sm_90a'")
{ for kk in "$K1 bf16" "$K2 bf16" "$K3 bf16_e4m3"; do
    set -- $kk
    echo "== forced $1"
    python3 $F $DB /tmp/force.ktdb $1 "attn_decode $2 d=256 g=8 hkv=2 bs=16 win=1000 cap=30 sink=1 q<=8 batch<=8 ctx<=4096" \
        "attn_decode $2 d=256 g=8 hkv=2 bs=64 win=0 cap=0 sink=1 q<=8 batch<=1 ctx<=65536" \
        "attn_decode $2 d=256 g=8 hkv=2 bs=16 win=0 cap=0 sink=0 q<=4 batch<=4 ctx<=65536" &&
    timeout 30 python3 tests/device/bench_attn.py --db /tmp/force.ktdb --check-only --dtype $2 --d 256 --g 8 --hkv 2 --q 8 --batch 5 --ctx 3000 --window 1000 --softcap 30 --sinks 1 &&
    timeout 30 python3 tests/device/bench_attn.py --db /tmp/force.ktdb --check-only --bs 64 --dtype $2 --d 256 --g 8 --hkv 2 --q 8 --batch 1 --ctx 40000 --sinks 1 &&
    timeout 30 python3 tests/device/bench_attn.py --db /tmp/force.ktdb --check-only --replay-lengths --dtype $2 --d 256 --g 8 --hkv 2 --q 3,4 --batch 4 --ctx 50000 || echo "FORCED CHECK FAILED $1"
  done; } > $R/forced-check.log 2>&1; el forced-check $?
timeout 50 $BP --check-only --dtype bf16,bf16_e4m3 --geom 16/2/256,32/8/128,6/1/256 --tokens 16,200 --prefix 32752 > $R/split-check.log 2>&1; el split-check $?
OUT=$R timeout 90 $BA --lens equal --dtype bf16,bf16_e4m3 --d 256 --g 8 --hkv 2 --q 1,4,8 --batch 8 --ctx 32768 --tsv bench-spec.tsv > $R/bench-spec.log 2>&1; el bench-spec $?
OUT=$R timeout 70 $BP --dtype bf16 --geom 16/2/256,6/1/256,32/8/128 --tokens 16,256 --prefix 32512 --tsv bench-split.tsv > $R/bench-split.log 2>&1; el bench-split $?
tar czf $OUT/results.tgz -C $OUT res && rm -rf $R
echo "returned: $(ls $OUT)"
echo "done $(( $(date +%s) - t0 )) s"
