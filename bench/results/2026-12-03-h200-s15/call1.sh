#!/bin/sh
# Fifteenth session, device call 1 (bench/NOTES.md, "KD's K conversion at one instruction a pair"):
# the bars' batch 8 32K q 1 decode keys of 16/2/256 and 32/8/128, bf16 and fp8 (fp8_shapes.json) swept on the new code
# from a database of every sm_90a bf16 / bf16_e4m3 d128 / d256 decode and prefill kernel as built
# now and the reference kernels; the decode rows on the tuned picks (lens equal, cold,
# cuDNN and flash in each run); fp8 check grids on a copy whose fp8 decode kernels are KD alone
# (the law then serves every fp8 problem with one); the database returned.
set -u
ROOT=$(pwd)
t0=$(date +%s)
export LD_LIBRARY_PATH="$ROOT/out/device/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PATH="$ROOT/out/device/bin:$PATH"
export PYTHONUNBUFFERED=1
S=bench/results/2026-12-03-h200-s15
DB=out/ab/sweep.ktdb
xz -dkf $DB.xz
R=$OUT/c1; mkdir -p $R
el() { echo "$(( $(date +%s) - t0 )) s"; }
./tune --modelpath models/llama-3.1-8b --tp 1 --target sm_90a --db $DB --no-build --resume --only attn_decode \
    --shapes $S/fp8_shapes.json --budget-min 2.5 > $R/sweep.log 2>&1; echo "sweep rc=$? $(el)"
tail -n 3 $R/sweep.log
python3 -c "
import sqlite3; c = sqlite3.connect('$DB')
for r in c.execute(\"select problem_key, kernel, round(time_us, 2), decided_by from selection where problem_key like '%batch<=8 ctx<=32768' or problem_key like '%batch<=1 ctx<=32768'\"): print('|'.join(map(str, r)))
" > $R/picks.txt
cut -c1-200 $R/picks.txt
B="timeout 120 python3 tests/device/bench_attn.py --db $DB --lens equal --rounds 11"
OUT=$R $B --tsv g-16-2-256.tsv --dtype bf16,bf16_e4m3 --d 256 --g 8 --hkv 2 --q 1,4,8 --batch 8 --ctx 32768 > $R/g-16-2-256.log 2>&1; echo "16/2/256 rc=$? $(el)"
OUT=$R $B --tsv g-32-8-128.tsv --dtype bf16,bf16_e4m3 --d 128 --g 4 --hkv 8 --q 1 --batch 8 --ctx 32768 > $R/g-32-8-128.log 2>&1; echo "32/8/128 rc=$? $(el)"
OUT=$R $B --tsv g-b32.tsv --dtype bf16,bf16_e4m3 --d 256 --g 8 --hkv 2 --q 1 --batch 32 --ctx 32768 --no-peers > $R/g-b32.log 2>&1; echo "b32 rc=$? $(el)"
grep -h "|" $R/g-*.log | grep -E "^(bf16|fp16)" | cut -c1-170
# fp8 served by KD kernels alone: every other fp8 decode.hip kernel and every fp8 selection removed
cp $DB out/ab/kd.ktdb
python3 -c "
import sqlite3; c = sqlite3.connect('out/ab/kd.ktdb')
c.execute(\"delete from selection where problem_key like 'attn_decode bf16_e4m3%'\")
c.execute(\"delete from kernel where name like 'kt_attn_decode_bf16_e4m3%' and name not like '%kd1%'\")
c.commit(); print('kd.ktdb:', c.execute(\"select count(*) from kernel where name like 'kt_attn_decode_bf16_e4m3%'\").fetchone()[0], 'fp8 decode kernels')"
C="python3 tests/device/bench_attn.py --lib out/lib/libktrt.so --db out/ab/kd.ktdb --check-only"
timeout 60 $C --dtype bf16_e4m3 --d 128 --g 4 --hkv 2 --q 1,3 --batch 1,5,40 --ctx 100,1500 --window 0,40,64 --softcap 0,30 --sinks 0,1 > $R/check1.log 2>&1; echo "check1 rc=$? $(el)"
timeout 60 $C --bs 64 --dtype bf16_e4m3 --d 256 --g 8 --hkv 2 --q 1 --batch 1,4,33 --ctx 3000,40000 --window 0,1000 --sinks 0,1 > $R/check2.log 2>&1; echo "check2 rc=$? $(el)"
timeout 60 $C --replay-lengths --dtype bf16_e4m3 --d 128 --g 4 --hkv 8 --q 1 --batch 1,2,8,32 --ctx 1000,131072 --lens mixed > $R/check4.log 2>&1; echo "check4 rc=$? $(el)"
tail -qn 1 $R/check*.log
grep -h "WRONG" $R/check*.log | head
grep -h "kernel\b\|kt_attn_decode_bf16_e4m3" $R/check1.log | head -3
sh tests/device/return_db.sh $DB $OUT > $R/return.log 2>&1; echo "return rc=$? $(el)"
tar czf $OUT/c1.tgz -C $OUT c1 && rm -rf $R
echo "done $(el)"
