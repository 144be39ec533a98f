#!/bin/sh
# Fifteenth session, device call 3: prefill.hip as landed (kEager: QL 1 with one 16-row tile a warp
# over the whole d range works out its copies' addresses before the barrier, rescales O every tile
# and writes O a row at a time; every other form as before) and the laws as landed (prefill: the
# eager form before Q in registers; decode: the fewest row blocks before keys in flight). Call 1's
# database (its decode selections) with the landed prefill kernels: the prefill bench's eight keys
# swept (prefill_bench_keys.json), the prefill bench on the tuned picks and on the law's; the decode
# rows of 16/2/256 at q 1, 4, 8 (q 4 / 8 on the law); the prefill checks; the database returned.
set -u
ROOT=$(pwd)
t0=$(date +%s)
export LD_LIBRARY_PATH="$ROOT/out/device/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PATH="$ROOT/out/device/bin:$PATH"
export PYTHONUNBUFFERED=1
el() { echo "$(( $(date +%s) - t0 )) s"; }
S=bench/results/2026-12-03-h200-s15
DB=out/ab/c3.ktdb
xz -dkf $DB.xz
cp $DB out/ab/c3-law.ktdb
R=$OUT/c3; mkdir -p $R
./tune --modelpath models/llama-3.1-8b --tp 1 --target sm_90a --db $DB --no-build --resume --only attn_prefill \
    --shapes $S/prefill_bench_keys.json --budget-min 2.6 > $R/psweep.log 2>&1; echo "prefill sweep rc=$? $(el)"
grep -E "^\[" $R/psweep.log | cut -c1-250
P="timeout 100 python3 tests/device/bench_prefill.py --lib out/lib/libktrt.so --rounds 5"
OUT=$R $P --db $DB --tsv pf-tuned.tsv --geom 32/8/128,6/1/256,8/4/256,16/2/256 --tokens 4096,32768 > $R/pf-tuned.log 2>&1; echo "prefill tuned rc=$? $(el)"
grep -h "|" $R/pf-tuned.log | grep "^bf16" | cut -c1-175
OUT=$R $P --db out/ab/c3-law.ktdb --tsv pf-law.tsv --geom 32/8/128,6/1/256,8/4/256,16/2/256 --tokens 4096,32768 > $R/pf-law.log 2>&1; echo "prefill law rc=$? $(el)"
grep -h "|" $R/pf-law.log | grep "^bf16" | cut -c1-175
B="timeout 90 python3 tests/device/bench_attn.py --db $DB --lens equal --rounds 11"
OUT=$R $B --tsv g-16-2-256.tsv --dtype bf16,bf16_e4m3 --d 256 --g 8 --hkv 2 --q 1,4,8 --batch 8 --ctx 32768 > $R/g-16-2-256.log 2>&1; echo "16/2/256 rc=$? $(el)"
grep -h "|" $R/g-16-2-256.log | grep -E "^(bf16|fp16)" | cut -c1-170
C="python3 tests/device/bench_prefill.py --lib out/lib/libktrt.so --check-only --db out/ab/c3-law.ktdb"
timeout 70 $C --dtype bf16,bf16_e4m3 --geom 16/2/256,32/8/128,6/1/256 --tokens 16,200,3000 --prefix 0,32752 > $R/check5.log 2>&1; echo "check5 rc=$? $(el)"
timeout 50 $C --dtype bf16 --geom 16/2/256,8/4/256 --tokens 200,3000 --prefix 0,5000 --window 1000 --bs 64 > $R/check6.log 2>&1; echo "check6 rc=$? $(el)"
CA="python3 tests/device/bench_attn.py --lib out/lib/libktrt.so --db out/ab/c3-law.ktdb --check-only"
timeout 60 $CA --replay-lengths --dtype bf16,bf16_e4m3 --d 256 --g 8 --hkv 2 --q 4,8 --batch 1,3,9 --ctx 40000 --lens mixed --sinks 0,1 > $R/check7.log 2>&1; echo "check7 rc=$? $(el)"
tail -qn 1 $R/check*.log
grep -h "WRONG\|FAIL" $R/check*.log | head
sh tests/device/return_db.sh $DB $OUT > $R/return.log 2>&1; echo "return rc=$? $(el)"
tar czf $OUT/c3.tgz -C $OUT c3 && rm -rf $R
echo "done $(el)"
