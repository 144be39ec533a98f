#!/bin/sh
# Tenth session, device call 6, on call 4's measurements carried onto the landed template (no
# branch around the idle row groups: call 5's A/B): the rows form and prefill's picks swept again
# (their code changed), the database returned, then the timing rows: speculative decode at
# 16/2/256 batch 8 32K, the prefill grid, chunked prefill over a 32K prefix.
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
$T --only attn_prefill --shapes bench/results/2026-12-02-h200-s10/prefill_bench_keys.json --budget-min 1.2 > $R/pbench-sweep.log 2>&1; el pbench-sweep $?
$T --only attn_decode --shapes tests/device/attn_spec_shapes.json --budget-min 2.4 > $R/spec-sweep.log 2>&1; el spec-sweep $?
$T --only attn_prefill --shapes tests/device/attn_prefill_split.json --budget-min 0.7 > $R/split-sweep.log 2>&1; el split-sweep $?
sh tests/device/return_db.sh $DB $OUT > $R/return.log 2>&1; el return $?
OUT=$R timeout 60 python3 tests/device/bench_attn.py --db $DB --lens equal --dtype bf16,bf16_e4m3 --d 256 --g 8 --hkv 2 --q 1,4,8 --batch 8 --ctx 32768 --tsv bench-spec.tsv > $R/bench-spec.log 2>&1; el bench-spec $?
OUT=$R timeout 60 python3 tests/device/bench_prefill.py --db $DB --tsv bench-prefill.tsv > $R/bench-prefill.log 2>&1; el bench-prefill $?
OUT=$R timeout 45 python3 tests/device/bench_prefill.py --db $DB --geom 16/2/256,6/1/256,32/8/128 --tokens 16 --prefix 32752 --tsv bench-split.tsv > $R/bench-split.log 2>&1; el bench-split $?
grep -h "|" $R/bench-spec.log $R/bench-prefill.log $R/bench-split.log | grep "^bf16" | cut -c1-150
tar czf $OUT/results.tgz -C $OUT res && rm -rf $R
echo "done $(( $(date +%s) - t0 )) s"
