#!/bin/sh
# Sixteenth session, device call 7: the fp8 / bf16 ratio at 32/8/128 batch 8, whose fp8 row moved
# 150 -> 164 us between call 6 (ab_attn.py) and call 5 (bench_attn.py) on the same kernel: the
# tuned picks (fb64: fp8 BN64 NW4, bf16 KD BN32 NW4 OB4), bench_attn.py with the peers and 21 rounds,
# then without the peers.
set -u
. tests/device/env.sh
R=$OUT/c7; mkdir -p $R
B="timeout 120 python3 tests/device/bench_attn.py --db out/ab4/fb64.ktdb --lens equal --rounds 21 --dtype bf16,bf16_e4m3 --d 128 --g 4 --hkv 8 --q 1 --batch 8 --ctx 32768,131072"
OUT=$R $B --tsv peers.tsv > $R/peers.log 2>&1; echo "peers rc=$? $(el)"
OUT=$R $B --tsv nopeers.tsv --no-peers > $R/nopeers.log 2>&1; echo "no peers rc=$? $(el)"
grep -hE "^(bf16|fp16)|   (ours|cudnn|flash)" $R/peers.log $R/nopeers.log | grep -v "key:" | cut -c1-110
tar czf $OUT/c7.tgz -C $OUT c7 && rm -rf $R
echo "done $(el)"
