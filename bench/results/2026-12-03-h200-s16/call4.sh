#!/bin/sh
# Sixteenth session, device call 4: the issue's decode rows on call 3's tuned picks (the database
# call 3 left on the machine), 32K and 128K, lens equal, cold, cuDNN and flash in each run; the
# prefill rows on the law's picks (the law's regret there was 0.00% in the fifteenth session).
set -u
. tests/device/env.sh
DB=out/ab3/c3.ktdb
[ -f $DB ] || { echo "no $DB: call 3's machine is gone"; exit 1; }
R=$OUT/c4; mkdir -p $R
B="timeout 110 python3 tests/device/bench_attn.py --db $DB --lens equal --rounds 11"
OUT=$R $B --tsv g-16-2-256.tsv --dtype bf16,bf16_e4m3 --d 256 --g 8 --hkv 2 --q 1 --batch 8 --ctx 32768,131072 > $R/g-16-2-256.log 2>&1; echo "16/2/256 rc=$? $(el)"
OUT=$R $B --tsv g-spec.tsv --dtype bf16 --d 256 --g 8 --hkv 2 --q 1,4,8 --batch 8 --ctx 32768 > $R/g-spec.log 2>&1; echo "spec rc=$? $(el)"
OUT=$R $B --tsv g-6-1-256.tsv --dtype bf16 --d 256 --g 6 --hkv 1 --q 1 --batch 1,8 --ctx 32768,131072 > $R/g-6-1-256.log 2>&1; echo "6/1/256 rc=$? $(el)"
OUT=$R $B --tsv g-8-4-256.tsv --dtype bf16 --d 256 --g 2 --hkv 4 --q 1 --batch 8 --ctx 32768,131072 > $R/g-8-4-256.log 2>&1; echo "8/4/256 rc=$? $(el)"
OUT=$R $B --tsv g-32-8-128.tsv --dtype bf16,bf16_e4m3 --d 128 --g 4 --hkv 8 --q 1 --batch 8 --ctx 32768,131072 > $R/g-32-8-128.log 2>&1; echo "32/8/128 rc=$? $(el)"
OUT=$R $B --tsv g-b32.tsv --dtype bf16,bf16_e4m3 --d 256 --g 8 --hkv 2 --q 1 --batch 32 --ctx 32768 > $R/g-b32.log 2>&1; echo "b32 rc=$? $(el)"
OUT=$R $B --tsv g-window.tsv --dtype bf16 --d 256 --g 8 --hkv 2 --q 1 --batch 8 --ctx 4096,131072 --window 0,4096 --no-peers > $R/g-window.log 2>&1; echo "window rc=$? $(el)"
grep -h "|" $R/g-*.log | grep -E "^(bf16|fp16)" | cut -c1-150
P="timeout 120 python3 tests/device/bench_prefill.py --lib out/lib/libktrt.so --db $DB --rounds 7"
OUT=$R $P --tsv pf.tsv --geom 32/8/128,6/1/256,8/4/256,16/2/256 --tokens 4096,32768 > $R/pf.log 2>&1; echo "prefill rc=$? $(el)"
grep -h "|" $R/pf.log | grep "^bf16" | cut -c1-175
tail -qn 1 $R/*.log | sort | uniq -c
tar czf $OUT/c4.tgz -C $OUT c4 && rm -rf $R
echo "done $(el)"
