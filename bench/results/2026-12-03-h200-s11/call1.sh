#!/bin/sh
# Eleventh session, device call 1, on call 6's (tenth session) measurements carried onto a fresh
# pack (tests/device/carry_measurements.sh): prefill.hip with its K / V ring (ST 2, 3: the copies of
# tile j + ST - 1 issued as tile j starts, one barrier a tile), re-timed wherever its kernels run:
#   1. sweeps, every candidate verified against the float64 reference before it is timed:
#      speculative decode (attn_spec_shapes.json: five geometries, q 4 and 8, batch 8, 32K), the
#      prefill bench's own keys (4K and 32K tokens, four geometries);
#   2. checks through libktrt: ring kernels forced onto keys no sweep tunes (window + soft-cap +
#      sinks, bs 64 at the scratch's segments, graphs replayed with new lengths, fp8 is ST 1 only),
#      speculative rows with mixed lengths, chunked prefill over a 32K prefix;
#   3. timing: 16/2/256 q 1/4/8 batch 8 32K (bf16, fp8), the prefill grid against flash / cuDNN.
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
S=bench/results/2026-12-03-h200-s11
$T --only attn_decode --shapes tests/device/attn_spec_shapes.json --budget-min ${SPEC_MIN:-2.0} > $R/spec-sweep.log 2>&1; el spec-sweep $?
$T --only attn_prefill --shapes bench/results/2026-12-02-h200-s10/prefill_bench_keys.json --budget-min ${PB_MIN:-1.8} > $R/pbench-sweep.log 2>&1; el pbench-sweep $?
sh tests/device/return_db.sh $DB $OUT > $R/return.log 2>&1; el return $?
BA="python3 tests/device/bench_attn.py --db $DB"
BP="python3 tests/device/bench_prefill.py --db $DB"
OUT=$R timeout 80 $BA --lens equal --dtype bf16,bf16_e4m3 --d 256 --g 8 --hkv 2 --q 1,4,8 --batch 8 --ctx 32768 --tsv bench-spec.tsv > $R/bench-spec.log 2>&1; el bench-spec $?
OUT=$R timeout 70 $BP --tsv bench-prefill.tsv > $R/bench-prefill.log 2>&1; el bench-prefill $?
F=bench/results/2026-12-02-h200-s10/force.py
pick() { python3 -c "import sqlite3,sys; c=sqlite3.connect('$DB'); r=c.execute(sys.argv[1]).fetchone(); print(r[0] if r else '')" "$1"; }
K1=$(pick "select kernel from selection where problem_key = 'attn_decode bf16 d=256 g=8 hkv=2 bs=16 win=0 cap=0 sink=0 q<=8 batch<=8 ctx<=32768' and kernel like 'kt_attn_prefill%st2%'")
[ -n "$K1" ] || K1=kt_attn_prefill_bf16_d256_bm64_bn32_nw4_wd1_ql1_st2_segmax128
K2=kt_attn_prefill_bf16_d256_bm64_bn32_nw8_wd2_ql0_st3_segmax128
K3=kt_attn_prefill_bf16_d128_bm128_bn64_nw8_wd1_ql0_st2_segmax128
{ for kk in "$K1 256 8 2" "$K2 256 8 2"; do
    set -- $kk
    echo "== forced $1"
    python3 $F $DB /tmp/force.ktdb $1 "attn_decode bf16 d=$2 g=$3 hkv=$4 bs=16 win=1000 cap=30 sink=1 q<=8 batch<=8 ctx<=4096" \
        "attn_decode bf16 d=$2 g=$3 hkv=$4 bs=64 win=0 cap=0 sink=1 q<=8 batch<=1 ctx<=65536" \
        "attn_decode bf16 d=$2 g=$3 hkv=$4 bs=16 win=0 cap=0 sink=0 q<=4 batch<=4 ctx<=65536" &&
    timeout 30 $BA --db /tmp/force.ktdb --check-only --dtype bf16 --d $2 --g $3 --hkv $4 --q 8 --batch 5 --ctx 3000 --window 1000 --softcap 30 --sinks 1 &&
    timeout 30 $BA --db /tmp/force.ktdb --check-only --bs 64 --dtype bf16 --d $2 --g $3 --hkv $4 --q 8 --batch 1 --ctx 40000 --sinks 1 &&
    timeout 30 $BA --db /tmp/force.ktdb --check-only --replay-lengths --dtype bf16 --d $2 --g $3 --hkv $4 --q 3,4 --batch 4 --ctx 50000 || echo "FORCED CHECK FAILED $1"
  done; } > $R/forced-check.log 2>&1; el forced-check $?
timeout 60 $BA --check-only --dtype bf16,bf16_e4m3 --d 256 --g 8 --hkv 2 --q 4,8 --batch 3,8 --ctx 5000,30000 --lens mixed > $R/spec-check.log 2>&1; el spec-check $?
timeout 50 $BP --check-only --dtype bf16,bf16_e4m3 --geom 16/2/256,32/8/128,6/1/256 --tokens 16,200 --prefix 32752 > $R/split-check.log 2>&1; el split-check $?
grep -h "|" $R/bench-spec.log $R/bench-prefill.log | grep "^bf16" | cut -c1-170
tar czf $OUT/results.tgz -C $OUT res && rm -rf $R
echo "done $(( $(date +%s) - t0 )) s"
