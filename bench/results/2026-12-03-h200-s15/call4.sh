#!/bin/sh
# Fifteenth session, device call 4: the issue's decode grid on the landed code. Call 3's database
# (decode and prefill kernels as landed; call 1's fp8 / bf16 keys and the prefill bench's keys
# tuned), the bars' seven q 1 decode keys swept (bar_shapes.json: the three not yet tuned), then
# every decode row of the issue on the tuned picks (speculative rows on the law), lens equal,
# cold, cuDNN and flash in each run; the database returned.
set -u
ROOT=$(pwd)
t0=$(date +%s)
export LD_LIBRARY_PATH="$ROOT/out/device/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PATH="$ROOT/out/device/bin:$PATH"
export PYTHONUNBUFFERED=1
el() { echo "$(( $(date +%s) - t0 )) s"; }
S=bench/results/2026-12-03-h200-s15
DB=out/ab/c4.ktdb
xz -dkf $DB.xz
R=$OUT/c4; mkdir -p $R
./tune --modelpath models/llama-3.1-8b --tp 1 --target sm_90a --db $DB --no-build --resume --only attn_decode \
    --shapes $S/bar_shapes.json --budget-min 3.0 > $R/sweep.log 2>&1; echo "sweep rc=$? $(el)"
tail -n 2 $R/sweep.log
B="timeout 100 python3 tests/device/bench_attn.py --db $DB --lens equal --rounds 11"
OUT=$R $B --tsv g-16-2-256.tsv --dtype bf16,bf16_e4m3 --d 256 --g 8 --hkv 2 --q 1,4,8 --batch 8 --ctx 32768 > $R/g-16-2-256.log 2>&1; echo "16/2/256 rc=$? $(el)"
OUT=$R $B --tsv g-6-1-256.tsv --dtype bf16 --d 256 --g 6 --hkv 1 --q 1 --batch 1,8 --ctx 32768,131072 > $R/g-6-1-256.log 2>&1; echo "6/1/256 rc=$? $(el)"
OUT=$R $B --tsv g-8-4-256.tsv --dtype bf16 --d 256 --g 2 --hkv 4 --q 1 --batch 8 --ctx 32768 > $R/g-8-4-256.log 2>&1; echo "8/4/256 rc=$? $(el)"
OUT=$R $B --tsv g-32-8-128.tsv --dtype bf16,bf16_e4m3 --d 128 --g 4 --hkv 8 --q 1 --batch 8 --ctx 32768 > $R/g-32-8-128.log 2>&1; echo "32/8/128 rc=$? $(el)"
OUT=$R $B --tsv g-b32.tsv --dtype bf16,bf16_e4m3 --d 256 --g 8 --hkv 2 --q 1 --batch 32 --ctx 32768 > $R/g-b32.log 2>&1; echo "b32 rc=$? $(el)"
OUT=$R $B --tsv g-window.tsv --dtype bf16 --d 256 --g 8 --hkv 2 --q 1 --batch 8 --ctx 4096,131072 --window 0,4096 --no-peers > $R/g-window.log 2>&1; echo "window rc=$? $(el)"
grep -h "|" $R/g-*.log | grep -E "^(bf16|fp16)" | cut -c1-150
sh tests/device/return_db.sh $DB $OUT > $R/return.log 2>&1; echo "return rc=$? $(el)"
tar czf $OUT/c4.tgz -C $OUT c4 && rm -rf $R
echo "done $(el)"
