# scratch: one device call for decode_ws (not committed)
export LD_LIBRARY_PATH=out/device/lib
B="python3 tests/device/bench_attn.py"
for n in nw2 nw4; do
  DB=out/ws/$n.ktdb
  timeout 60 $B --db $DB --check-only --dtype bf16,fp16 --d 128 --g 4 --hkv 2 --q 1,3 --batch 1,5 --ctx 100,1500 --window 0,64 --softcap 0,30 --sinks 0,1 > $OUT/check-$n-d128.txt 2>&1
  timeout 60 $B --db $DB --check-only --dtype bf16 --d 256 --g 8 --hkv 2 --q 1,4 --batch 3 --ctx 777,5000 --sinks 0,1 > $OUT/check-$n-d256.txt 2>&1
  OUT=$OUT timeout 60 $B --db $DB --lens equal --rounds 9 --dtype bf16 --d 128 --g 4 --hkv 8 --q 1 --batch 8 --ctx 32768 --tsv t-$n-d128.tsv > $OUT/bench-$n-d128.txt 2>&1
  OUT=$OUT timeout 60 $B --db $DB --lens equal --rounds 9 --dtype bf16 --d 256 --g 8 --hkv 2 --q 1 --batch 1,8 --ctx 32768 --tsv t-$n-d256.tsv > $OUT/bench-$n-d256.txt 2>&1
  OUT=$OUT timeout 40 $B --db $DB --lens equal --rounds 9 --dtype bf16 --d 256 --g 6 --hkv 1 --q 1 --batch 1 --ctx 32768 --tsv t-$n-b1.tsv > $OUT/bench-$n-b1.txt 2>&1
done
cd $OUT && tar czf /tmp/ws.tgz . && rm -rf ./* && mv /tmp/ws.tgz . && echo done
