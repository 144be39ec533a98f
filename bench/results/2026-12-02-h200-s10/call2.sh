#!/bin/sh
# Tenth session, device call 2, on call 1's database (code restored): speculative rows swept at
# four more geometries (q 4 and 8 only: "q": [4, 8]), the database returned, then the rows form
# forced onto keys no sweep tunes (window + soft-cap + sinks, bs 64 at the scratch's 128
# segments, graphs replayed with new lengths; bf16 WD 1, WD 2, fp8) and the standard check grid.
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
$T --only attn_decode --shapes tests/device/attn_spec_shapes.json --budget-min ${SPEC_MIN:-4.3} > $R/spec-sweep.log 2>&1; el spec-sweep $?
sh tests/device/return_db.sh $DB $OUT > $R/return.log 2>&1; el return $?
F=bench/results/2026-12-02-h200-s10/force.py
pick() { python3 -c "import sqlite3,sys; c=sqlite3.connect('$DB'); r=c.execute(sys.argv[1]).fetchone(); print(r[0] if r else '')" "$1"; }
K1=$(pick "select kernel from selection where problem_key = 'attn_decode bf16 d=256 g=8 hkv=2 bs=16 win=0 cap=0 sink=0 q<=8 batch<=8 ctx<=32768' and kernel like 'kt_attn_prefill%'")
K2=$(pick "select name from kernel where name like 'kt_attn_prefill_bf16_d256_bm64%wd2%' and status = 'ok' and target = 'sm_90a'")
K3=$(pick "select kernel from selection where problem_key = 'attn_decode bf16_e4m3 d=256 g=8 hkv=2 bs=16 win=0 cap=0 sink=0 q<=8 batch<=8 ctx<=32768' and kernel like 'kt_attn_prefill%'")
[ -n "$K3" ] || K3=$(pick "select name from kernel where name like 'kt_attn_prefill_bf16_e4m3_d256_bm64%' and status = 'ok' and target = 'sm_90a'")
{ for kk in "$K1 bf16" "$K2 bf16" "$K3 bf16_e4m3"; do
    set -- $kk
    echo "== forced $1"
    python3 $F $DB /tmp/force.ktdb $1 "attn_decode $2 d=256 g=8 hkv=2 bs=16 win=1000 cap=30 sink=1 q<=8 batch<=8 ctx<=1024" \
        "attn_decode $2 d=256 g=8 hkv=2 bs=16 win=1000 cap=30 sink=1 q<=4 batch<=8 ctx<=1024" \
        "attn_decode $2 d=256 g=8 hkv=2 bs=64 win=0 cap=0 sink=1 q<=8 batch<=1 ctx<=65536" \
        "attn_decode $2 d=256 g=8 hkv=2 bs=16 win=0 cap=0 sink=0 q<=4 batch<=4 ctx<=65536" &&
    timeout 30 python3 tests/device/bench_attn.py --db /tmp/force.ktdb --check-only --dtype $2 --d 256 --g 8 --hkv 2 --q 4,8 --batch 5 --ctx 3000 --window 1000 --softcap 30 --sinks 1 &&
    timeout 30 python3 tests/device/bench_attn.py --db /tmp/force.ktdb --check-only --bs 64 --dtype $2 --d 256 --g 8 --hkv 2 --q 8 --batch 1 --ctx 40000 --sinks 1 &&
    timeout 30 python3 tests/device/bench_attn.py --db /tmp/force.ktdb --check-only --replay-lengths --dtype $2 --d 256 --g 8 --hkv 2 --q 3,4 --batch 4 --ctx 50000 || echo "FORCED CHECK FAILED $1"
  done; } > $R/forced-check.log 2>&1; el forced-check $?
KT_DEVICE_STEPS=attncheck OUT=$R/std timeout 150 sh tests/device/run_all.sh > $R/std-check.log 2>&1; el std-check $?
tar czf $OUT/results.tgz -C $OUT res && rm -rf $R
echo "returned: $(ls $OUT)"
echo "done $(( $(date +%s) - t0 )) s"
