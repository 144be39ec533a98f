#!/bin/sh
# Fortieth session, device call U (~5 minutes, any card): s39's call U (its header: x39k PF 5 at
# ee9cb8a, x39m PF 4 at ee9cb8a, x39n PF 4 at 7e7c837, each bf16 VK 0 BT 64 BV 16 NW 8, built by
# bench/narrow_prefill.sh into out/s39; run with KT_GDNP_WY_PARTS=0, their _wy predating wy's parts),
# wy's parts against wy whole (x40a in out/s40), and Nsight's source counters on PF 4's _wy and state pass (x39m): where
# its stalls sit, line by line, for the next change there. Carry out/lib out/device out/s39 out/s40 (x40a, x40b, x40c).
# $OUT/u1.tgz. out/ is not in git: build the databases here first (bench/narrow_prefill.sh, defaults
# bf16 VK 0 BT 64 BV 16 NW 8; xz -9 each into the folder named):
#   out/s39: x39k `PFS=5` and x39m `PFS=4` at ee9cb8a, x39n `PFS=4` at 7e7c837 (git worktree each);
#   out/s40: x40a `PFS=4` at c3473c0 (a worktree), x40b `PFS=4` in a worktree of s40-mma-inverse,
#            x40c `PFS=4` at main (out's one-round-trip copies).
set -u
# s39's databases predate wy's parts (their _wy ignores chunk_begin): the plan of their day
KT_GDNP_WY_PARTS=0 sh bench/results/2026-12-07-h200-s39/callU.sh
. tests/device/env.sh
call_begin u3
# wy a part at a time beside the state pass (x40a, PF 4 at this session's templates) against wy whole
# ahead of the parts (KT_GDNP_WY_PARTS=0: the plan before), the same kernels, the same rounds
xz -dc out/s40/x40a.ktdb.xz > $W/x40a.ktdb
timeout 120 python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/x40a.ktdb --ab-env KT_GDNP_WY_PARTS=0 --profile \
    --rounds 7 --rows 1x16384/8,1x65536/8,1x4096/8,1x16384/16 > $R/ab-wyparts.log 2>&1
echo "wy parts / whole rc=$? $(el)"
grep -E "^[0-9]+x|--ab" $R/ab-wyparts.log | cut -c1-110
grep -E "kernel" $R/ab-wyparts.log | sed 's/kt_gdn_prefill_[a-z0-9]*_vk[01]_dk[0-9]*_dv[0-9]*_//' | cut -c1-90
# with wy in parts, 4 parts against the law's 8 (a smaller first wy part against fewer waits)
timeout 100 python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/x40a.ktdb --ab-env KT_GDNP_PARTS=4 --profile \
    --rounds 7 --rows 1x16384/8,1x65536/8 > $R/ab-parts4.log 2>&1
echo "8 parts / 4 rc=$? $(el)"
grep -E "^[0-9]+x|--ab" $R/ab-parts4.log | cut -c1-110
# _wy's inverse on the matrix units (x40b, branch s40-mma-inverse: sm_90a only so far, gfx11/12 spill
# SGPRs) against main's substitution (x40a), the same plan, the same rounds
xz -dc out/s40/x40b.ktdb.xz > $W/x40b.ktdb
prefill_ab x40b x40a "1x16384/8,1x65536/8,1x16384/16,8x2048/8"
# out's copies, each tile's loads before its stores and q's with k's, h's with vn's (x40c, main
# after c3473c0's successor) against the pair-at-a-time copies (x40a), the same plan
xz -dc out/s40/x40c.ktdb.xz > $W/x40c.ktdb
prefill_ab x40c x40a "1x16384/8,1x65536/8,1x16384/16,8x2048/8"
call_end u3
call_begin u2
for d in x39m; do xz -dc out/s39/$d.ktdb.xz > $W/$d.ktdb; done
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
export KT_GDNP_PARTS=1 KT_GDNP_WY_PARTS=0
B="python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/x39m.ktdb --rows 1x16384/8 --rounds 1 --launches 1"
timeout 90 $NCU --clock-control none --section SpeedOfLight --section WarpStateStats --section SourceCounters \
    --page source --print-source sass -k regex:"_wy\$" -c 1 $B > $R/ncu-sasswy4.txt 2>&1; echo "ncu sass wy pf4 rc=$? $(el)"
timeout 90 $NCU --clock-control none --section SpeedOfLight --section WarpStateStats --section InstructionStats --section SourceCounters \
    --page source --print-source sass -k regex:"pf4\$" -c 1 $B > $R/ncu-sasspf4.txt 2>&1; echo "ncu sass pf4 rc=$? $(el)"
timeout 60 $NCU --clock-control none --section SpeedOfLight --section WarpStateStats --section SchedulerStats \
    --section MemoryWorkloadAnalysis --section Occupancy --page details -k regex:"_wy\$" -c 1 $B > $R/ncu-wy4.txt 2>&1
echo "ncu wy pf4 rc=$? $(el)"
grep -E "Duration|Executed Ipc A|Warp Cycles Per Issued|Achieved Occ|Memory Throughput|DRAM Throughput|Stall" $R/ncu-wy4.txt | head -12
gzip -9 $R/*.txt
call_end u2
