#!/bin/sh
# Eleventh session, device call 2, on call 1's returned database (its kernels: every selection's,
# prefill.hip's bf16 / bf16_e4m3 d128 / d256, the reference) and libktrt with the prefill law's
# ring key: the speculative keys call 1's budget left (16/2/256 q 4 / 8), then the issue's decode
# timing grid (tests/device/run_all.sh attnbench) and its correctness grid (attncheck).
set -u
ROOT=$(pwd)
t0=$(date +%s)
export LD_LIBRARY_PATH="$ROOT/out/device/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PATH="$ROOT/out/device/bin:$PATH"
export PYTHONUNBUFFERED=1
DB=out/device/ktune.ktdb
[ -f $DB ] || gunzip -k $DB.gz
R=$OUT/res
mkdir -p $R
el() { echo "$1 rc=$2 $(( $(date +%s) - t0 )) s: $(grep -v '^[[:space:]]*$' $R/$1.log | tail -n 1 | cut -c1-160)"; }
T="./tune --modelpath models/llama-3.1-8b --tp 1 --target sm_90a --db $DB --no-build --resume"
$T --only attn_decode --shapes tests/device/attn_spec_shapes.json --budget-min 1.3 > $R/spec-sweep.log 2>&1; el spec-sweep $?
sh tests/device/return_db.sh $DB $OUT > $R/return.log 2>&1; el return $?
KT_DEVICE_STEPS=attnbench OUT=$R/grid timeout 300 sh tests/device/run_all.sh > $R/grid.log 2>&1; echo "grid rc=$? $(( $(date +%s) - t0 )) s"
KT_DEVICE_STEPS=attncheck OUT=$R/check timeout 140 sh tests/device/run_all.sh > $R/check.log 2>&1; echo "check rc=$? $(( $(date +%s) - t0 )) s"
tail -3 $R/check/attn-check.log 2>/dev/null
grep -h "|" $R/grid/attn.log | grep -E "^(bf16|fp16)" | cut -c1-150
tar czf $OUT/results.tgz -C $OUT res && rm -rf $R
echo "done $(( $(date +%s) - t0 )) s"
