#!/bin/sh
# Twelfth session, device call 4 (bench/NOTES.md, "A tie is broken on equal lengths"): call 3's
# returned database (code restored) with the 54 selections its sweep decided by a tie rule
# removed; the same keys swept again by the new tuner, whose tiebreak times the tied on the
# problem's second instance (@equal): their coarse and fine passes are reused from call 3, only
# the tiebreaks are timed. Then the bar rows on the picks (bench_attn.py, lens equal, cold).
set -u
ROOT=$(pwd)
t0=$(date +%s)
export LD_LIBRARY_PATH="$ROOT/out/device/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PATH="$ROOT/out/device/bin:$PATH"
export PYTHONUNBUFFERED=1
DB=out/ab/call4.ktdb
[ -f $DB ] || gunzip -k $DB.gz
R=$OUT/c4; mkdir -p $R
el() { echo "$(( $(date +%s) - t0 )) s"; }
./tune --modelpath models/llama-3.1-8b --tp 1 --target sm_90a --db $DB --no-build --resume --only attn_decode \
    --shapes bench/results/2026-12-03-h200-s12/bar_shapes.json --budget-min 4 > $R/sweep.log 2>&1; echo "sweep rc=$? $(el)"
tail -n 4 $R/sweep.log
python3 -c "
import sqlite3; c = sqlite3.connect('$DB')
for r in c.execute(\"select problem_key, kernel, decided_by, round(time_us, 2) from selection where decided_by like '@%' order by 1\"): print('|'.join(map(str, r)))
print('tiebreak passes at @equal:', c.execute(\"select count(*) from pass where kind = 'tiebreak' and problem_key like '%@equal'\").fetchone()[0])
" > $R/picks.txt 2>&1
cat $R/picks.txt | tail -60
B="timeout 150 python3 tests/device/bench_attn.py --db $DB --lens equal --rounds 11"
OUT=$R $B --tsv g-8-4-256.tsv --dtype bf16 --d 256 --g 2 --hkv 4 --q 1 --batch 4,8 --ctx 32768 > $R/g-8-4-256.log 2>&1; echo "8/4/256 rc=$? $(el)"
OUT=$R $B --tsv g-16-2-256.tsv --dtype bf16,bf16_e4m3 --d 256 --g 8 --hkv 2 --q 1 --batch 8 --ctx 32768 > $R/g-16-2-256.log 2>&1; echo "16/2/256 rc=$? $(el)"
OUT=$R $B --tsv g-6-1-256.tsv --dtype bf16 --d 256 --g 6 --hkv 1 --q 1 --batch 1,8 --ctx 32768 > $R/g-6-1-256.log 2>&1; echo "6/1/256 rc=$? $(el)"
grep -h "|" $R/g-*.log | grep -E "^(bf16|fp16)" | cut -c1-160
sh tests/device/return_db.sh $DB $OUT > $R/return.log 2>&1; echo "return rc=$? $(el)"
tar czf $OUT/c4.tgz -C $OUT c4 && rm -rf $R
echo "done $(el)"
