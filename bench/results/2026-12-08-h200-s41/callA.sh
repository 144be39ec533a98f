#!/bin/sh
# Forty-first session, device call A (PART=a1, ~5 minutes, any card) and call B (PART=a2, ~5
# minutes); PART=a0 (~1.5 minutes) is a1's first A/B alone. Carry out/lib out/device out/s40
# out/s41. out/ is not in git: build the databases first (bench/narrow_prefill.sh at its
# defaults: bf16 VK 0 BT 64 BV 16 NW 8 PF 4; xz -9 each): out/s41/x41a at 187f38b (the state
# pass's exchange by units), x41b at 37a5db9 (_wy's A dealt 3/3/2/2), x41c at 550157f (_out's P
# dealt the same way), x41d at 0f00364 (PF 4's chunks in pairs, no copy of the next set; the same
# code as main's after kPairs); out/s40/x40a (c3473c0), x40b (branch s40-mma-inverse), x40c
# (3f5d13b: main before this session) as s40's call U says. $OUT/a0.tgz, a1.tgz, a2.tgz.
set -u
. tests/device/env.sh
PART=${PART:-a1}
if [ "$PART" = a0 ]; then   # the short form, for a session's last minutes: the session's whole only
call_begin a0
xz -dc out/s40/x40c.ktdb.xz > $W/x40c.ktdb
xz -dc out/s41/x41d.ktdb.xz > $W/x41d.ktdb
prefill_ab x41d x40c "1x16384/8,1x16384/16,8x2048/8"
call_end a0
exit 0
fi
if [ "$PART" = a1 ]; then
call_begin a1
xz -dc out/s40/x40c.ktdb.xz > $W/x40c.ktdb
for d in x41a x41d; do xz -dc out/s41/$d.ktdb.xz > $W/$d.ktdb; done
# the session's four changes together (x41d) against main before them (x40c), the same plan
prefill_ab x41d x40c "1x16384/8,1x65536/8,1x16384/16,8x2048/8"
# the exchange by units alone (x41a) against whole tiles (x40c)
prefill_ab x41a x40c "1x16384/8,1x16384/16"
# Nsight's SASS source counters (stall samples a line) on x41d's state pass, one part
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
B="python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/x41d.ktdb --rows 1x16384/8 --rounds 1 --launches 1"
KT_GDNP_PARTS=1 KT_GDNP_WY_PARTS=0 timeout 100 $NCU --clock-control none --section SpeedOfLight --section WarpStateStats \
    --section InstructionStats --section SourceCounters --page source --print-source sass -k regex:"pf4\$" -c 1 $B \
    > $R/ncu-sass-state.txt 2>&1; echo "ncu sass state rc=$? $(el)"
gzip -9 $R/*.txt
call_end a1
exit 0
fi
call_begin a2
for d in x40a x40b x40c; do xz -dc out/s40/$d.ktdb.xz > $W/$d.ktdb; done
for d in x41a x41b x41c x41d; do xz -dc out/s41/$d.ktdb.xz > $W/$d.ktdb; done
# _wy's A dealt 3/3/2/2 (x41b) against 4/3/2/1 (x41a); _out's P the same (x41c against x41b); PF
# 4's chunks in pairs (x41d against x41c)
prefill_ab x41b x41a "1x16384/16,8x2048/8"
prefill_ab x41c x41b "1x16384/16,8x2048/8"
prefill_ab x41d x41c "1x16384/8,1x16384/16"
# out's copies in one round trip (x40c) against a pair of moves at a time (x40a); _wy's inverse
# on the matrix units (x40b) against the substitution (x40a)
prefill_ab x40c x40a "8x2048/8"
prefill_ab x40b x40a "1x16384/16"
# wy a part at a time (the plan now) against wy whole first (KT_GDNP_WY_PARTS=0), x41d's kernels
timeout 60 python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/x41d.ktdb --ab-env KT_GDNP_WY_PARTS=0 --profile \
    --rounds 7 --rows 1x16384/8,1x4096/8 > $R/ab-wyparts.log 2>&1
echo "wy parts / whole rc=$? $(el)"
grep -E "^[0-9]+x|--ab" $R/ab-wyparts.log | cut -c1-110
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
B="python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/x41d.ktdb --rows 1x16384/8 --rounds 1 --launches 1"
KT_GDNP_PARTS=1 KT_GDNP_WY_PARTS=0 timeout 100 $NCU --clock-control none --section SpeedOfLight --section WarpStateStats \
    --section SourceCounters --page source --print-source sass -k regex:"_wy\$" -c 1 $B \
    > $R/ncu-sass-wy.txt 2>&1; echo "ncu sass wy rc=$? $(el)"
gzip -9 $R/*.txt
call_end a2
